"""taco_gdal._sha256_thread.Sha256Stream: running SHA-256s advanced together in lanes.

The ZIP writer's digest thread follows two large members at once (the rest of
the one copied last and the start of the one being copied) with
``update_many``.  Every digest is compared with hashlib's: streams fed in
random pieces that end anywhere in a block (and pieces that do not finish the
block begun before), several streams in one call (more than the lanes), and
the misuses that would mix two messages' bytes.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from taco_gdal._sha256_thread import Sha256Stream, update_many

_EDGES = [0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 4096]


@pytest.mark.parametrize("seed", range(8))
def test_streams_fed_together_in_random_pieces_agree_with_hashlib(seed: int) -> None:
    rng = random.Random(seed)
    messages = [rng.randbytes(rng.randrange(0, 20_000)) for _ in range(rng.randrange(1, 6))]
    streams = [Sha256Stream() for _ in messages]
    fed = [0] * len(messages)
    while any(at < len(m) for at, m in zip(fed, messages, strict=True)):
        chosen = [i for i, m in enumerate(messages) if fed[i] < len(m) and rng.random() < 0.7]
        pieces = []
        for i in chosen:
            n = rng.choice(_EDGES) + 64 * rng.randrange(0, 3)
            pieces.append(memoryview(messages[i])[fed[i] : fed[i] + n])
            fed[i] = min(len(messages[i]), fed[i] + n)
        if len(chosen) == 1 and rng.random() < 0.5:
            streams[chosen[0]].update(pieces[0])
        else:
            update_many([streams[i] for i in chosen], pieces)
    for stream, message in zip(streams, messages, strict=True):
        assert stream.digest() == hashlib.sha256(message).digest(), len(message)


def test_every_length_up_to_200_and_a_large_pair() -> None:
    for n in range(201):
        data = random.Random(n).randbytes(n)
        stream = Sha256Stream()
        stream.update(data[: n // 3])
        stream.update(data[n // 3 :])
        assert stream.digest() == hashlib.sha256(data).digest(), n
    big = [random.Random(1).randbytes(5 << 20), random.Random(2).randbytes((3 << 20) + 7)]
    pair = [Sha256Stream(), Sha256Stream()]
    update_many(pair, [bytearray(big[0]), big[1]])
    assert [s.digest() for s in pair] == [hashlib.sha256(b).digest() for b in big]


def test_misuse_that_would_mix_messages_is_refused() -> None:
    stream = Sha256Stream()
    with pytest.raises(RuntimeError, match="given twice"):
        update_many([stream, stream], [b"a", b"b"])
    with pytest.raises(ValueError, match="2 streams but 1 buffers"):
        update_many([stream, Sha256Stream()], [b"a"])
    with pytest.raises(TypeError, match="expected Sha256Stream, found"):
        update_many([stream, hashlib.sha256()], [b"a", b"b"])  # type: ignore[list-item]
    stream.update(b"abc")  # the refused calls fed nothing and left it usable
    assert stream.digest() == hashlib.sha256(b"abc").digest()
    with pytest.raises(ValueError, match="digest\\(\\) was taken"):
        stream.update(b"more")
    with pytest.raises(ValueError, match="already taken"):
        stream.digest()
