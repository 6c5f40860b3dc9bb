"""Small ZIP members written for the SHA-256 finders' tests, and what a finder must answer.

The helper process (``write/_digest_process.py``) and the native scan thread
(``write/_output_digests.py``) read the same members from a ZIP as it grows;
their tests write members with the real ZIP writer and compare the finders'
stored forms with hashlib's.
"""

from __future__ import annotations

import hashlib
import random
import struct
import time
from typing import BinaryIO, Final

import numpy as np

from taco_gdal.format.checksum import crc32
from taco_gdal.write._digest_thread import MemberDigests
from taco_gdal.write.zipstream import ZipWriter

SIZES: Final = (0, 1, 100, 4096, 20_000)
"""Member sizes the tests draw from (a finder started with ``limit=10_000`` skips the largest)."""

Members = list[tuple[int, bytes]]
"""Members written: the position of each one's bytes, and the bytes."""


def write_members(
    writer: ZipWriter, count: int, seed: int, sizes: tuple[int, ...] = SIZES
) -> Members:
    """``count`` members of random bytes appended by ``writer``."""
    rng, members = random.Random(seed), []
    for i in range(count):
        data = rng.randbytes(rng.choice(sizes))
        members.append((writer.add_bytes(f"m{seed}-{i}", data).data_offset, data))
    return members


def ask(helper: MemberDigests, members: Members) -> bytes:
    """The stored forms ``helper`` gives for ``members``, in their order, as bytes."""
    positions = np.array([position for position, _ in members], np.int64)
    sizes = np.array([len(data) for _, data in members], np.int64)
    return helper.stored_at(positions, sizes).tobytes()


def sha256s(members: Members) -> bytes:
    """The stored forms of the members' digests, as the digest column holds them, by hashlib."""
    return b"".join(b"sha256:" + hashlib.sha256(data).hexdigest().encode() for _, data in members)


def zip64_member(out: BinaryIO, name: bytes, data: bytes) -> int:
    """A member whose local header keeps its sizes in a ZIP64 extra field, as a
    writer does for members of 4 GiB or more; its data's position."""
    extra = struct.pack("<HHQQ", 0x0001, 16, len(data), len(data))
    header = struct.pack(
        "<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, 0, 0xFFFFFFFF, 0xFFFFFFFF, len(name), 20
    )
    out.write(header + name + extra)
    position = out.tell()
    out.write(data)
    return position


def copy_large_member(writer: ZipWriter, out: BinaryIO, seed: int) -> int:
    """An 8 MiB member written over 0.2 s, flushed 1 MiB at a time, as the writer's
    copy writes a large member (a finder sees its header long before its end); its size."""
    chunk = random.Random(seed).randbytes(1 << 20)
    header, at = writer._begin("large", 8 * len(chunk))
    for _ in range(8):
        out.write(chunk)
        out.flush()
        time.sleep(0.025)
    writer._finish(header, at, 8 * len(chunk), crc32(chunk * 8))
    return 8 * len(chunk)
