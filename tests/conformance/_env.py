"""Environment helpers shared by the conformance fixtures and scripts/make_golden.py."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil

__all__ = ["install_spatial_extension", "spatial_extension_file"]

DUCKDB_PLATFORM = "linux_amd64"


def spatial_extension_file(duckdb_version: str) -> pathlib.Path:
    """``spatial.duckdb_extension`` shipped by the ``duckdb-extension-spatial`` wheel.

    Raises:
        FileNotFoundError: the wheel is not installed or lacks that DuckDB version.
    """
    spec = importlib.util.find_spec("duckdb_extension_spatial")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "package duckdb_extension_spatial is not installed; "
            f"expected duckdb-extension-spatial=={duckdb_version}"
        )
    root = pathlib.Path(next(iter(spec.submodule_search_locations)))
    found = root / "extensions" / f"v{duckdb_version}" / "spatial.duckdb_extension"
    if not found.is_file():
        raise FileNotFoundError(f"expected {found} in duckdb_extension_spatial, not found")
    return found


def install_spatial_extension(home: pathlib.Path | None = None) -> pathlib.Path:
    """Copy the spatial extension where ``INSTALL spatial`` finds it offline.

    tacoreader runs ``INSTALL spatial; LOAD spatial`` on every DuckDB connection;
    without network the install fails silently and spatial filters then raise.
    DuckDB looks in ``~/.duckdb/extensions/v{version}/{platform}/`` first.

    Returns:
        The installed file.

    Example:
        >>> install_spatial_extension()  # doctest: +SKIP
        PosixPath('/root/.duckdb/extensions/v1.5.5/linux_amd64/spatial.duckdb_extension')
    """
    import duckdb

    version = duckdb.__version__
    source = spatial_extension_file(version)
    target_dir = (home or pathlib.Path.home()) / ".duckdb" / "extensions" / f"v{version}"
    target = target_dir / DUCKDB_PLATFORM / source.name
    if not target.is_file() or target.stat().st_size != source.stat().st_size:
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        shutil.copyfile(source, partial)
        partial.replace(target)
    return target
