"""collate: ``default_collate`` that also batches nulls and FOLDER children."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from torch.utils.data._utils.collate import collate, default_collate_fn_map

__all__ = ["collate_samples"]


def _collate_none(batch: Sequence[Any], **_: Any) -> list[Any]:
    return list(batch)


def _collate_mixed(batch: Sequence[Any]) -> Any:
    if any(v is None for v in batch):  # a column with nulls: keep the values as a list
        return list(batch)
    return collate(batch, collate_fn_map=_MAP)


_MAP: dict[type | tuple[type, ...], Any] = {**default_collate_fn_map, type(None): _collate_none}


def collate_samples(batch: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Batch sample dicts like ``default_collate``, keeping columns with nulls as lists.

    Example:
        >>> from torch.utils.data import DataLoader
        >>> from taco_gdal.torch import SampleDataset
        >>> dataset = SampleDataset(taco_gdal.load("dataset.tacozip"))
        >>> loader = DataLoader(dataset, batch_size=2, collate_fn=collate_samples)
        >>> batch = next(iter(loader))
        >>> batch["id"], batch["image"].shape
        (['s000', 's001'], torch.Size([2, 1, 16, 16]))
    """
    if not batch:
        return {}
    keys = batch[0].keys()
    return {key: _collate_mixed([item.get(key) for item in batch]) for key in keys}
