"""Bridges from a TACO dataset to the EO and ML catalogues: STAC and Croissant."""
