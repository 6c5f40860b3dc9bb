"""The one error handler of the ``taco`` command: one line, a documented exit code.

Usage errors exit with 2, everything else with 1; ``--debug`` (or ``TACO_DEBUG=1``)
re-raises instead, so Python prints the traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Final, TypeVar

import click

from taco_gdal.errors import TacoError, TacoExistsError, TacoQueryError

__all__ = [
    "DEBUG_KEY",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "PATHS_KEY",
    "exit_code_of",
    "one_line",
    "run_guarded",
]

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
DEBUG_KEY: Final = "taco.debug"
"""``ctx.meta`` key: the verb was given ``--debug``."""
PATHS_KEY: Final = "taco.paths"
"""``ctx.meta`` key: the files the verb was given (named in error lines)."""

_USAGE_ERRORS: Final = (TacoQueryError, TacoExistsError)
_API_OVERWRITE_HINT: Final = "; pass overwrite=True to replace it"
"""The Python caller's hint in the writers' TacoExistsError; the CLI names --overwrite."""
T = TypeVar("T")


def exit_code_of(exc: BaseException) -> int:
    """The exit code for an exception (2 usage, 1 everything else).

    Example:
        >>> exit_code_of(TacoQueryError("bad SQL")), exit_code_of(OSError("gone"))
        (2, 1)
    """
    if isinstance(exc, (click.UsageError, *_USAGE_ERRORS)):
        return EXIT_USAGE
    return EXIT_FAILED


def _message(exc: BaseException) -> str:
    if isinstance(exc, click.ClickException):
        return exc.format_message()
    if isinstance(exc, OSError) and not isinstance(exc, TacoError) and exc.filename:
        return f"{exc.strerror or exc}: {exc.filename}"
    return str(exc) or repr(exc)


def one_line(exc: BaseException, verb: str, paths: list[str]) -> str:
    """The error line printed for ``exc`` raised by ``taco <verb>``.

    Example:
        >>> one_line(TacoQueryError("no column 'x'\\nin level0"), "sql", ["a.tacozip"])
        "taco sql: TacoQueryError: no column 'x' | in level0 (file: a.tacozip)"
    """
    text = " | ".join(line.strip() for line in _message(exc).splitlines() if line.strip())
    if isinstance(exc, click.UsageError):
        name = "usage error"
        hint = f" (see: taco {verb} --help)" if verb else " (see: taco --help)"
        return f"taco{' ' + verb if verb else ''}: {name}: {text}{hint}"
    name = type(exc).__name__
    if not isinstance(exc, TacoError | OSError | click.ClickException):
        text = f"unexpected error (a bug: please report it with --debug output): {text}"
    if isinstance(exc, TacoExistsError):
        text = text.replace(_API_OVERWRITE_HINT, "") + " (add --overwrite to replace it)"
    named = [p for p in paths if p and p not in text]
    if named and len(named) == len(paths):
        text += f" (file: {', '.join(named)})"
    return f"taco{' ' + verb if verb else ''}: {name}: {text}"


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.meta.get(DEBUG_KEY)) or os.environ.get("TACO_DEBUG", "") not in ("", "0")


def run_guarded(ctx: click.Context, invoke: Callable[[], T]) -> T:
    """Run a group's ``invoke``; turn any error into one line and an exit code."""
    try:
        return invoke()
    except (click.exceptions.Exit, click.Abort, KeyboardInterrupt):
        raise
    except BrokenPipeError as exc:  # `taco ls ... | head`: the reader left, nothing to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush is quiet
        raise click.exceptions.Exit(EXIT_OK) from exc
    except Exception as exc:
        if _debug(ctx):
            raise
        verb = ctx.invoked_subcommand or ""
        paths: list[Any] = list(ctx.meta.get(PATHS_KEY, []))
        click.echo(one_line(exc, verb, [str(p) for p in paths]), err=True)
        raise click.exceptions.Exit(exit_code_of(exc)) from exc
