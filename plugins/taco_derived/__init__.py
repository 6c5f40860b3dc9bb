"""Kept for plugins written against it: the helpers now live in :mod:`taco_gdal.containers`.

Formats that carry no TACO metadata (CAF, TARIDX) derive a COLLECTION
(:func:`derived_collection`) and convert to a TACO ZIP (:func:`to_taco`); both
are part of the public plugin contract, :mod:`taco_gdal.containers`.
"""

from __future__ import annotations

from taco_gdal.containers import core_fields, dataset_id, derived_collection, sample_id, to_taco

__all__ = ["core_fields", "dataset_id", "derived_collection", "sample_id", "to_taco"]
