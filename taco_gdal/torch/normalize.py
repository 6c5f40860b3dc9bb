"""Normalize: a per-band ``(x - shift) / scale`` transform built from a view's statistics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from taco_gdal.errors import TacoQueryError
from taco_gdal.torch.dataset import IMAGE

if TYPE_CHECKING:
    from taco_gdal.read.dataset import TacoDataset

__all__ = ["Normalize"]

SPAN_FRACTION = 0.01
"""``expected_range`` check: the statistics must span at least this part of the range."""


def _pair(values: object) -> bool:
    """Whether ``values`` is two real numbers."""
    return (
        isinstance(values, Sequence)
        and len(values) == 2
        and all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in values)
    )


def _check_range(
    low: np.ndarray, high: np.ndarray, expected: tuple[float, float], where: str
) -> None:
    if not _pair(expected) or not expected[0] < expected[1]:
        raise TacoQueryError(f"{where}: expected_range expected (low, high), found {expected!r}")
    lo, hi = float(expected[0]), float(expected[1])
    found = f"statistics span {float(low.min()):g}..{float(high.max()):g}"
    if low.min() < lo or high.max() > hi:
        raise TacoQueryError(
            f"{where}: expected pixel values in {lo:g}..{hi:g} (expected_range), but the "
            f"{found}: the images are on another scale than the statistics"
        )
    if high.max() - low.min() < SPAN_FRACTION * (hi - lo):
        raise TacoQueryError(
            f"{where}: expected pixel values spanning {lo:g}..{hi:g} (expected_range), but the "
            f"{found}, under {SPAN_FRACTION:.0%} of it: the values look already rescaled"
        )


class Normalize(torch.nn.Module):
    """``(x - shift) / scale`` per band of an item's image (or of a tensor), then clamped.

    Bands are the third axis from the end, so a ``(bands, y, x)`` item image and a
    ``(batch, bands, y, x)`` batch both work; integer pixels become float32.  Usable as
    ``SampleDataset(transform=...)``: a dict item gets its ``key`` entry normalized
    (the other entries are kept), a tensor is normalized as is.

    Args:
        shift: one value per band, subtracted.
        scale: one value per band, divided by (non-zero).
        clamp: ``(low, high)`` bounds of the output, or None.
        key: the item entry holding the image.

    Raises:
        TacoQueryError: ``shift`` and ``scale`` differ in length, a value is not
            finite or a scale is 0.
    """

    shift: torch.Tensor
    scale: torch.Tensor

    def __init__(
        self,
        shift: Sequence[float],
        scale: Sequence[float],
        clamp: tuple[float, float] | None = None,
        key: str = IMAGE,
    ) -> None:
        super().__init__()
        shifts = torch.as_tensor(np.asarray(shift, dtype=np.float64)).reshape(-1, 1, 1)
        scales = torch.as_tensor(np.asarray(scale, dtype=np.float64)).reshape(-1, 1, 1)
        finite = bool(torch.isfinite(shifts).all() and torch.isfinite(scales).all())
        if shifts.shape != scales.shape or not finite or bool((scales == 0).any()):
            raise TacoQueryError(
                "Normalize: expected as many finite shifts as finite non-zero scales (a band "
                f"without valid pixels or spread has none), found shift={shift!r}, "
                f"scale={scale!r}"
            )
        self.register_buffer("shift", shifts)
        self.register_buffer("scale", scales)
        self.clamp = clamp
        self.key = key

    @classmethod
    def from_dataset(
        cls,
        ds: TacoDataset,
        bands: int | Sequence[int] | None = None,
        method: Literal["meanstd", "percentile"] = "meanstd",
        q: tuple[float, float] = (2, 98),
        *,
        level: int = 0,
        expected_range: tuple[float, float] | None = None,
        physical: bool = False,
        key: str = IMAGE,
    ) -> Normalize:
        """The transform of the valid pixels of ``ds`` (its current, filtered view).

        ``"meanstd"`` gives ``(x - mean) / std``; ``"percentile"`` gives
        ``(x - p_low) / (p_high - p_low)`` clamped to 0..1, with ``q = (low, high)``
        taken from the merged sketches (:meth:`~taco_gdal.TacoDataset.stats`).

        Two checks refuse statistics on another scale than the pixels the transform
        will see.  ``expected_range=(low, high)`` states the range of those pixels
        (e.g. ``(0, 255)``, ``(0, 10000)``): the statistics' min and max must lie in it
        and span at least :data:`SPAN_FRACTION` of it, so reflectances up to 10000
        against ``(0, 255)``, or values already divided by 255 against ``(0, 255)``,
        are refused.  And rows with ``scaling:*`` (statistics in physical values, while
        ``SampleDataset`` yields stored ones) are refused unless ``physical=True``
        says the images are converted to physical values before this transform.

        Args:
            ds: the dataset, filtered to the samples trained on.
            bands: 0-based bands in the order of the image's band axis (default: all).
            method: ``"meanstd"`` or ``"percentile"``.
            q: the low and high percentiles of ``"percentile"``.
            level: the level whose samples are the items.
            expected_range: the range of the pixel values the transform will see.
            physical: the transform sees physical values (``scaling:*`` applied).
            key: the item entry holding the image.

        Raises:
            TacoQueryError: an unknown method, a ``q`` that is not two increasing
                percentiles, a failed scale check, a band with zero spread, or what
                :meth:`~taco_gdal.TacoDataset.stats` raises.

        Example:
            >>> from taco_gdal.torch import Normalize, SampleDataset
            >>> train = ds.sql("SELECT * FROM data WHERE split = 'train'")
            >>> items = SampleDataset(train, transform=Normalize.from_dataset(train))
            >>> items[0]["image"].dtype
            torch.float32
        """
        where = f"Normalize.from_dataset({ds.state.path!s})"
        if method not in ("meanstd", "percentile"):
            raise TacoQueryError(
                f"{where}: method expected 'meanstd' or 'percentile', found {method!r}"
            )
        if not _pair(q) or not q[0] < q[1]:
            raise TacoQueryError(f"{where}: q expected (low, high) percentiles, found {q!r}")
        chosen = [bands] if isinstance(bands, int) else bands
        stats = ds.stats(chosen, q if method == "percentile" else (), level)
        if stats.physical and not physical:
            raise TacoQueryError(
                f"{where}: the statistics are physical values (rows have scaling:scale_factor "
                "or scaling:scale_offset) but SampleDataset yields stored values; apply the "
                "scaling to the images first and pass physical=True"
            )
        if expected_range is not None:
            _check_range(stats.min, stats.max, expected_range, where)
        if method == "meanstd":
            return cls(stats.mean.tolist(), stats.std.tolist(), key=key)
        low, high = stats.percentiles[..., 0], stats.percentiles[..., 1]
        return cls(low.tolist(), (high - low).tolist(), clamp=(0.0, 1.0), key=key)

    def _normalize(self, image: torch.Tensor) -> torch.Tensor:
        if image.ndim < 3 or image.shape[-3] != self.shift.shape[0]:
            raise TacoQueryError(
                f"Normalize: expected an image with {self.shift.shape[0]} bands on axis -3, "
                f"found shape {tuple(image.shape)}"
            )
        dtype = image.dtype if image.is_floating_point() else torch.float32
        out = (image.to(dtype) - self.shift.to(dtype)) / self.scale.to(dtype)
        return out if self.clamp is None else out.clamp(*self.clamp)

    def forward(self, item: Any) -> Any:
        """The item with its image normalized (a new dict), or the normalized tensor."""
        if isinstance(item, Mapping):
            return {**item, self.key: self._normalize(item[self.key])}
        return self._normalize(item)
