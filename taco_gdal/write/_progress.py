"""Progress bars for long work: a terminal bar, or Jupyter's widget when it can be drawn.

``tqdm.auto`` warns "IProgress not found" in every cell when ``ipywidgets`` is
missing; here the widget is used only when it can be drawn, and outside a
notebook the bar shows only when stderr is a terminal.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any, Protocol, cast

__all__ = ["Bar", "QuietBar", "in_notebook", "progress_bar", "widgets_available"]


class Bar(Protocol):
    """What writers use of a progress bar (tqdm's interface)."""

    disable: bool

    def update(self, n: float = 1) -> bool | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Bar: ...

    def __exit__(self, *exc: object) -> None: ...


class QuietBar:
    """A progress bar that is off: counts nothing, shows nothing, imports nothing."""

    disable = True

    def update(self, n: float = 1) -> bool | None:
        return None

    def close(self) -> None:
        return None

    def __enter__(self) -> QuietBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's ZMQ shell), False in a terminal or a script."""
    shell_module = sys.modules.get("IPython")
    if shell_module is None:
        return False
    get_ipython = getattr(shell_module, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def widgets_available() -> bool:
    """True when ``ipywidgets`` can be imported (tqdm's notebook bar needs it)."""
    return importlib.util.find_spec("ipywidgets") is not None


def progress_bar(total: int | None, desc: str, quiet: bool, unit: str = "B") -> Bar:
    """A tqdm bar: off when ``quiet``; the widget form only in Jupyter with ipywidgets."""
    notebook = in_notebook()
    if quiet or not (notebook or sys.stderr.isatty()):
        return QuietBar()
    options: dict[str, Any] = {
        "total": total,
        "desc": desc,
        "unit": unit,
        "unit_scale": unit == "B",
        "unit_divisor": 1024,
        "leave": False,
    }
    if notebook and widgets_available():
        from tqdm.notebook import tqdm as widget_tqdm

        return cast(Bar, widget_tqdm(**options))
    from tqdm.std import tqdm as text_tqdm

    return cast(Bar, text_tqdm(dynamic_ncols=True, **options))
