"""Long fuzz run, outside CI: N mutated files per parser through the real loader.

Usage::

    .venv/bin/python -m scripts.fuzz 100000                 # every parser
    .venv/bin/python -m scripts.fuzz 100000 parquet caf     # some parsers
    .venv/bin/python -m scripts.fuzz 100000 --seconds 3600  # stop each parser after an hour

Each case mutates 1-6 random bytes of the parser's region (and truncates the
file in one case out of five) -- or, for the structured targets (``folder_json``,
``tacocat_json``, ``caf_json``, ``wkb``, ``parquet_pages``, ``taridx_names``, see
``tests/fuzz/_targets.py``), rewrites a JSON document, WKB values, Parquet pages
or tar member names from the same random pairs -- then loads the dataset, drives
every public call (``.data``, reprs and HTML views, ``filter_bbox`` /
``filter_datetime`` at levels 0 and 1, ``export``), reads every sample and runs
``verify(level="crc")`` (see ``tests/fuzz/_harness.py``).
Prints one JSON line per parser with the count of each outcome; an exception
that is not a TacoError, or wrong bytes from a file that verifies clean, is
counted as ``BUG`` with the reproducing mutation printed to stderr.  The CI
runs the same harness through Hypothesis with a few dozen cases per parser.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

from tests.fuzz._harness import make_targets, run_mutation
from tests.fuzz._targets import make_structured_targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", type=int)
    parser.add_argument("parsers", nargs="*")
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--progress", type=int, default=10_000, help="partial line every N cases")
    parser.add_argument(
        "--slow", type=float, default=1.0, help="print cases slower than this (s) to stderr"
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="taco-fuzz-"))
    targets = {**make_targets(root / "bytes"), **make_structured_targets(root / "structured")}
    rng = random.Random(args.seed)
    bugs = 0
    for name in args.parsers or list(targets):
        target = targets[name]
        start = time.monotonic()
        done = 0
        slowest = 0.0
        for _ in range(args.cases):
            mutation = [
                (rng.randrange(2**20), rng.randrange(256)) for _ in range(rng.randint(1, 6))
            ]
            truncate = rng.randrange(2**20) if rng.random() < 0.2 else None
            began = time.monotonic()
            try:
                run_mutation(target, mutation, truncate)
            except Exception:  # a finding: report it and go on
                bugs += 1
                target.outcomes["BUG"] = target.outcomes.get("BUG", 0) + 1
                print(f"{name}: mutation={mutation} truncate={truncate}", file=sys.stderr)
                traceback.print_exc()
            done += 1
            took = time.monotonic() - began
            slowest = max(slowest, took)
            if took > args.slow:
                print(
                    f"{name}: slow {took:.2f} s mutation={mutation} truncate={truncate}",
                    file=sys.stderr,
                )
            if done % args.progress == 0 and done < args.cases:
                _report(name, done, start, slowest, target.outcomes, None)
            if args.seconds is not None and time.monotonic() - start > args.seconds:
                break
        _report(name, done, start, slowest, target.outcomes, target.calls)
    return 1 if bugs else 0


def _report(
    name: str,
    done: int,
    start: float,
    slowest: float,
    outcomes: dict[str, int],
    calls: dict[str, dict[str, int]] | None,
) -> None:
    """One JSON line: cases run, seconds, the slowest case, the count of each outcome; the
    final line also per public call, how many cases ran it and how many it refused."""
    elapsed = time.monotonic() - start
    line = {
        "parser": name,
        "cases": done,
        "seconds": round(elapsed, 1),
        "slowest_case_s": round(slowest, 3),
        **outcomes,
    }
    if calls is None:
        line["partial"] = True
    else:
        line["calls"] = calls
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
