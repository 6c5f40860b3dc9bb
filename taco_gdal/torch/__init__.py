"""PyTorch datasets over TACO samples (``pip install 'taco_gdal[torch]'``).

A picklable map-style :class:`SampleDataset`, a :class:`Normalize` transform built
from a view's statistics, splits by column or geographic
block, a resumable DistributedSampler, and a null-tolerant collate.  Importing
this package without torch raises :class:`~taco_gdal.errors.TacoDependencyError`.

Example:
    >>> from taco_gdal.torch import SampleDataset
    >>> dataset = SampleDataset(taco_gdal.load(url))  # url: a Range server on 127.0.0.1
    >>> len(dataset), dataset[0]["image"].shape
    (4, torch.Size([1, 16, 16]))
"""

from __future__ import annotations

from taco_gdal.torch._require import require_torch

require_torch()

from taco_gdal.torch.collate import collate_samples  # noqa: E402
from taco_gdal.torch.dataset import (  # noqa: E402
    CHILDREN,
    IMAGE,
    MAX_READ_THREADS,
    READ_BYTES_IN_FLIGHT,
    SampleDataset,
)
from taco_gdal.torch.normalize import Normalize  # noqa: E402
from taco_gdal.torch.reading import Reader  # noqa: E402
from taco_gdal.torch.rows import SampleRows, resolve_rows  # noqa: E402
from taco_gdal.torch.sampler import ResumableSampler  # noqa: E402
from taco_gdal.torch.splits import (  # noqa: E402
    block_ids,
    lonlat_centroids,
    split_by_blocks,
    split_by_column,
)

__all__ = [
    "CHILDREN",
    "IMAGE",
    "MAX_READ_THREADS",
    "READ_BYTES_IN_FLIGHT",
    "Normalize",
    "Reader",
    "ResumableSampler",
    "SampleDataset",
    "SampleRows",
    "block_ids",
    "collate_samples",
    "lonlat_centroids",
    "resolve_rows",
    "split_by_blocks",
    "split_by_column",
]
