"""Helpers shared by the tests, the benchmarks and the scripts: real datasets, real servers on
127.0.0.1, digests computed independently, fork probes."""
