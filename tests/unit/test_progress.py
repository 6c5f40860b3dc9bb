"""Progress bars never warn, and use the plain bar outside Jupyter."""

from __future__ import annotations

import sys
import warnings

from tqdm.std import tqdm as text_tqdm

from taco_gdal.write._progress import QuietBar, in_notebook, progress_bar


def test_outside_a_notebook_the_plain_bar_follows_the_terminal() -> None:
    assert not in_notebook()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bar = progress_bar(3, "x", quiet=False, unit="file")
        assert bar.disable == (not sys.stderr.isatty())
        # a bar that is off is a QuietBar: tqdm is imported only for a bar that is shown
        assert type(bar) is (QuietBar if bar.disable else text_tqdm)
        bar.update(3)
        bar.close()
        assert progress_bar(3, "x", quiet=True).disable
