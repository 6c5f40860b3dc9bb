"""A seeded sampler yielding DistributedSampler's indices, resumable mid-epoch."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any, Final

import torch
from torch.utils.data import Sampler

from taco_gdal.errors import TacoValidationError

__all__ = ["ResumableSampler"]

_MATCH: Final = ("length", "num_replicas", "rank", "shuffle", "seed", "drop_last")


def _world() -> tuple[int, int]:
    """``(num_replicas, rank)`` of the initialised process group, ``(1, 0)`` otherwise."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


class ResumableSampler(Sampler[int]):
    """DistributedSampler's order (same arguments, same indices) that survives a restart:
    ``load_state_dict(state_dict())`` continues with the next index, none repeated.

    Arguments are DistributedSampler's; ``num_replicas`` and ``rank`` default to the
    initialised process group's, else 1 and 0.

    Example:
        >>> from torch.utils.data import DataLoader
        >>> from taco_gdal.torch import SampleDataset
        >>> train = SampleDataset(taco_gdal.load("dataset.tacozip"))
        >>> sampler = ResumableSampler(train, num_replicas=2, rank=0, seed=7)
        >>> loader = DataLoader(train, batch_size=1, sampler=sampler)
        >>> for epoch in range(0, 2):
        ...     sampler.set_epoch(epoch)
        ...     for step, batch in enumerate(loader):
        ...         saved = {"sampler": sampler.state_dict(consumed=(step + 1) * 1)}
        >>> saved["sampler"]["epoch"], saved["sampler"]["position"]
        (1, 2)
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ) -> None:
        world, own = _world()
        self.num_replicas = world if num_replicas is None else int(num_replicas)
        self.rank = own if rank is None else int(rank)
        if self.num_replicas < 1 or not 0 <= self.rank < self.num_replicas:
            raise TacoValidationError(
                f"expected num_replicas >= 1 and 0 <= rank < num_replicas, found "
                f"num_replicas={self.num_replicas}, rank={self.rank}"
            )
        self.length = len(dataset)
        self.shuffle = shuffle
        self.seed = int(seed)
        self.drop_last = drop_last
        self.epoch = 0
        self.start = 0  # indices of this epoch already handed out before this iterator
        self.yielded = 0  # position reached by the current or last iterator
        if drop_last and self.length % self.num_replicas:
            self.num_samples = math.ceil((self.length - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(self.length / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def epoch_indices(self) -> list[int]:
        """This rank's whole order for the current epoch (DistributedSampler's)."""
        if self.shuffle:
            generator = torch.Generator()
            generator.manual_seed(self.seed + self.epoch)
            indices: list[int] = torch.randperm(self.length, generator=generator).tolist()
        else:
            indices = list(range(self.length))
        padding = self.total_size - len(indices)
        if not self.drop_last and padding > 0:
            indices += (indices * math.ceil(padding / len(indices)))[:padding]
        indices = indices[: self.total_size]
        return indices[self.rank : self.total_size : self.num_replicas]

    def __iter__(self) -> Iterator[int]:
        start = self.start if self.start < self.num_samples else 0
        self.yielded = start
        for index in self.epoch_indices()[start:]:
            self.yielded += 1
            yield index
        self.start = 0  # a finished pass: the next one starts at the beginning

    def __len__(self) -> int:
        return self.num_samples - (self.start if self.start < self.num_samples else 0)

    def set_epoch(self, epoch: int) -> None:
        """Use the order of ``epoch`` (call at the start of every epoch, as with DDP)."""
        if int(epoch) != self.epoch:
            self.start = 0
        self.epoch = int(epoch)

    def state_dict(self, consumed: int | None = None) -> dict[str, Any]:
        """Where this rank is in its epoch.

        Args:
            consumed: samples trained on since the iterator began (``batches * batch_size``;
                needed with workers, which fetch ahead); default: the indices handed out.

        Example:
            >>> from taco_gdal.torch import SampleDataset
            >>> sampler = ResumableSampler(SampleDataset(ds), num_replicas=2, rank=0, seed=7)
            >>> sampler.state_dict(consumed=1)
            {'length': 4, 'num_replicas': 2, 'rank': 0, ..., 'epoch': 0, 'position': 1}
        """
        begun = self.start if self.start < self.num_samples else 0
        position = self.yielded if consumed is None else begun + int(consumed)
        state = {key: getattr(self, key) for key in _MATCH}
        state.update(epoch=self.epoch, position=min(position, self.num_samples))
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from ``state`` (TacoValidationError if saved by another set-up)."""
        wrong = [
            f"{key}: expected {getattr(self, key)!r}, found {state.get(key)!r}"
            for key in _MATCH
            if state.get(key) != getattr(self, key)
        ]
        if wrong:
            raise TacoValidationError(
                "cannot resume from this sampler state (saved by a different set-up): "
                + "; ".join(wrong)
            )
        self.epoch = int(state["epoch"])
        self.start = int(state["position"])
        self.yielded = self.start
