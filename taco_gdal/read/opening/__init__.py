"""Opening a dataset: where it is (hub ids, paths, URLs) and its containers' metadata."""
