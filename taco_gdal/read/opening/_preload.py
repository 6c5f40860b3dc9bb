"""Import the modules a dataset needs while its metadata is being decoded.

A cold :func:`~taco_gdal.read.load.load` imports pandas, geopandas, shapely and
pyproj (Python, holding the GIL) and decodes the level Parquet (C++, releasing it):
:class:`ImportsBeside` runs the imports on a helper thread meanwhile.  Only
packages the parser never imports are imported there, so the two threads never
wait on each other's module locks; the thread is joined before the ``with`` block
exits, so a process forked after :func:`load` inherits no thread.  A failed import
is left for the caller's own import to raise.
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import TracebackType

__all__ = ["DATASET_MODULES", "ImportsBeside"]

DATASET_MODULES = ("pandas", "shapely", "pyproj", "geopandas")
"""What a dataset's frames need and the metadata parser does not."""


class ImportsBeside:
    """A ``with`` block during which ``modules`` not yet imported are imported on a helper thread.

    Example:
        >>> with ImportsBeside(("json", "csv")):
        ...     total = sum(range(10))
        >>> "csv" in sys.modules
        True
    """

    def __init__(self, modules: tuple[str, ...] = DATASET_MODULES) -> None:
        self._modules = tuple(m for m in modules if m not in sys.modules)
        self._thread: threading.Thread | None = None

    def __enter__(self) -> ImportsBeside:
        if self._modules:
            thread = threading.Thread(
                target=_import_all, args=(self._modules,), name="taco-imports", daemon=True
            )
            try:
                thread.start()
            except RuntimeError:  # no new thread (interpreter shutdown): imported when used
                return self
            self._thread = thread
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def _import_all(modules: tuple[str, ...]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except BaseException:  # the caller's own import raises it, on its thread
            return
