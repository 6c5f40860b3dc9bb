"""Publications taco extension: papers and reports that describe or use the dataset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import pyarrow as pa

from taco_gdal.errors import TacoValidationError
from taco_gdal.extensions.base import TacoExtension, coerce_items

if TYPE_CHECKING:
    from taco_gdal.model.taco import Taco

__all__ = ["Publication", "Publications"]

_PUBLICATION: Final = pa.struct(
    [("doi", pa.string()), ("citation", pa.string()), ("summary", pa.string())]
)


@dataclass(frozen=True)
class Publication:
    """A DOI, a formatted citation and an optional one-line summary."""

    doi: str
    citation: str
    summary: str | None = None

    def __post_init__(self) -> None:
        for name in ("doi", "citation"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise TacoValidationError(
                    f"Publication.{name}: expected a non-empty string, found {value!r}"
                )


@dataclass(frozen=True)
class Publications(TacoExtension):
    """``publications``: a list of ``{doi, citation, summary}``.

    Example:
        >>> Publications([Publication("10.1/x", "A. B. (2024)")]).get_schema()["publications"]
        ListType(list<item: struct<doi: string, citation: string, summary: string>>)
    """

    publications: Sequence[Publication | Mapping[str, str | None]] = ()
    schema_only: bool = False

    def __post_init__(self) -> None:
        items = coerce_items(self.publications, Publication, "Publications")
        object.__setattr__(self, "publications", items)

    def get_schema(self) -> dict[str, pa.DataType]:
        return {"publications": pa.list_(_PUBLICATION)}

    def get_field_descriptions(self) -> dict[str, str]:
        return {"publications": "Publications describing or using the dataset (DOI, citation)."}

    def _compute(self, taco: Taco) -> pa.Table:
        rows = [
            {"doi": p.doi, "citation": p.citation, "summary": p.summary}
            for p in self.publications
            if isinstance(p, Publication)
        ]
        return pa.table({"publications": [rows]}, schema=self.arrow_schema())
