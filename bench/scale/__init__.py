"""Reader scaling table: taco_gdal beside tacoreader at 10k, 100k, 1M (and 10M alone).

``python -m bench.scale`` generates the datasets (cached under the system temp
folder), runs every measure in its own subprocess, interleaving the two readers
round by round, and writes ``bench/results/scale.json`` and ``scale.md``.
``python -m bench.scale.profile`` profiles load and ``.data`` at one size.
"""
