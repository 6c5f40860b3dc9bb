"""Split sample extension: which partition (train/test/validation) a sample belongs to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions.base import SampleExtension

if TYPE_CHECKING:
    from taco_gdal.model.sample import Sample

__all__ = ["SPLITS", "Split", "SplitName"]

SplitName = Literal["train", "test", "validation"]
SPLITS: Final[tuple[str, ...]] = get_args(SplitName)


@dataclass(frozen=True)
class Split(SampleExtension):
    """The ``split`` field.

    Example:
        >>> Split("train").get_schema()
        {'split': DataType(string)}
    """

    split: SplitName | None = None
    schema_only: bool = False

    def __post_init__(self) -> None:
        if not self.schema_only and self.split not in SPLITS:
            raise TacoValidationError(
                f"Split.split: must be one of {', '.join(SPLITS)}; found {self.split!r}"
            )

    def get_schema(self) -> dict[str, pa.DataType]:
        return {"split": pa.string()}

    def get_field_descriptions(self) -> dict[str, str]:
        return {"split": "Dataset partition: train, test or validation."}

    def _compute(self, sample: Sample) -> pa.Table:
        return pa.table({"split": pa.array([self.split], pa.string())})
