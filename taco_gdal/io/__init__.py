"""Byte-range access through GDAL's VSI layer: local files, /vsicurl/, /vsis3/, ...

All bytes taco_gdal reads, metadata included, travel through here, so one set of
GDAL config options and credentials serves metadata and pixels alike.
"""
