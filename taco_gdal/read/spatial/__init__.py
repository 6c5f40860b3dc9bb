"""Footprints: WKB decoding, EPSG:4326 bounds, the antimeridian, CRS-correct spatial filters."""
