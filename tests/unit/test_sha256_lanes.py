"""taco_gdal/_sha256_lanes.h: SHA-256 of several members at once with the SHA extensions.

``sha256_many`` keeps up to three messages in flight, a block of each per
step, and gives a lane to the next message when one ends; each message's last
one or two blocks (padding, bit length) are built in its lane.  Every digest
is compared with hashlib's: every length from 0 to 300 (one and two padding
blocks), lengths around each block edge, ragged batches whose messages end at
every step, and the buffers the writer hands over (bytes, bytearray,
memoryview).  The thread of :class:`Digester` and :class:`LaneDigests` use
the same code and are checked the same way.
"""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest

from taco_gdal import _sha256_thread
from taco_gdal.errors import TacoIOError
from taco_gdal.write import _digest_thread
from taco_gdal.write._digest_thread import LaneDigests
from tests.cpu import SHA_LANE_FLAGS, cpu_flags


def _sha256s(members: list[bytes]) -> bytes:
    return b"".join(hashlib.sha256(data).digest() for data in members)


def test_the_lanes_are_used_where_the_cpu_has_the_sha_extensions() -> None:
    has = cpu_flags() >= SHA_LANE_FLAGS
    assert (3 if has else 0) == _sha256_thread.LANES, (has, _sha256_thread.LANES)


def test_every_length_up_to_300_alone_and_in_lanes() -> None:
    members = [random.Random(n).randbytes(n) for n in range(301)]
    for member in members:
        assert _sha256_thread.sha256_many([member]) == hashlib.sha256(member).digest(), len(member)
    assert _sha256_thread.sha256_many(members) == _sha256s(members)


@pytest.mark.parametrize("seed", range(6))
def test_ragged_batches_end_their_messages_at_every_step(seed: int) -> None:
    rng = random.Random(seed)
    edges = [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129, 16_383, 16_384, 16_385]
    sizes = [rng.choice(edges) + 64 * rng.randrange(0, 6) for _ in range(rng.randrange(1, 40))]
    members = [rng.randbytes(size) for size in sizes]
    assert _sha256_thread.sha256_many(members) == _sha256s(members)


def test_large_members_release_the_gil_and_agree() -> None:
    members = [random.Random(9).randbytes(3 << 20), b"x" * 70_000, b""]
    assert _sha256_thread.sha256_many(members) == _sha256s(members)


def test_any_buffer_is_taken_and_anything_else_refused() -> None:
    data = random.Random(1).randbytes(1000)
    views = [bytearray(data), memoryview(data)[7:900], data]
    assert _sha256_thread.sha256_many(views) == _sha256s([data, data[7:900], data])
    assert _sha256_thread.sha256_many([]) == b""
    assert _sha256_thread.sha256_many(()) == b""
    with pytest.raises(TypeError):
        _sha256_thread.sha256_many([b"ok", "text"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="takes a sequence of buffers"):
        _sha256_thread.sha256_many(3)  # type: ignore[arg-type]


def test_the_thread_digests_in_lanes_in_order() -> None:
    rng = random.Random(5)
    members = [rng.randbytes(rng.choice([0, 3, 64, 100, 5000, 16_384])) for _ in range(3000)]
    digester = _sha256_thread.Digester()
    for data in members:
        digester.submit(data)
    assert digester.digests() == _sha256s(members)
    digester.close()


def test_lane_digests_hold_a_batch_and_give_every_digest_in_order() -> None:
    rng = random.Random(6)
    members = [rng.randbytes(rng.randrange(0, 20_000)) for _ in range(37)]  # 2 batches + 5
    lanes = LaneDigests()
    for i, data in enumerate(members):
        lanes.submit(data, 1000 * i)
    found = lanes.digests_at(np.arange(37) * 1000, np.zeros(37, np.int64))
    assert found.tobytes() == _sha256s(members)
    more = [b"late", b""]
    for i, data in enumerate(more, start=37):
        lanes.submit(data, 1000 * i)
    backwards = np.arange(38, -1, -1) * 1000  # any order: found by position
    found = lanes.digests_at(backwards, np.zeros(39, np.int64))
    assert found.tobytes() == _sha256s((members + more)[::-1])
    with pytest.raises(TacoIOError, match="no member was digested at 5 of the output"):
        lanes.digests_at(np.array([5]), np.array([1]))


def test_lane_digests_say_when_the_extension_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_digest_thread, "NATIVE_SHA256", "taco_gdal._not_built")
    with pytest.raises(TacoIOError, match="no native SHA-256 here: No module named"):
        LaneDigests()
