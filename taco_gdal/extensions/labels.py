"""Labels taco extension: the classes of a classification/segmentation dataset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions.base import TacoExtension, coerce_items

if TYPE_CHECKING:
    from taco_gdal.model.taco import Taco

__all__ = ["LabelClass", "Labels"]

_CLASS: Final = pa.struct(
    [("name", pa.string()), ("category", pa.string()), ("description", pa.string())]
)


@dataclass(frozen=True)
class LabelClass:
    """One class: a name, the value used in masks/labels (stored as a string), a description."""

    name: str
    category: str | int
    description: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TacoValidationError(
                f"LabelClass.name: expected a non-empty string, found {self.name!r}"
            )


@dataclass(frozen=True)
class Labels(TacoExtension):
    """``labels:classes`` (list of ``{name, category, description}``), ``labels:description``
    and ``labels:num_classes``.

    Example:
        >>> Labels([LabelClass("water", 0), {"name": "land", "category": 1}]).get_schema()[
        ...     "labels:num_classes"]
        DataType(int32)
    """

    label_classes: Sequence[LabelClass | Mapping[str, object]] = ()
    label_description: str | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        classes = coerce_items(self.label_classes, LabelClass, "Labels.label_classes")
        if not classes and not self.schema_only:
            raise TacoValidationError("Labels: expected at least one label class")
        names = [c.name for c in classes]
        if len(set(names)) != len(names):
            raise TacoValidationError(f"Labels: class names must be unique, found {names}")
        object.__setattr__(self, "label_classes", classes)

    def get_schema(self) -> dict[str, pa.DataType]:
        return {
            "labels:classes": pa.list_(_CLASS),
            "labels:description": pa.string(),
            "labels:num_classes": pa.int32(),
        }

    def get_field_descriptions(self) -> dict[str, str]:
        return {
            "labels:classes": "Class definitions: name, category (label value) and description.",
            "labels:description": "How the labels were made.",
            "labels:num_classes": "Number of classes.",
        }

    def _compute(self, taco: Taco) -> pa.Table:
        classes = [
            {"name": c.name, "category": str(c.category), "description": c.description}
            for c in self.label_classes
            if isinstance(c, LabelClass)
        ]
        return pa.table(
            {
                "labels:classes": [classes],
                "labels:description": [self.label_description],
                "labels:num_classes": [len(classes)],
            },
            schema=self.arrow_schema(),
        )
