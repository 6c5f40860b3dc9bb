"""Remote-read benchmark: taco_gdal vs tacoreader + rasterio vs GDAL /vsizip/.

Run ``.venv/bin/python -m bench.remote``; see :mod:`bench.remote.__main__`.
"""
