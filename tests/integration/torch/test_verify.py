"""verify=True: a flipped byte raises TacoChecksumError; intact data reads with one GET."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import taco_gdal
from taco_gdal.errors import TacoChecksumError, TacoQueryError
from taco_gdal.format.names import CHECKSUM, GDAL_VSI
from taco_gdal.format.vsi import parse_subfile
from taco_gdal.torch import IMAGE, SampleDataset
from tests.integration.torch._data import Written, write_grid
from tests.integration.torch._loader import read_bytes
from tests.support.servers.remote import Remote


def _flip_byte_of(container: Path, samples: SampleDataset, position: int) -> str:
    """Flip the last byte of the sample at ``position``; return its id."""
    row = samples.rows.levels[0].rows([position])[0]
    span = parse_subfile(row[GDAL_VSI])
    with open(container, "r+b") as f:
        f.seek(span.offset + span.size - 1)
        byte = f.read(1)
        f.seek(span.offset + span.size - 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    return str(row["id"])


def test_flipped_byte_is_caught(tmp_path: Path, grid: Written) -> None:
    container = tmp_path / "copy.tacozip"
    shutil.copy(grid.path, container)
    samples = SampleDataset(taco_gdal.load(container), verify=True)
    assert np.array_equal(samples[4][IMAGE].numpy(), grid.truth["g0004"])
    broken = _flip_byte_of(container, samples, 5)
    with pytest.raises(TacoChecksumError) as caught:
        samples[5]
    message = str(caught.value)
    assert broken in message and str(container) in message
    stored = samples.rows.levels[0].rows([5])[0][CHECKSUM]
    assert stored in message and message.count("sha256:") == 2
    # the sample's own byte range: an id can repeat under different parents
    assert samples.rows.levels[0].rows([5])[0][GDAL_VSI] in message
    assert isinstance(caught.value, OSError)
    unchecked = SampleDataset(taco_gdal.load(container))
    assert unchecked[5][IMAGE].shape == (2, 64, 64)  # without verify the damage goes unnoticed
    with pytest.raises(TacoChecksumError):
        SampleDataset(taco_gdal.load(container), verify=True, read=read_bytes)[5]


@pytest.mark.parametrize("algorithm", ["crc32c", "xxh3", "sha256"])
def test_checksums_written_by_create(tmp_path: Path, algorithm: str) -> None:
    written = write_grid(tmp_path, 4, pixels=16, bands=1, algorithm=algorithm)
    samples = SampleDataset(taco_gdal.load(written.path), verify=True)
    assert all(
        np.array_equal(item[IMAGE].numpy(), written.truth[item["id"]])
        for item in samples.__getitems__([0, 1, 2, 3])
    )
    broken = _flip_byte_of(written.path, samples, 2)
    with pytest.raises(TacoChecksumError, match=f"{broken}.*{algorithm}:.*{algorithm}:"):
        samples[2]


@pytest.mark.network
def test_verified_read_is_one_get(http_remote: Remote, grid: Written) -> None:
    url = http_remote.publish(grid.path)
    samples = SampleDataset(taco_gdal.load(url), verify=True)
    http_remote.server.reset()
    items = samples.__getitems__(list(range(0, 200, 20)))
    assert [i["id"] for i in items] == [f"g{k:04d}" for k in range(0, 200, 20)]
    assert all(np.array_equal(i[IMAGE].numpy(), grid.truth[i["id"]]) for i in items)
    assert http_remote.log.count(method="GET") == 10, http_remote.log.describe()
    assert http_remote.log.count() == 10, http_remote.log.describe()


def test_verify_needs_the_column(tmp_path: Path) -> None:
    plain = write_grid(tmp_path, 3)
    with pytest.raises(TacoQueryError, match=CHECKSUM):
        SampleDataset(taco_gdal.load(plain.path), verify=True)
