"""Every name in taco_gdal.__all__ resolves (lazy entry points included)."""

from __future__ import annotations

import taco_gdal


def test_every_public_name_resolves():
    missing = [name for name in taco_gdal.__all__ if not hasattr(taco_gdal, name)]
    assert missing == []


def test_errors_inherit_builtins():
    assert issubclass(taco_gdal.TacoFormatError, ValueError)
    assert issubclass(taco_gdal.TacoIOError, OSError)
    assert issubclass(taco_gdal.TacoNavigationError, KeyError)
    assert issubclass(taco_gdal.TacoExistsError, FileExistsError)
    assert str(taco_gdal.TacoNavigationError("no sample 'x'")) == "no sample 'x'"
    for name in taco_gdal.__all__:
        obj = getattr(taco_gdal, name)
        if isinstance(obj, type) and issubclass(obj, Exception) and not issubclass(obj, Warning):
            assert issubclass(obj, taco_gdal.TacoError), name


def test_verbose_switch(caplog):
    import logging

    taco_gdal.verbose("debug")
    assert logging.getLogger("taco_gdal").level == logging.DEBUG
    taco_gdal.verbose(False)
    assert logging.getLogger("taco_gdal").level == logging.WARNING
    try:
        taco_gdal.verbose("loud")  # type: ignore[arg-type]
    except ValueError as exc:
        assert "must be one of" in str(exc)
    else:
        raise AssertionError("verbose('loud') must raise")
