"""taco_gdal/_sha256_thread.c: SHA-256 of submitted members on a native thread.

The extension is built by the install (``pip install -e .`` with gcc and
OpenSSL's headers, part of the set-up); a machine where it was not built fails
here rather than quietly falling back to the helper process.  Every digest is
compared with hashlib's, in order, across the ring's 1,024 slots, past the
64 MiB it may hold (the writer then digests a member itself), after a fork
and after close; the thread's placement is read back from /proc.
"""

from __future__ import annotations

import hashlib
import os
import random
import sys

import pytest

from taco_gdal import _sha256_thread
from taco_gdal.errors import TacoIOError
from taco_gdal.write import _digest_thread
from taco_gdal.write._digest_thread import DigestThread
from tests.forking import in_forked_child
from tests.threads import thread_cpus

SIZES = [0, 1, 55, 56, 63, 64, 65, 1000, 16_384, 65_537, 300_000]


def _members(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [rng.randbytes(rng.choice(SIZES)) for _ in range(count)]


def _sha256s(members: list[bytes]) -> bytes:
    return b"".join(hashlib.sha256(data).digest() for data in members)


def test_every_digest_comes_back_in_order_across_the_ring() -> None:
    members = _members(5000, seed=1)  # ~5 turns of the 1,024-slot ring
    digester = _sha256_thread.Digester()
    numbers = [digester.submit(data) for data in members]
    assert numbers == list(range(5000))
    assert digester.digests() == _sha256s(members)
    more = _members(70, seed=2)  # a write goes on after a level's digests were taken
    for data in more:
        digester.submit(memoryview(data))
    assert digester.digests() == _sha256s(members + more)
    digester.close()


def test_a_member_past_what_the_ring_may_hold_is_digested_by_the_writer() -> None:
    big = random.Random(3).randbytes((64 << 20) + 1)  # more than the ring holds at once
    members = [b"a", big, b"b" * 70_000]
    digester = _sha256_thread.Digester()
    assert [digester.submit(data) for data in members] == [0, 1, 2]
    assert digester.digests() == _sha256s(members)
    digester.close()


def test_references_are_dropped_once_digested_and_at_close() -> None:
    data = os.urandom(1000)
    before = sys.getrefcount(data)
    digester = _sha256_thread.Digester()
    for _ in range(3000):
        digester.submit(data)
    digester.digests()
    assert sys.getrefcount(data) == before
    for _ in range(10):  # never woken (fewer than a batch): dropped by close
        digester.submit(data)
    digester.close()
    assert sys.getrefcount(data) == before


def test_a_closed_digester_refuses_work() -> None:
    digester = _sha256_thread.Digester()
    digester.close()
    digester.close()
    with pytest.raises(ValueError, match="closed"):
        digester.submit(b"x")
    with pytest.raises(ValueError, match="closed"):
        digester.digests()


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match=r"CPU -1 is not in 0\.\.1023"):
        _sha256_thread.Digester(cpus=[-1])
    with pytest.raises(TypeError):
        _sha256_thread.Digester(cpus=3)  # type: ignore[arg-type]
    digester = _sha256_thread.Digester()
    with pytest.raises(TypeError, match="bytes-like object is required"):
        digester.submit("text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="called twice"):
        digester.__init__()  # type: ignore[misc]
    digester.close()


def test_after_fork_the_child_is_told_not_to_use_it() -> None:
    digester = _sha256_thread.Digester()
    digester.submit(b"before the fork")

    def child() -> str:  # the thread does not exist in the child
        try:
            digester.submit(b"x")
        except RuntimeError as exc:
            return str(exc)
        return "accepted"

    assert in_forked_child(child) == "a Digester cannot be used after fork()"
    assert digester.digests() == hashlib.sha256(b"before the fork").digest()
    digester.close()


def test_the_thread_runs_on_the_cpus_it_is_given() -> None:
    allowed = os.sched_getaffinity(0)
    assert len(allowed) >= 2, f"the test needs two CPUs, this thread may use {allowed}"
    chosen = {max(allowed)}
    digester = _sha256_thread.Digester(cpus=chosen)
    digester.submit(b"abc")
    assert digester.digests() == hashlib.sha256(b"abc").digest()  # the thread has run
    assert thread_cpus("taco-sha256") == chosen
    digester.close()


def test_digest_thread_says_when_the_extension_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_digest_thread, "NATIVE_SHA256", "taco_gdal._not_built")
    with pytest.raises(TacoIOError, match="no native SHA-256 thread here: No module named"):
        DigestThread()
