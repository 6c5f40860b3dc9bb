"""The data model: Sample, Tortilla, Taco, the PIT rules and COLLECTION.json.

``Taco(...).metadata()`` returns the :class:`MetadataPackage` every writer consumes.
"""

from __future__ import annotations

from taco_gdal.model._collection_rules import TASKS, TaskType
from taco_gdal.model.collection import collection_json_bytes
from taco_gdal.model.contacts import Curator, Provider
from taco_gdal.model.extent import Extent
from taco_gdal.model.package import MetadataPackage
from taco_gdal.model.sample import Sample
from taco_gdal.model.taco import Taco
from taco_gdal.model.tortilla import Tortilla

__all__ = [
    "TASKS",
    "Curator",
    "Extent",
    "MetadataPackage",
    "Provider",
    "Sample",
    "Taco",
    "TaskType",
    "Tortilla",
    "collection_json_bytes",
]
