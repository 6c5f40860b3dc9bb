"""Who made and who curated a dataset: ``Provider`` and ``Curator`` (COLLECTION.json)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

from taco_gdal.errors import TacoValidationError

__all__ = ["Curator", "Provider", "contact_list"]


def _optional_str(owner: str, name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TacoValidationError(
            f"{owner}.{name}: expected a string or None, found {type(value).__name__} {value!r}"
        )


@dataclass(frozen=True)
class Provider:
    """A person or organisation that produced, processed or hosts the data (STAC-like).

    Example:
        >>> Provider("ESA", roles=["producer"], url="https://esa.int").to_dict()["name"]
        'ESA'
    """

    name: str
    roles: Sequence[str] | None = None
    url: str | None = None
    links: Sequence[Mapping[str, str]] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TacoValidationError(
                f"Provider.name: expected a non-empty string, found {self.name!r}"
            )
        _optional_str("Provider", "url", self.url)
        if self.url and not self.url.startswith(("http://", "https://")):
            raise TacoValidationError(
                f"Provider.url: expected an http:// or https:// URL, found {self.url!r}"
            )
        if self.roles is not None and (
            isinstance(self.roles, str) or not all(isinstance(r, str) for r in self.roles)
        ):
            raise TacoValidationError(
                f"Provider.roles: expected a list of strings, found {self.roles!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """``{name, roles, url, links}`` with ``None`` for unset fields."""
        out = asdict(self)
        out["roles"] = None if self.roles is None else list(self.roles)
        out["links"] = None if self.links is None else [dict(link) for link in self.links]
        return out


@dataclass(frozen=True)
class Curator:
    """A person or organisation that turned the data into a TACO dataset.

    Example:
        >>> Curator(name="Ana", email="ana@example.org").to_dict()
        {'name': 'Ana', 'organization': None, 'email': 'ana@example.org', 'role': None}
    """

    name: str | None = None
    organization: str | None = None
    email: str | None = None
    role: str | None = None

    def __post_init__(self) -> None:
        for item in fields(self):
            _optional_str("Curator", item.name, getattr(self, item.name))
        if not self.name and not self.organization:
            raise TacoValidationError("Curator: expected a name or an organization, found neither")
        if self.email and "@" not in self.email:
            raise TacoValidationError(
                f"Curator.email: expected an address with '@', found {self.email!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """``{name, organization, email, role}`` with ``None`` for unset fields."""
        return asdict(self)


def contact_list(
    key: str, values: object, kind: type[Provider] | type[Curator]
) -> list[dict[str, Any]]:
    """Providers/curators (models or dicts) checked, in COLLECTION.json form.

    Provider dicts may also carry the Curator keys (spec-style), which are kept.
    """
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Sequence):
        raise TacoValidationError(
            f"{key}: expected a list of {kind.__name__} or dicts, found {values!r}"
        )
    known = {item.name for item in fields(kind)}
    extra_allowed = {item.name for item in fields(Curator)} - known if kind is Provider else set()
    out: list[dict[str, Any]] = []
    for position, value in enumerate(values):
        if isinstance(value, kind):
            out.append(value.to_dict())
            continue
        if not isinstance(value, Mapping):
            raise TacoValidationError(
                f"{key}[{position}]: expected a {kind.__name__} or a dict, found {value!r}"
            )
        unknown = set(value) - known - extra_allowed
        if unknown:
            raise TacoValidationError(
                f"{key}[{position}]: unknown keys {sorted(unknown)}; expected keys among "
                f"{sorted(known | extra_allowed)}"
            )
        extras = {k: value[k] for k in value if k in extra_allowed}
        for name, extra in extras.items():
            _optional_str(f"{key}[{position}]", name, extra)
        try:
            model = kind(**{k: value[k] for k in value if k in known})
        except (TypeError, TacoValidationError) as exc:
            raise TacoValidationError(f"{key}[{position}]: {exc}") from exc
        out.append({**model.to_dict(), **extras})
    return out
