"""Options every verb shares (same names in every verb, as in GDAL's ``gdal``), and
the :func:`verb` decorator that passes them to the verb as one :class:`Common`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from taco_gdal.cli._errors import DEBUG_KEY, PATHS_KEY
from taco_gdal.format.names import CHECKSUM_ALGORITHMS

__all__ = ["Common", "checksum_option", "parse_config", "verb"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Common:
    """The shared options of one verb run (``config``: GDAL options for this command)."""

    json: bool = False
    quiet: bool = False
    progress: bool = False
    overwrite: bool = False
    debug: bool = False
    config: dict[str, str] = field(default_factory=dict)


def parse_config(values: Sequence[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` -> ``{"KEY": "VALUE"}`` (click.BadParameter if malformed)."""
    options: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(
                f"expected KEY=VALUE (a GDAL configuration option), found {item!r}",
                param_hint="--config",
            )
        options[key.strip()] = value
    return options


def checksum_option(fn: F) -> F:
    """``--checksum ALGORITHM``: store a per-sample digest (``taco_gdal:checksum``)."""
    option = click.option(
        "--checksum",
        type=click.Choice(list(CHECKSUM_ALGORITHMS)),
        default=None,
        help="Store a digest of every sample, computed while copying it "
        "(checked by 'taco verify --level full'). crc32c costs least; sha256 "
        "guards against tampering and costs most.",
    )
    return option(fn)


def _remember_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[DEBUG_KEY] = True
    return value


def _shared(writes: bool, json_flag: bool) -> list[Callable[[F], F]]:
    options: list[Callable[[F], F]] = []
    if json_flag:
        options.append(click.option("--json", "json_", is_flag=True, help="Print JSON."))
    options += [
        click.option("-q", "--quiet", is_flag=True, help="Print only the result."),
        click.option(
            "--progress", is_flag=True, help="Show progress bars (on stderr) while working."
        ),
        click.option(
            "--config",
            "config",
            multiple=True,
            metavar="KEY=VALUE",
            help="GDAL configuration option for this command only (repeatable).",
        ),
    ]
    if writes:
        options.append(click.option("--overwrite", is_flag=True, help="Replace existing outputs."))
    options.append(
        click.option(
            "--debug",
            is_flag=True,
            is_eager=True,
            callback=_remember_debug,
            help="Show the Python traceback of an error.",
        )
    )
    return options


def verb(
    name: str,
    *,
    examples: Sequence[str],
    writes: bool = False,
    json_flag: bool = True,
    paths: Sequence[str] = ("path",),
) -> Callable[[Callable[..., None]], click.Command]:
    """Make ``fn(common, **params)`` the click command ``taco <name>``; ``examples`` go in
    ``--help``, ``writes`` adds ``--overwrite``, ``paths`` are quoted in error lines.
    """
    epilog = (
        "\b\nExamples:\n"
        + "\n".join(f"  {line}" for line in examples)
        + "\n\nExit codes: 0 ok, 1 invalid data, failed check or I/O error, 2 usage error."
    )

    def decorate(fn: Callable[..., None]) -> click.Command:
        @functools.wraps(fn)
        def callback(**kwargs: Any) -> None:
            ctx = click.get_current_context()
            named: list[str] = []
            for key in paths:
                value = kwargs.get(key)
                if isinstance(value, list | tuple):
                    named += [str(v) for v in value]
                elif value is not None:
                    named.append(str(value))
            ctx.meta[PATHS_KEY] = named
            common = Common(
                json=bool(kwargs.pop("json_", False)),
                quiet=bool(kwargs.pop("quiet")),
                progress=bool(kwargs.pop("progress")),
                overwrite=bool(kwargs.pop("overwrite", False)),
                debug=bool(kwargs.pop("debug")),
                config=parse_config(kwargs.pop("config")),
            )
            from taco_gdal.env import config_options

            with config_options(common.config):  # thread-local, exactly these options
                fn(common, **kwargs)

        command: Callable[..., Any] = callback
        for option in reversed(_shared(writes, json_flag)):
            command = option(command)
        return click.command(
            name, help=fn.__doc__, epilog=epilog, context_settings={"show_default": True}
        )(command)

    return decorate
