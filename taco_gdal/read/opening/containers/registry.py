"""Which container formats the reader knows: built-ins plus entry-point plugins.

Plugins declare a class satisfying :class:`taco_gdal.containers.Container` under
the entry point group ``taco_gdal.containers``::

    [project.entry-points."taco_gdal.containers"]
    caf = "my_plugin.caf:CafContainer"
"""

from __future__ import annotations

import functools
import logging
from importlib.metadata import entry_points

from taco_gdal.errors import TacoFormatError, TacoIOError
from taco_gdal.read.opening.containers.base import Container, Probe
from taco_gdal.read.opening.containers.folder import FolderContainer
from taco_gdal.read.opening.containers.tacocat import TacoCatContainer
from taco_gdal.read.opening.containers.zip import ZipContainer

__all__ = ["ENTRY_POINT_GROUP", "available", "detect", "register"]

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "taco_gdal.containers"
BUILTINS: tuple[type[Container], ...] = (TacoCatContainer, ZipContainer, FolderContainer)
_EXTRA: dict[str, type[Container]] = {}
_REQUIRED = ("format", "priority", "claims", "detect", "open")


def _valid(candidate: object, origin: str) -> bool:
    missing = [name for name in _REQUIRED if not hasattr(candidate, name)]
    if missing or not isinstance(candidate, type):
        log.warning(
            "container %s ignored: not a class with %s (missing %s)", origin, _REQUIRED, missing
        )
        return False
    return True


@functools.cache
def _from_entry_points() -> tuple[type[Container], ...]:
    found: list[type[Container]] = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            candidate = point.load()
        except Exception as exc:  # a broken plugin must not stop the built-in formats
            log.warning(
                "container plugin %s = %s cannot be imported: %s", point.name, point.value, exc
            )
            continue
        if _valid(candidate, f"{point.name} = {point.value}"):
            found.append(candidate)
    return tuple(found)


def register(container: type[Container]) -> None:
    """Make a container class known in this process (in addition to entry points).

    Example:
        >>> from taco_gdal.read.opening.containers.zip import ZipContainer
        >>> register(ZipContainer)
    """
    if _valid(container, repr(container)):
        _EXTRA[container.format] = container


def available() -> tuple[type[Container], ...]:
    """Every known container class, in the order detection asks them."""
    by_format: dict[str, type[Container]] = {c.format: c for c in BUILTINS}
    for container in (*_from_entry_points(), *_EXTRA.values()):
        by_format[container.format] = container
    return tuple(sorted(by_format.values(), key=lambda c: (c.priority, c.format)))


def detect(probe: Probe) -> type[Container]:
    """The container class for ``probe``: by name first, then by content.

    Raises:
        TacoIOError: nothing exists at the location.
        TacoFormatError: something exists but no container recognises it.
    """
    containers = available()
    for container in containers:
        if container.claims(probe):
            return container
    for container in containers:
        if container.detect(probe):
            return container
    exists, is_dir = probe.stat()
    if not exists:
        raise TacoIOError(f"{probe.given}: no such file or folder (GDAL path {probe.path})")
    kind = "folder" if is_dir else f"file starting with {probe.head()[:8]!r}"
    from taco_gdal.read.opening.hub import legacy_hint

    hint = legacy_hint(probe.given)
    if hint is not None:
        raise TacoFormatError(f"{probe.given}: not a TACO dataset (found a {kind}): {hint}")
    raise TacoFormatError(
        f"{probe.given}: not a TACO dataset (found a {kind}); expected a .tacozip/.zip or a "
        "file starting with a TACO_HEADER, a folder with COLLECTION.json, a __TACOCAT__ "
        f"file, a .tacocat folder or a folder containing .tacocat/COLLECTION.json "
        f"(formats known: {[c.format for c in containers]})"
    )
