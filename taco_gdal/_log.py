"""Package logging: a NullHandler on the package logger and the ``verbose`` switch."""

from __future__ import annotations

import logging
from typing import Literal

PACKAGE_LOGGER = logging.getLogger("taco_gdal")
PACKAGE_LOGGER.addHandler(logging.NullHandler())

_HANDLER_NAME = "taco_gdal.verbose"

VerboseLevel = bool | Literal["info", "debug"]


def verbose(level: VerboseLevel = True) -> None:
    """Turn taco_gdal's log output on or off for the whole process.

    Args:
        level: ``True`` or ``"info"`` shows progress (files loaded, views built),
            ``"debug"`` adds internals (SQL text, offsets), ``False`` silences
            everything again.

    Example:
        >>> import taco_gdal
        >>> taco_gdal.verbose("debug")
        >>> taco_gdal.verbose(False)
    """
    for handler in list(PACKAGE_LOGGER.handlers):
        if handler.get_name() == _HANDLER_NAME:
            PACKAGE_LOGGER.removeHandler(handler)
    if level is False:
        PACKAGE_LOGGER.setLevel(logging.WARNING)
        return
    if level is True or level == "info":
        numeric = logging.INFO
    elif level == "debug":
        numeric = logging.DEBUG
    else:
        raise ValueError(
            f"verbose level must be one of True, False, 'info', 'debug'; got {level!r}"
        )
    handler = logging.StreamHandler()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    PACKAGE_LOGGER.addHandler(handler)
    PACKAGE_LOGGER.setLevel(numeric)
