"""Progress bars never warn, and use the plain bar outside Jupyter."""

from __future__ import annotations

import sys
import warnings

from tqdm.std import tqdm as text_tqdm

from taco_gdal.write._progress import in_notebook, progress_bar


def test_outside_a_notebook_the_plain_bar_follows_the_terminal() -> None:
    assert not in_notebook()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = progress_bar(3, "x", quiet=False, unit="file")
        assert type(bar) is text_tqdm
        assert bar.disable == (not sys.stderr.isatty())
        bar.update(3)
        bar.close()
        assert progress_bar(3, "x", quiet=True).disable
