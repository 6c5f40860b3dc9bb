"""Checksums: the ZIP CRC-32 and the per-sample digest column ``taco_gdal:checksum``.

One module for both, used by the writers (computed on the buffers they write),
by ``verify`` and by sample reads that check a digest.

* CRC-32 (every ZIP member's): ISA-L's (``isal``: 55 GB/s with AVX-512, 9.9 on
  the AMD EPYC's AVX2) or the project's extension's folding one (about 25 GB/s
  with AVX2 and VPCLMULQDQ), whichever is faster here (timed once,
  :func:`_choose_crc32`), zlib's without either (about 1 GB/s); all give the
  same value.  A copy that also wants a CRC-32C gets both from one pass
  (:meth:`StreamingDigest.with_zip_crc`).
* Digests (:data:`~taco_gdal.format.names.CHECKSUM_ALGORITHMS`): ``crc32c``
  (8 hex digits), ``xxh3`` (XXH3-64, 16 hex digits: the system ``libxxhash``'s
  AVX2/AVX-512 code when it has it, the xxhash wheel's otherwise, same values)
  and ``sha256`` (hashlib, 64 hex digits), stored as
  ``"<algorithm>:<lowercase hex>"``.
  Every hasher takes buffers incrementally, so a sample is digested while it
  streams, in bounded memory, and every one releases the GIL on large buffers
  (hashlib above 2 KiB, xxhash's ``update``, crc32c above 256 KiB), so a digest
  can run in a thread beside the copy.  A sample held in memory takes one call
  (:func:`digest_value`), no hasher object.

CRC-32C is the project's own C extension (``taco_gdal/_crc32c.c``, built at
install where a C compiler exists, used on CPUs with VPCLMULQDQ), ISA-L's
``crc32_iscsi`` (the ``isal`` wheel links ISA-L and exports it) or
google-crc32c's C library, whichever is faster on the CPU (timed once,
:func:`_fastest`), called on the buffer in place (the libraries with ctypes),
and checked against the RFC 3720 check value before use; a small file's goes
through the extension's or google-crc32c's one C call (:func:`_crc32c_value_call`).
The extension runs two kinds of execution units at once, carry-less folding of
one part of the buffer and the crc32 instruction on three others, and reached
40 GB/s on 256 KiB on the AMD EPYC below, against 24 for google-crc32c, whose
crc32 instruction retires 8 bytes a cycle at most.  Measured on an Intel CPU with
AVX-512 (one core, 256 KiB buffers in cache): CRC-32 (ISA-L) 55 GB/s, CRC-32C
50 GB/s (ISA-L; google-crc32c 22), XXH3 about 60 GB/s from ``libxxhash`` (27
GB/s from the wheel), SHA-256 1.8 GB/s (SHA-NI).  On an AMD EPYC without
AVX-512: CRC-32 13 GB/s, CRC-32C 24 GB/s (google-crc32c; ISA-L 12), XXH3 34
GB/s (``libxxhash``; the wheel 24).  The
wheel's XXH3 and SHA-256 are legacy-SSE code, slowed down (XXH3 4.7x,
SHA-256 1.3x) on a thread whose upper vector state an ISA-L call left dirty;
their updates clear it first (:func:`_clean_vectors`).  Against the writer's
copy of 100 MiB from the page cache (52 ms, 2 GB/s) that is about +2 ms for
CRC-32C, +6 ms for XXH3 and +60 ms for SHA-256 inline
(``bench/bench_digest_copy.py``): SHA-256 is slower than the copy itself.
"""

from __future__ import annotations

import binascii
import ctypes
import functools
import hashlib
import importlib
import mmap
import platform
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, TypeAlias, TypeVar, cast

import numpy as np
import numpy.typing as npt

from taco_gdal.errors import TacoFormatError, TacoValidationError
from taco_gdal.format.names import CHECKSUM, CHECKSUM_ALGORITHMS

__all__ = [
    "NATIVE_SHA256",
    "BatchDigest",
    "Digest",
    "Hasher",
    "StreamingDigest",
    "batch_digest",
    "check_algorithm",
    "crc32",
    "digest_bytes",
    "digest_value",
    "new_hasher",
    "parse_checksum",
    "raw_digests",
    "stored_ascii",
    "value_call",
]

Buffer: TypeAlias = bytes | bytearray | memoryview
D = TypeVar("D")
V = TypeVar("V")

try:  # ISA-L's CRC-32 is ~10x zlib's: it keeps the CRC off the copy's critical path
    from isal.isal_zlib import crc32 as _library_crc32
except ImportError:  # pragma: no cover - isal is a declared dependency; zlib gives equal values
    from zlib import crc32 as _library_crc32

NATIVE_SHA256: Final = "taco_gdal._sha256_thread"
"""The C extension whose ``sha256_many`` digests several members at once (optional)."""
_HEX_DIGITS: Final = {"crc32c": 8, "xxh3": 16, "sha256": 64}
_VALUE: Final = re.compile(r"([a-z0-9]+):([0-9a-f]+)")


def crc32(data: Buffer, value: int = 0) -> int:
    """ZIP CRC-32 of ``data``, continuing from ``value``.

    Example:
        >>> hex(crc32(b"hello"))
        '0x3610a686'
    """
    return int(_crc32(data, value))


def _choose_crc32(data: Buffer, value: int = 0) -> int:
    """The first ZIP CRC-32 of the process: picks :data:`_crc32`, then computes it.

    ISA-L's CRC-32 and the extension's (``taco_gdal._crc32c.crc32``, folded
    with 256-bit carry-less multiplies) give the same values; which is faster
    depends on the CPU (on the AMD EPYC here ISA-L's AVX2 path ran at 9.9
    GB/s on 256 KiB, the extension's at about 25; ISA-L's AVX-512 path ran
    at 55 on the Intel host of earlier sessions), so :func:`_fastest` times
    both once, unless the extension does not run here: three rounds on 64 KiB,
    about 0.1 ms (five on 256 KiB had taken 1 ms, a seventh of a ``create()``
    of 20 small samples); a factor of two shows in any round.
    """
    global _crc32
    native = _native_module()
    if native is None:
        _crc32 = _library_crc32
    else:
        calls = {"library": _library_crc32, "extension": native.crc32}
        trial = bytes(range(256)) * 256
        chosen = _fastest(calls, rounds=3, data=trial, before=_no_crc32)[1]
        _crc32 = cast(Callable[[Buffer, int], int], chosen)
    return int(_crc32(data, value))


def _no_crc32(data: Buffer) -> None:
    return None


_crc32: Callable[[Buffer, int], int] = _choose_crc32


class Hasher(Protocol):
    """What every algorithm offers: ``update(buffer)`` and ``hexdigest()``."""

    def update(self, data: Buffer, /) -> None: ...

    def hexdigest(self) -> str: ...


_Extend: TypeAlias = Callable[[int, Buffer], int]
_Pointer: TypeAlias = int | bytes
_Raw: TypeAlias = Callable[[int, _Pointer, int], int]
"""``raw(crc, pointer, n)``: CRC-32C of ``n`` bytes at ``pointer`` (an address or a ``bytes``)."""

_CRC32C_CHECK: Final = (b"123456789", 0xE3069283)  # the CRC-32C check value (RFC 3720)
_HOLD_GIL_MAX: Final = 256 * 1024
"""Up to this size a CRC-32C call keeps the GIL (7 us at most).  Releasing it
costs more when other threads run: each release lets one in, and the caller
then waits to get the GIL back (seen as 13 us per 16 KiB sample in a writer
reading ahead with 8 threads, for 0.8 us of work)."""
_ISAL_CHUNK: Final = 1 << 30  # ISA-L's length is a C int


def _isal_calls() -> tuple[_Raw, _Raw] | None:
    """ISA-L's ``crc32_iscsi`` from ``isal``'s extension module: releasing, holding the GIL.

    The ``isal`` wheel links ISA-L into its extension module and exports its
    symbols, dispatched on the CPU (AVX-512 VPCLMULQDQ here, about 36 GB/s,
    against 22 GB/s for google-crc32c's SSE 4.2 code).  ISA-L inverts neither
    the initial value nor the result, so both are inverted here.
    """
    try:
        from isal import isal_zlib
    except ImportError:  # pragma: no cover - isal is a declared dependency
        return None
    calls: list[_Raw] = []
    for loader in (ctypes.CDLL, ctypes.PyDLL):  # PyDLL calls keep the GIL
        try:
            fn = loader(isal_zlib.__file__).crc32_iscsi
        except (OSError, AttributeError):  # pragma: no cover - an isal built otherwise
            return None
        fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
        fn.restype = ctypes.c_uint32
        calls.append(_isal_raw(fn))
    return calls[0], calls[1]


def _isal_raw(fn: Callable[[_Pointer, int, int], int]) -> _Raw:
    def raw(crc: int, pointer: _Pointer, n: int) -> int:
        crc ^= 0xFFFFFFFF
        if n > _ISAL_CHUNK:
            address = _address(pointer)
            while n > _ISAL_CHUNK:
                crc = fn(address, _ISAL_CHUNK, crc)
                address, n = address + _ISAL_CHUNK, n - _ISAL_CHUNK
            pointer = address
        return int(fn(pointer, n, crc)) ^ 0xFFFFFFFF

    return raw


NATIVE_CRC32C: Final = "taco_gdal._crc32c"
"""The project's own CRC-32C (``taco_gdal/_crc32c.c``), a candidate where it was built
and the CPU has VPCLMULQDQ."""


class _NativeCrc32c(Protocol):
    """What :func:`_native_module` gives: the extension's functions (``_crc32c.pyi``)."""

    def value(self, data: bytes | bytearray | memoryview, /) -> int: ...
    def extend_hold(self, crc: int, pointer: int | bytes, n: int, /) -> int: ...
    def extend_release(self, crc: int, pointer: int | bytes, n: int, /) -> int: ...
    def crc32(self, data: Buffer, value: int = 0, /) -> int: ...
    def both(self, zip_crc: int, crc32c: int, pointer: int, n: int, /) -> tuple[int, int]: ...


def _native_module() -> _NativeCrc32c | None:
    """``taco_gdal._crc32c`` when it was built and runs its folding code on this CPU.

    It folds 128-byte blocks with 256-bit carry-less multiplies while the
    crc32 instruction digests three other stripes in the same loop: on the
    AMD EPYC of the ninth session 40 GB/s on 256 KiB and 29 GB/s on 16 KiB,
    against 24 and 21 GB/s for google-crc32c, whose crc32 instruction retires
    8 bytes a cycle at most.  None where the extension was not compiled
    (no C compiler at install) or the CPU lacks the instructions.
    """
    try:
        from taco_gdal import _crc32c
    except ImportError:  # pragma: no cover - installed without a C compiler
        return None
    return _crc32c if _crc32c.accelerated else None


def _native_calls() -> tuple[_Raw, _Raw] | None:
    native = _native_module()
    return None if native is None else (native.extend_release, native.extend_hold)


def _google_calls() -> tuple[_Raw, _Raw] | None:
    """google-crc32c's ``crc32c_extend``, from the C library its wheel ships."""
    import google_crc32c

    package = Path(google_crc32c.__file__).parent
    libraries = sorted(package.parent.glob("google_crc32c.libs/libcrc32c*.so*"))
    calls: list[_Raw] = []
    for loader in (ctypes.CDLL, ctypes.PyDLL):
        try:
            fn = loader(str(libraries[0])).crc32c_extend
        except (IndexError, OSError, AttributeError):
            return None
        fn.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
        fn.restype = ctypes.c_uint32
        calls.append(fn)
    return calls[0], calls[1]


def _address(pointer: _Pointer) -> int:
    if isinstance(pointer, int):
        return pointer
    return ctypes.cast(ctypes.c_char_p(pointer), ctypes.c_void_p).value or 0


@functools.cache
def _crc32c_libraries() -> dict[str, tuple[_Raw, _Raw]]:
    """Every CRC-32C library call that gives the check value (releasing, holding the GIL)."""
    data, expected = _CRC32C_CHECK
    found: dict[str, tuple[_Raw, _Raw]] = {}
    for name, find in (
        (NATIVE_CRC32C, _native_calls),
        ("ISA-L", _isal_calls),
        ("google-crc32c", _google_calls),
    ):
        calls = find()
        if calls is not None and all(
            raw(raw(0, data[:4], 4), data[4:], 5) == expected for raw in calls
        ):
            found[name] = calls
    return found


@functools.cache
def _crc32c_calls() -> tuple[_Raw, _Raw] | None:
    """The fastest CRC-32C library call on this CPU (releasing, holding the GIL).

    Which one depends on the CPU: on an Intel CPU with AVX-512, ISA-L's
    ``crc32_iscsi`` ran at 50 GB/s and google-crc32c's SSE 4.2 code at 22; on
    an AMD EPYC without AVX-512, 12 against 24 GB/s (256 KiB in cache).  So
    both are timed on 64 KiB (:func:`_fastest`, about 0.5 ms once per
    process) and the faster is used; both give the check value first.  None
    when neither library can be called (the Python extension is used then).
    """
    found = _crc32c_libraries()
    if len(found) < 2:
        return next(iter(found.values()), None)
    timed = {name: _crc32c_hex(hold) for name, (_, hold) in found.items()}
    return found[_fastest(timed, data=_TRIAL * 4)[0]]


@functools.cache
def _crc32c_value_call() -> Callable[[bytes], int] | None:
    """A C function computing the CRC-32C of a ``bytes`` object in one call (no ctypes):
    the project's own where it runs its folding code (:func:`_native_module`: 0.56
    against 0.79 us per 16 KiB here), google-crc32c's extension otherwise; each
    must give the check value.  None with neither (a pure-Python google-crc32c)."""
    check, expected = _CRC32C_CHECK
    native = _native_module()
    if native is not None and native.value(check) == expected:
        return native.value
    import google_crc32c

    if google_crc32c.implementation != "c" or google_crc32c.value(check) != expected:
        return None  # pragma: no cover - a pure-Python google-crc32c
    value: Callable[[bytes], int] = google_crc32c.value
    return value


def _crc32c_hex(raw: _Raw) -> Callable[[Buffer], str]:
    return lambda data: f"{raw(0, cast(bytes, data), len(data)):08x}"


def _crc32c_at(crc: int, address: int, n: int) -> int:
    """CRC-32C of ``n`` bytes at ``address`` (a buffer the caller keeps alive)."""
    calls = _crc32c_calls()
    if calls is None:  # pragma: no cover - no library: copy the bytes out
        return _crc32c_extend()(crc, ctypes.string_at(address, n))
    return calls[n <= _HOLD_GIL_MAX](crc, address, n)


@functools.cache
def _crc32c_extend() -> _Extend:
    """``extend(crc, buffer)``: CRC-32C of a buffer read in place, continuing from ``crc``.

    A C library called with ctypes (ISA-L's, else google-crc32c's): the Python
    extension of google-crc32c accepts ``bytes`` only (one copy per block).
    Buffers up to 256 KiB keep the GIL, larger ones release it.  Same values
    every way.
    """
    calls = _crc32c_calls()
    if calls is None:  # pragma: no cover - another build: the extension, with a copy
        import google_crc32c

        slow: Callable[[int, bytes], int] = google_crc32c.extend
        return lambda crc, data: slow(crc, data if isinstance(data, bytes) else bytes(data))
    release, hold = calls

    def extend(crc: int, data: Buffer) -> int:
        pointer, n, _anchor = _pointer(data)
        if not n:
            return crc
        return (hold if n <= _HOLD_GIL_MAX else release)(crc, pointer, n)

    return extend


class _Crc32c:
    def __init__(self) -> None:
        self._extend = _crc32c_extend()
        self._crc = 0

    def update(self, data: Buffer, /) -> None:
        self._crc = self._extend(self._crc, data)

    def update_from(self, buffer: bytearray) -> Callable[[int], None]:
        return _Crc32cFeed(self, buffer)

    def with_zip_crc(self, buffer: bytearray) -> Callable[[int, int], int] | None:
        native = _native_module()
        return None if native is None or not buffer else _BothFeed(self, buffer, native.both)

    def hexdigest(self) -> str:
        return f"{self._crc:08x}"


class _BufferFeed:
    """Feeds the first ``n`` bytes of one buffer to a digest, by address (no object per call).

    Holding the ctypes view keeps the buffer exported, so it cannot be resized
    (and moved) while the feed lives.
    """

    __slots__ = ("_address", "_anchor", "_size")

    def __init__(self, buffer: bytearray) -> None:
        self._anchor = ctypes.c_char.from_buffer(buffer) if buffer else None
        self._address = 0 if self._anchor is None else ctypes.addressof(self._anchor)
        self._size = len(buffer)

    def _check(self, n: int) -> None:
        if not 0 <= n <= self._size:
            raise TacoValidationError(f"expected 0 to {self._size} bytes of the buffer, found {n}")


class _BothFeed(_BufferFeed):
    """A CRC-32C feed that also returns the ZIP CRC-32 of the bytes, both in one pass
    (``taco_gdal._crc32c.both``)."""

    __slots__ = ("_both", "_crc32c")

    def __init__(
        self,
        crc32c: _Crc32c,
        buffer: bytearray,
        both: Callable[[int, int, int, int], tuple[int, int]],
    ) -> None:
        super().__init__(buffer)
        self._crc32c = crc32c
        self._both = both

    def __call__(self, n: int, zip_crc: int) -> int:
        self._check(n)
        zip_crc, self._crc32c._crc = self._both(zip_crc, self._crc32c._crc, self._address, n)
        return zip_crc


class _Crc32cFeed(_BufferFeed):
    """Feeds the first ``n`` bytes of one buffer to a CRC-32C."""

    __slots__ = ("_crc32c", "_update")

    def __init__(self, crc32c: _Crc32c, buffer: bytearray) -> None:
        super().__init__(buffer)
        self._crc32c = crc32c
        calls = _crc32c_calls()  # chosen once: the GIL is kept up to 256 KiB
        self._update = _crc32c_at if calls is None else calls[self._size <= _HOLD_GIL_MAX]

    def __call__(self, n: int) -> None:
        self._check(n)
        if n:
            self._crc32c._crc = self._update(self._crc32c._crc, self._address, n)


_VZEROUPPER: Final = b"\xc5\xf8\x77\xc3"  # vzeroupper; ret
_PROT_READ_EXEC: Final = 0x1 | 0x4


def _nothing() -> None:
    return None


@functools.cache
def _clean_vectors() -> Callable[[], None]:
    """A call that clears the upper vector state (``vzeroupper``) of this thread; else a no-op.

    ISA-L's AVX-512 CRC kernels return without ``vzeroupper``, so on the thread
    that called them every legacy-SSE instruction afterwards pays a penalty
    until the state is cleared.  XXH3 (the xxhash wheel is built for SSE2) and
    SHA-256 (SHA-NI has no VEX form) are such code: measured on this machine's
    CPU, a cached 256 KiB block after an ISA-L call took 44 us of XXH3 instead
    of 9.4 us and 188 us of SHA-256 instead of 143 us; after ``vzeroupper``
    they are back to the clean figures.  The instruction is four bytes on a
    page mapped writable, then made read-only and executable (``mprotect``),
    called without releasing the GIL (about 0.2 us).  Only on x86-64 Linux with
    AVX (without AVX the instruction does not exist, and nothing dirties the
    state); a system that refuses executable pages gets the no-op.
    """
    if platform.machine() not in ("x86_64", "AMD64") or not _cpu_has_avx():
        return _nothing
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
        page.write(_VZEROUPPER)
        anchor = ctypes.c_char.from_buffer(page)  # keeps the page mapped while it is used
        address = ctypes.addressof(anchor)
        mprotect = ctypes.CDLL(None, use_errno=True).mprotect
        mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        if mprotect(address, mmap.PAGESIZE, _PROT_READ_EXEC) != 0:
            return _nothing  # W^X policy: no executable page
    except (OSError, AttributeError, ValueError, TypeError):  # pragma: no cover - not Linux
        return _nothing
    call = ctypes.PYFUNCTYPE(None)(address)

    def clean(call: Callable[[], None] = call, anchor: object = (page, anchor)) -> None:
        call()

    return clean


def _cpu_has_avx() -> bool:
    return "avx" in _cpu_flags()


@functools.cache
def _cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (``/proc/cpuinfo``); empty where there is none."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:  # pragma: no cover - no /proc: not Linux
        return frozenset()
    return frozenset()  # pragma: no cover - a /proc/cpuinfo without flags


class _Clean:
    """A legacy-SSE hasher (XXH3, SHA-256) whose every update starts with clean vector state."""

    __slots__ = ("_clean", "_hasher", "_update")

    def __init__(self, hasher: Hasher) -> None:
        self._hasher = hasher
        self._update = hasher.update
        self._clean = _clean_vectors()

    def update(self, data: Buffer, /) -> None:
        self._clean()
        self._update(data)

    def hexdigest(self) -> str:
        return self._hasher.hexdigest()


_XXH3_CHECK: Final = (0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 70_001)
"""Lengths whose XXH3 from the system library must equal the xxhash wheel's before use:
every size class of XXH3 (0, 1-3, 4-8, 9-16, 17-128, 129-240, the long loop, its stripes)."""


class _Xxh3Library:
    """XXH3-64 from the system's ``libxxhash`` (0.8), through its dispatching entry points.

    The xxhash wheel is built for SSE2 (27 GB/s here, and legacy-SSE code that
    pays for the upper vector state ISA-L leaves dirty, see
    :func:`_clean_vectors`).  ``libxxhash`` built with ``DISPATCH=1`` (Debian's
    is) exports ``XXH3_64bits_dispatch`` and ``XXH3_64bits_update_dispatch``,
    which pick AVX2 or AVX-512 code at run time (VEX/EVEX-encoded: no penalty
    after ISA-L): about 60 GB/s on this machine's CPU, so XXH3 beside the
    ZIP's CRC-32 costs about half of what the wheel's does.  Called with ctypes
    by address; up to 256 KiB the call keeps the GIL, like CRC-32C.  Used only
    when every length of :data:`_XXH3_CHECK` gives the wheel's value, one-shot
    and streamed.
    """

    def __init__(self, release: ctypes.CDLL, hold: ctypes.PyDLL) -> None:
        self.create = release.XXH3_createState
        self.create.restype = ctypes.c_void_p
        self.free = release.XXH3_freeState
        self.free.argtypes = [ctypes.c_void_p]
        self.reset = hold.XXH3_64bits_reset
        self.reset.argtypes = [ctypes.c_void_p]
        self.digest = hold.XXH3_64bits_digest
        self.digest.argtypes = [ctypes.c_void_p]
        self.digest.restype = ctypes.c_uint64
        self.updates: list[Callable[[int, _Pointer, int], int]] = []
        self.one_shots: list[Callable[[_Pointer, int], int]] = []
        for library in (release, hold):
            update = library.XXH3_64bits_update_dispatch
            update.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
            update.restype = ctypes.c_int
            one_shot = library.XXH3_64bits_dispatch
            one_shot.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            one_shot.restype = ctypes.c_uint64
            self.updates.append(update)
            self.one_shots.append(one_shot)

    def one_shot(self, data: Buffer) -> int:
        """XXH3-64 of ``data`` in one call."""
        pointer, n, _anchor = _pointer(data)
        return int(self.one_shots[n <= _HOLD_GIL_MAX](pointer, n))

    def matches(self, reference: Callable[[bytes], int]) -> bool:
        """True when every check length gives ``reference``'s value, one-shot and streamed."""
        for data in _xxh3_check_samples():
            hasher = _Xxh3(self)
            for start in range(0, len(data), 1000):
                hasher.update(data[start : start + 1000])
            expected = reference(data)
            if self.one_shot(data) != expected or int(hasher.hexdigest(), 16) != expected:
                return False
        return True


def _xxh3_check_samples() -> list[bytes]:
    """One sample of every length of :data:`_XXH3_CHECK`, the bytes 0-255 repeated."""
    data = bytes(range(256)) * (max(_XXH3_CHECK) // 256 + 1)
    return [data[:n] for n in _XXH3_CHECK]


def _pointer(data: Buffer) -> tuple[_Pointer, int, object]:
    """An address (or a ``bytes`` object) ctypes reads ``data`` from, its length, and an anchor.

    Nothing is copied.  ctypes takes the address of writable buffers only, so a
    read-only one (a slice of ``bytes``, a read-only mapping of the output the
    late digests read back) is addressed through numpy.  It was copied before
    (``tobytes``): holding the GIL through a copy of a mapped 1 MiB slice, page
    faults included, made the writing thread wait, and an XXH3 read back from
    the output doubled the time of a 20 x 100 MiB write.  The anchor keeps the
    memory alive for the call.
    """
    if isinstance(data, bytes):
        return data, len(data), None
    view = memoryview(data).cast("B")
    n = view.nbytes
    if not n:
        return 0, 0, None
    if view.readonly:
        array = np.frombuffer(view, dtype=np.uint8)
        return int(array.ctypes.data), n, array
    anchor = (ctypes.c_char * n).from_buffer(view)
    return ctypes.addressof(anchor), n, anchor


_LIBXXHASH: Final = "libxxhash.so.0"
"""The soname of libxxhash 0.8, loaded by name (``ctypes.util.find_library`` runs
``ldconfig``: several milliseconds on the first digest of every process)."""


@functools.cache
def _xxh3_library() -> _Xxh3Library | None:
    """The system ``libxxhash``'s dispatching XXH3, if present and equal to the wheel's."""
    try:
        library = _Xxh3Library(ctypes.CDLL(_LIBXXHASH), ctypes.PyDLL(_LIBXXHASH))
    except (OSError, AttributeError):  # pragma: no cover - no libxxhash, or no DISPATCH=1
        return None
    import xxhash

    return library if library.matches(xxhash.xxh3_64_intdigest) else None


class _Xxh3:
    """An incremental XXH3-64 on a ``libxxhash`` state (freed with this object)."""

    __slots__ = ("_library", "_state")

    def __init__(self, library: _Xxh3Library) -> None:
        self._library = library
        state = library.create()
        if not state:
            raise MemoryError("XXH3_createState returned NULL")
        self._state: int = state
        library.reset(state)

    def __del__(self) -> None:
        state, self._state = getattr(self, "_state", 0), 0
        if state:
            self._library.free(state)

    def update(self, data: Buffer, /) -> None:
        pointer, n, _anchor = _pointer(data)
        self._library.updates[n <= _HOLD_GIL_MAX](self._state, pointer, n)

    def update_from(self, buffer: bytearray) -> Callable[[int], None]:
        return _Xxh3Feed(self, buffer)

    def hexdigest(self) -> str:
        return f"{self._library.digest(self._state):016x}"


class _Xxh3Feed(_BufferFeed):
    """Feeds the first ``n`` bytes of one buffer to an XXH3 state."""

    __slots__ = ("_state", "_update", "_xxh3")

    def __init__(self, xxh3: _Xxh3, buffer: bytearray) -> None:
        super().__init__(buffer)
        self._xxh3 = xxh3  # keeps the state alive
        self._state = xxh3._state
        self._update = xxh3._library.updates[self._size <= _HOLD_GIL_MAX]

    def __call__(self, n: int) -> None:
        self._check(n)
        if n:
            self._update(self._state, self._address, n)


def check_algorithm(algorithm: str | None) -> str | None:
    """``algorithm`` if it is None or a supported digest (a writer option), else an error.

    Raises:
        TacoValidationError: an unknown algorithm.

    Example:
        >>> check_algorithm("xxh3")
        'xxh3'
    """
    if algorithm is not None and algorithm not in _HEX_DIGITS:
        raise TacoValidationError(
            f"checksum must be one of {list(CHECKSUM_ALGORITHMS)} or None, found {algorithm!r}"
        )
    return algorithm


def new_hasher(algorithm: str) -> Hasher:
    """A fresh incremental hasher for ``algorithm``.

    Raises:
        TacoFormatError: the algorithm is not one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> h = new_hasher("sha256"); h.update(b"abc"); h.hexdigest()[:8]
        'ba7816bf'
    """
    if algorithm == "crc32c":
        return _Crc32c()
    if algorithm == "xxh3":
        library = _xxh3_library()
        if library is not None:
            return _Xxh3(library)
        import xxhash

        return _Clean(xxhash.xxh3_64())
    if algorithm == "sha256":
        return _Clean(hashlib.sha256())
    raise TacoFormatError(
        f"{CHECKSUM}: expected an algorithm among {list(CHECKSUM_ALGORITHMS)}, found {algorithm!r}"
    )


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest value; ``str()`` gives its stored form.

    Example:
        >>> parse_checksum("crc32c:e3069283")
        Digest(algorithm='crc32c', hexdigest='e3069283')
    """

    algorithm: str
    hexdigest: str

    def __str__(self) -> str:
        return f"{self.algorithm}:{self.hexdigest}"


class StreamingDigest:
    """A digest fed with buffers as they are written; ``value()`` is the stored form.

    Args:
        algorithm: one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> d = StreamingDigest("sha256")
        >>> d.update(b"abc")
        >>> d.value()[:15]
        'sha256:ba7816bf'
    """

    def __init__(self, algorithm: str) -> None:
        check_algorithm(algorithm)
        self.algorithm = algorithm
        self._hasher = new_hasher(algorithm)

    def update(self, data: Buffer) -> None:
        self._hasher.update(data)

    def update_from(self, buffer: bytearray) -> Callable[[int], None]:
        """A function that feeds the first ``n`` bytes of ``buffer``: ``feed(n)``.

        For a copy loop that refills one buffer: cheaper per call than
        ``update(view[:n])`` (a CRC-32C is fed by address, with no object per
        call).  ``buffer`` must not be resized while the function is used.

        Example:
            >>> d = StreamingDigest("crc32c")
            >>> block = bytearray(b"123456789-")
            >>> feed = d.update_from(block)
            >>> feed(9)
            >>> d.value()
            'crc32c:e3069283'
        """
        if isinstance(self._hasher, _Crc32c | _Xxh3):
            return self._hasher.update_from(buffer)
        view, update = memoryview(buffer), self._hasher.update
        return lambda n: update(view[:n])

    def with_zip_crc(self, buffer: bytearray) -> Callable[[int, int], int] | None:
        """A function that feeds the first ``n`` bytes of ``buffer`` and returns their ZIP
        CRC-32 continuing ``crc``: ``crc = feed(n, crc)``, in one pass over the bytes.

        Only a CRC-32C offers it, with the extension's folding code (the ZIP
        CRC-32 folded while the crc32 instruction takes the CRC-32C: on the
        AMD EPYC here both at once cost about what the ZIP CRC-32 alone does);
        None otherwise (use :meth:`update_from` and :func:`crc32`).

        Example:
            >>> d = StreamingDigest("crc32c")
            >>> feed = d.with_zip_crc(bytearray(b"123456789-"))
            >>> feed is None or (hex(feed(9, 0)), d.value()) == ("0xcbf43926", "crc32c:e3069283")
            True
        """
        if isinstance(self._hasher, _Crc32c):
            return self._hasher.with_zip_crc(buffer)
        return None

    def value(self) -> str:
        """``"<algorithm>:<lowercase hex>"``."""
        return f"{self.algorithm}:{self._hasher.hexdigest()}"


def parse_checksum(value: object, where: str = CHECKSUM) -> Digest:
    """Parse ``"<algorithm>:<lowercase hex>"``.

    Raises:
        TacoFormatError: not a string of that form, an unknown algorithm, or
            a digest of the wrong length for its algorithm.

    Example:
        >>> parse_checksum("xxh3:00000000000000ff").algorithm
        'xxh3'
    """
    if not isinstance(value, str):
        raise TacoFormatError(
            f"{where}: expected a string '<algorithm>:<lowercase hex>', found {value!r}"
        )
    match = _VALUE.fullmatch(value)
    if match is None:
        raise TacoFormatError(
            f"{where}: expected '<algorithm>:<lowercase hex>', found {value[:100]!r}"
        )
    algorithm, hexdigest = match.groups()
    digits = _HEX_DIGITS.get(algorithm)
    if digits is None:
        raise TacoFormatError(
            f"{where}: expected an algorithm among {list(CHECKSUM_ALGORITHMS)}, found {algorithm!r}"
        )
    if len(hexdigest) != digits:
        raise TacoFormatError(
            f"{where}: a {algorithm} digest has {digits} hex digits, found {len(hexdigest)}"
        )
    return Digest(algorithm, hexdigest)


def digest_bytes(algorithm: str, data: Buffer) -> Digest:
    """The digest of ``data`` with ``algorithm``.

    Example:
        >>> str(digest_bytes("crc32c", b"123456789"))
        'crc32c:e3069283'
    """
    hasher = new_hasher(algorithm)
    hasher.update(data)
    return Digest(algorithm, hasher.hexdigest())


def _crc32c_value(data: Buffer) -> str:
    return f"crc32c:{_crc32c_extend()(0, data):08x}"


def _xxh3_value(data: Buffer) -> str:
    library = _xxh3_library()
    if library is not None:
        return f"xxh3:{library.one_shot(data):016x}"
    import xxhash

    _clean_vectors()()
    return f"xxh3:{xxhash.xxh3_64_hexdigest(data)}"


def _sha256_value(data: Buffer) -> str:
    _clean_vectors()()
    return f"sha256:{hashlib.sha256(data).hexdigest()}"


_ONE_SHOT: Final[dict[str, Callable[[Buffer], str]]] = {
    "crc32c": _crc32c_value,
    "xxh3": _xxh3_value,
    "sha256": _sha256_value,
}


def _one_shot(algorithm: str) -> Callable[[Buffer], str]:
    """``algorithm``'s general one-shot digest; TacoFormatError for an unknown one."""
    general = _ONE_SHOT.get(algorithm)
    if general is None:
        raise TacoFormatError(
            f"{CHECKSUM}: expected an algorithm among {list(CHECKSUM_ALGORITHMS)}, "
            f"found {algorithm!r}"
        )
    return general


@functools.cache
def value_call(algorithm: str) -> Callable[[Buffer], str]:
    """:func:`digest_value` for one ``algorithm``, chosen once: the writer's call per sample.

    A ``bytes`` object of at most 256 KiB goes straight to the library,
    keeping the GIL, in one Python frame: CRC-32C through google-crc32c's C
    extension (it takes ``bytes`` without a copy), XXH3 through whichever of
    :func:`_xxh3_calls` :func:`_fastest` finds quickest on this CPU.  A writer
    spends about 30-45 us per 16 KiB sample; the general path cost 1.4 us of
    digest there, this one about 0.9 us (CRC-32C) or 1.2 us (XXH3), and
    looking the algorithm up per sample (``check_algorithm``, then
    :func:`digest_value`'s dispatch) about 0.3-0.5 us more.  Only
    ``algorithm``'s library is loaded.  Other buffers take the general path.

    Raises:
        TacoFormatError: the algorithm is not one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> value_call("crc32c")(b"123456789")
        'crc32c:e3069283'
    """
    general = _one_shot(algorithm)
    limit = _HOLD_GIL_MAX
    if algorithm == "crc32c":
        crc = _crc32c_value_call()
        if crc is None:
            return general  # pragma: no cover - a pure-Python google-crc32c
        return lambda data: (
            f"crc32c:{crc(data):08x}"
            if type(data) is bytes and len(data) <= limit
            else general(data)
        )
    if algorithm == "xxh3":
        return _fastest(_xxh3_calls(general))[1]
    return general


_WHEEL_MAX: Final = 32 * 1024
"""Up to this size a ``bytes`` object may take the xxhash wheel's XXH3 (a C extension
call, about 0.1 us): above it ``libxxhash``'s AVX2/AVX-512 code gains more than its
ctypes call costs (about 1 us).  The crossing measured about 48 KiB on the Intel
AVX-512 host and below 64 KiB on the AMD one (64 KiB after the ZIP CRC-32: 2.35 us
more through the library, 2.75 us through the wheel)."""


def _xxh3_calls(general: Callable[[Buffer], str]) -> dict[str, Callable[[Buffer], str]]:
    """The equivalent XXH3 calls :func:`value_call` chooses from, by name: each of
    :func:`_xxh3_batches` on one ``bytes`` object of at most 256 KiB; other buffers
    take ``general``."""
    limit = _HOLD_GIL_MAX

    def one(batch: Callable[[list[bytes]], list[int]]) -> Callable[[Buffer], str]:
        def call(data: Buffer) -> str:
            if type(data) is bytes and len(data) <= limit:
                return f"xxh3:{batch([data])[0]:016x}"
            return general(data)

        return call

    return {name: one(batch) for name, batch in _xxh3_batches().items()}


_TRIAL: Final = bytes(range(256)) * 64
"""What :func:`_fastest` times: 16 KiB, a small sample."""


def _fastest(
    calls: Mapping[str, Callable[[D], V]],
    rounds: int = 5,
    data: D = _TRIAL,  # type: ignore[assignment]
    before: Callable[[D], object] = crc32,  # type: ignore[assignment]
) -> tuple[str, Callable[[D], V]]:
    """The fastest of equivalent digest calls on this CPU, timed as the writer uses them.

    Each round times every call four times on ``data``, each right after
    ``before`` on it, by default the ZIP CRC-32 of it (the writer's order, and
    the vector state ISA-L leaves; a batch call is timed on a batch, after the
    CRC-32 of each buffer);
    a call's figure is its best round, the least disturbed by other processes.
    Rounds interleave the calls, so a slow spell of the machine hits them all.
    About 0.5 ms, once per process and algorithm.  A call whose value differs
    from the first's is never chosen: the choice changes the speed, never the
    digest.

    Example:
        >>> calls = {"once": lambda d: digest_value("crc32c", d),
        ...          "ten times": lambda d: [digest_value("crc32c", d) for _ in range(10)][0]}
        >>> _fastest(calls)[0]
        'once'
    """
    names = list(calls)
    expected = calls[names[0]](data)
    usable = [name for name in names if calls[name](data) == expected]
    best = dict.fromkeys(usable, float("inf"))
    clock = time.perf_counter
    for _ in range(rounds):
        for name in usable:
            call = calls[name]
            started = clock()
            for _ in range(4):
                before(data)
                call(data)
            best[name] = min(best[name], clock() - started)
    name = min(usable, key=best.__getitem__)
    return name, calls[name]


@dataclass(frozen=True, slots=True)
class BatchDigest:
    """One algorithm's digests of many small ``bytes`` objects, kept as integers.

    The writer's path for files read into memory, 16 at a time: :attr:`of`
    calls the library once per buffer from C (``map`` over the C function:
    no Python frame and no string per sample), and :func:`stored_ascii`
    formats a whole level's integers at once.  In ``create()`` of 10,000 files
    of 16 KiB (AMD EPYC, tmpfs) the digests took 1.1 us per sample this way
    and 1.8 us through :func:`value_call` (an f-string alone is about 0.27 us).

    Example:
        >>> batch = batch_digest("crc32c")
        >>> stored_ascii(batch.algorithm, np.array(batch.of([b"123456789"]), np.uint64)).tobytes()
        b'crc32c:e3069283'
    """

    algorithm: str
    of: Callable[[list[bytes]], list[int]]
    """Integer digests of buffers, each a ``bytes`` object of at most 256 KiB."""


@functools.cache
def batch_digest(algorithm: str) -> BatchDigest | None:
    """The :class:`BatchDigest` of ``algorithm``, chosen once per process; None for
    ``sha256`` (its digest is no machine integer, and its compute dwarfs the call).

    CRC-32C is :func:`_crc32c_value_call`'s one C call (the project's extension
    where it runs, google-crc32c's otherwise).  XXH3, on a CPU without AVX-512,
    is :func:`_xxh3_many`: ``libxxhash`` called from C for the whole batch.
    Without that extension it is the xxhash wheel's for ``bytes`` up to 32 KiB
    (``libxxhash`` above): a ctypes call to the library costs more than its
    faster code saves on a small sample (0.3 us more per 16 KiB on an AMD
    EPYC), and nothing leaves the upper vector state dirty, so nothing is
    timed (the trial and the library's ctypes checks took 1.2 ms of a 10k x
    16 KiB ``create()``).  On an AVX-512 CPU it is whichever of
    :func:`_xxh3_batches` :func:`_fastest` finds quickest.

    Raises:
        TacoFormatError: the algorithm is not one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> batch_digest("xxh3").of([b"", b"abc"]) == [0x2D06800538D394C2, 0x78AF5F94892F3950]
        True
    """
    _one_shot(algorithm)
    if algorithm == "crc32c":
        crc = _crc32c_value_call()
        if crc is None:
            extend = _crc32c_extend()  # pragma: no cover - a pure-Python google-crc32c
            return BatchDigest(algorithm, lambda datas: [extend(0, d) for d in datas])
        return BatchDigest(algorithm, lambda datas: list(map(crc, datas)))
    if algorithm == "xxh3":
        if "avx512f" not in _cpu_flags():
            return BatchDigest(algorithm, _xxh3_many() or _xxh3_wheel_batch())
        _, call = _fastest(_xxh3_batches(), data=_TRIALS, before=_crc32_each)
        return BatchDigest(algorithm, call)
    return None


@functools.cache
def _xxh3_many() -> Callable[[list[bytes]], list[int]] | None:
    """``libxxhash``'s XXH3 of a whole batch in one call (``taco_gdal._xxh3.many``).

    The library's AVX2 code called from C, with no ctypes call per sample: on
    the AMD EPYC of the twelfth session, 0.41 us per 16 KiB sample in batches
    of 16, against 0.92 us through the wheel (best of 7 x 2,000 batches, the
    samples in cache), about 5 ms of a 10k-sample ``create()``.  None where the
    extension was not built, the library was not found, or its value differs
    from the wheel's at one length of :data:`_XXH3_CHECK`.

    Example:
        >>> many = _xxh3_many()
        >>> many is None or many([b"", b"abc"]) == [0x2D06800538D394C2, 0x78AF5F94892F3950]
        True
    """
    try:
        from taco_gdal import _xxh3
    except ImportError:  # pragma: no cover - installed without a C compiler
        return None
    if not _xxh3.available:  # pragma: no cover - no libxxhash on this system
        return None
    import xxhash

    samples = _xxh3_check_samples()
    if _xxh3.many(samples) != [xxhash.xxh3_64_intdigest(sample) for sample in samples]:
        return None  # pragma: no cover - a libxxhash whose XXH3 is not the wheel's
    return _xxh3.many


_TRIALS: Final = [bytes([i]) * 4096 + bytes(range(256)) * 48 for i in range(4)]
"""What :func:`_fastest` times a batch call on: four small samples of 16 KiB."""


def _crc32_each(datas: list[bytes]) -> None:
    for data in datas:
        crc32(data)


def _xxh3_wheel_batch() -> Callable[[list[bytes]], list[int]]:
    """XXH3 of ``bytes`` objects through the xxhash wheel (about 0.1 us a call, then
    27 GB/s of legacy SSE code); a buffer above 32 KiB takes ``libxxhash``, loaded
    on the first such buffer, when it exists.

    Example:
        >>> _xxh3_wheel_batch()([b"abc"]) == [0x78AF5F94892F3950]
        True
    """
    import xxhash

    wheel, small = xxhash.xxh3_64_intdigest, _WHEEL_MAX

    def by_wheel(datas: list[bytes]) -> list[int]:
        if max(map(len, datas), default=0) <= small:
            return list(map(wheel, datas))
        hold = _xxh3_hold()
        if hold is None:  # pragma: no cover - no libxxhash: the wheel alone
            return list(map(wheel, datas))
        return [wheel(d) if len(d) <= small else hold(d, len(d)) for d in datas]

    return by_wheel


def _xxh3_batches() -> dict[str, Callable[[list[bytes]], list[int]]]:
    """The equivalent XXH3 calls on ``bytes`` objects of at most 256 KiB, by name:
    :func:`batch_digest` (and, a buffer at a time, :func:`value_call`) choose from them.

    ``libxxhash`` by ctypes (about 1 us per call, then 30-60 GB/s) and the xxhash
    wheel (:func:`_xxh3_wheel_batch`), the latter also after clearing the
    upper vector state (:func:`_clean_vectors`, needed on CPUs where ISA-L's
    AVX-512 CRC leaves it dirty).  Which is fastest for a small sample depends
    on the CPU: on an AMD EPYC without AVX-512, 16 KiB right after the ZIP
    CRC-32 took 0.7 us more through the wheel, 0.9 us with the state cleared,
    1.0 us through the library; on an Intel CPU with AVX-512 the wheel without
    the clearing paid 4.7x on 256 KiB.  The third is offered only on CPUs with
    AVX-512 (setting up the clearing costs about 0.7 ms).
    """
    by_wheel = _xxh3_wheel_batch()
    calls: dict[str, Callable[[list[bytes]], list[int]]] = {"xxhash wheel": by_wheel}
    many = _xxh3_many()
    if many is not None:
        calls["libxxhash, one call"] = many
    hold = _xxh3_hold()
    if hold is not None:

        def by_library(datas: list[bytes], hold: Callable[[bytes, int], int] = hold) -> list[int]:
            return [hold(d, len(d)) for d in datas]

        calls["libxxhash"] = by_library
    clean = _clean_vectors() if "avx512f" in _cpu_flags() else _nothing
    if clean is not _nothing:

        def by_clean_wheel(datas: list[bytes]) -> list[int]:
            clean()  # once: nothing between these calls dirties the state again
            return by_wheel(datas)

        calls["xxhash wheel, clean state"] = by_clean_wheel
    return calls


def _xxh3_hold() -> Callable[[bytes, int], int] | None:
    """``libxxhash``'s one-shot XXH3 that keeps the GIL, None without the library."""
    library = _xxh3_library()
    return None if library is None else library.one_shots[1]


def stored_ascii(
    algorithm: str, digests: npt.NDArray[np.uint64] | npt.NDArray[np.uint8]
) -> npt.NDArray[np.uint8]:
    """The stored form ``"<algorithm>:<hex>"`` of each digest, one row of ASCII bytes
    per digest, all formatted at once: ``digests`` are the integers of a
    :class:`BatchDigest`, or rows of raw (big-endian) digest bytes.

    Example:
        >>> stored_ascii("xxh3", np.array([1, 2**64 - 1], np.uint64)).tobytes()
        b'xxh3:0000000000000001xxh3:ffffffffffffffff'
        >>> stored_ascii("crc32c", np.array([[0xE3, 0x06, 0x92, 0x83]], np.uint8)).tobytes()
        b'crc32c:e3069283'
    """
    digits = _HEX_DIGITS[algorithm]
    if digests.dtype == np.uint64:
        digests = digests.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - digits // 2 :]
    if digests.ndim != 2 or digests.shape[1] * 2 != digits:
        raise TacoValidationError(
            f"{algorithm} digests: expected rows of {digits // 2} bytes, "
            f"found an array of shape {digests.shape}"
        )
    prefix = np.frombuffer(f"{algorithm}:".encode(), np.uint8)
    # in C, about 8x numpy's nibble lookup; from the array's memory, to bytes, no copy between
    hexed = binascii.hexlify(np.ascontiguousarray(digests).data)
    rows = np.empty((len(digests), prefix.size + digits), np.uint8)
    rows[:, : prefix.size] = prefix
    rows[:, prefix.size :] = np.frombuffer(hexed, np.uint8).reshape(-1, digits)
    return rows


def digest_value(algorithm: str, data: Buffer) -> str:
    """The stored form ``"<algorithm>:<hex>"`` of the digest of ``data``, in one call.

    No hasher object, and the CRC-32C and XXH3 of a small buffer keep the GIL
    (a release costs more than the work when other threads run).  Equal to
    :class:`StreamingDigest`'s value.  A caller digesting many samples with one
    algorithm takes :func:`value_call` once instead.

    Raises:
        TacoFormatError: the algorithm is not one of ``crc32c``, ``xxh3``, ``sha256``.

    Example:
        >>> digest_value("crc32c", b"123456789")
        'crc32c:e3069283'
    """
    return value_call(algorithm)(data)


@functools.cache
def raw_digests(algorithm: str) -> Callable[[Sequence[Buffer]], bytes]:
    """Raw digests of several buffers at once, concatenated: for SHA-256 the extension's
    ``sha256_many`` (three in flight, in lanes) where it was built, else hashlib.

    Example:
        >>> raw_digests("sha256")([b"abc"]) == hashlib.sha256(b"abc").digest()
        True
    """
    if algorithm == "sha256":
        try:
            many: Callable[[Sequence[Buffer]], bytes] = importlib.import_module(
                NATIVE_SHA256
            ).sha256_many
            return many
        except ImportError:
            pass
    return lambda datas: b"".join(hashlib.new(algorithm, data).digest() for data in datas)
