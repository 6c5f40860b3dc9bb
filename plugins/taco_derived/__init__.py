"""Shared by the container plugins whose formats carry no TACO metadata (CAF, TARIDX).

Such a container lists members and byte ranges, nothing else, so the plugin
*derives* what the reader needs: a COLLECTION (:func:`derived_collection`) and,
for conversion, a :class:`~taco_gdal.model.Taco` written as a TACO ZIP
(:func:`to_taco`).  Only public taco_gdal modules are used, the way an
out-of-tree plugin would.
"""

from __future__ import annotations

from taco_derived.collection import core_fields, dataset_id, derived_collection
from taco_derived.convert import sample_id, to_taco

__all__ = ["core_fields", "dataset_id", "derived_collection", "sample_id", "to_taco"]
