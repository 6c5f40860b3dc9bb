"""SHA-256 of small members, computed by a helper process from the bytes written.

A SHA-256 of a 16 KiB sample takes about 8 us (SHA-NI), a sixth of what the
ZIP writer spends on the sample.  Inline it added 25-33% to ``create()`` of
10,000 such samples.  The process's digest thread (:mod:`._copy`) does not
help with small members: every hashlib call hands the GIL back and forth
with the writing thread, and each hand-off waits for a thread to wake.

A :class:`DigestProcess` is another interpreter (``python -I -S``, no
imports but the package's C extension, loaded from its folder, whose
``sha256_many`` digests up to three members at once with the SHA
extensions: half the helper's CPU time; ``hashlib`` only without it),
started for the write.  It is ready about 12 ms after it starts (it was 19 ms
when the extension was loaded through ``importlib.util`` and ``hashlib``
imported up front).  A thread of the writer starts it (:class:`_Spawn`), so
the writer does not wait for it.  The writing thread only tells it where
each member is (16 bytes: position and size, sent 64 members at a time, once
the output's buffer has written them out), and it reads the member back
from the output file (its pages are in the page cache: the bytes written,
not the source again) and digests it on the other core.  The digests come
back 32 bytes each, in order, and are read when 1,024 are owed and at the
end; the level's digest column is then formatted from all of them at once.

The helper does not sleep on the request pipe: it naps (1 ms, doubling to 8 ms
while nothing comes) and reads what arrived.  A write to a pipe that wakes a
sleeping process cost the writer 19.6 us on this machine's VM (the wake-up is
an inter-processor interrupt), against 1.2 us otherwise, and a 10k-sample
write sends 157 requests.  The writer pokes a second pipe, which the helper
does wait on, only when it is about to wait for digests itself.

Flow control: no more than :data:`_IN_FLIGHT` members (and :data:`_PENDING`
more) are outstanding, so neither pipe ever fills (requests 20 KiB, results
40 KiB, pipes 64 KiB) and neither side can block the other.  If the helper
cannot start (no Python interpreter to run: frozen, embedded as in QGIS) the
writer digests inline; if it dies or misbehaves, the digests it owes are
computed by the writer from the output, so a digest is never lost or wrong.  A write that ends
before the helper has answered at all (a few hundred small samples) does
not wait for it either: the writer digests those members itself, 16 at a
time with ``sha256_many``.  Waiting for the helper to start had made
``create()`` of 20 samples of 16 KiB take 27 ms with SHA-256 against 7 ms
without.
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import hashlib
import importlib.util
import logging
import os
import select
import struct
import subprocess
import sys
import weakref
from collections.abc import Callable
from typing import Final

from taco_gdal.errors import TacoIOError

__all__ = ["PROCESS_DIGESTS", "DigestProcess", "start_digest_process"]

log = logging.getLogger(__name__)

PROCESS_DIGESTS: Final = frozenset({"sha256"})
"""Digests of small members the ZIP writer hands to a :class:`DigestProcess`."""

_BATCH: Final = 64
"""Members per request message, once their bytes have left the output's buffer."""
_IN_FLIGHT: Final = 1024
"""Members sent and not answered before the writer reads answers (and waits for them)."""
_PENDING: Final = 256
"""Members whose requests wait for their bytes to leave the output's buffer, at most; then
the buffer is flushed.  With :data:`_IN_FLIGHT` this bounds what the pipes hold: 20 KiB
of requests and 40 KiB of digests, below a pipe's 64 KiB, so neither side blocks."""
_REQUEST: Final = struct.Struct("<QQ")
_DIGEST_SIZE: Final = 32

_CHILD: Final = r"""
import os, struct, sys
def lanes(path):
    try:  # the package's extension, from its folder: the helper imports nothing else
        sys.path.insert(0, os.path.dirname(path))
        from _sha256_thread import sha256_many
        return sha256_many
    except Exception:
        return None
    finally:
        del sys.path[0]
def one_by_one(datas):
    import hashlib
    return b"".join(hashlib.sha256(data).digest() for data in datas)
def requests(wake):
    # blocks of requests; with wake, the wait for the next is a nap that the writer's
    # requests do not cut short (a wake-up costs the writer about 20 us): a byte on wake does
    if wake is None:
        while chunk := os.read(0, 1 << 16):
            yield chunk
        return
    import select
    os.set_blocking(0, False)
    poke = select.poll()
    poke.register(wake, select.POLLIN)
    nap = 1
    while True:
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            if poke.poll(nap):
                os.read(wake, 1 << 12)
            nap = min(2 * nap, 8)
            continue
        if not chunk:
            return
        nap = 1
        yield chunk
def serve(fd, many, wake, request=struct.Struct("<QQ")):
    pending = b""
    for chunk in requests(wake):
        pending += chunk
        whole = len(pending) - len(pending) % request.size
        datas = []
        for position, size in request.iter_unpack(pending[:whole]):
            data = os.pread(fd, size, position)
            if len(data) != size:
                return 3
            datas.append(data)
        pending = pending[whole:]
        view = memoryview(many(datas))
        while view:
            view = view[os.write(1, view):]
    return 0
try:
    many = (len(sys.argv) > 2 and sys.argv[2] and lanes(sys.argv[2])) or one_by_one
    code = serve(int(sys.argv[1]), many, int(sys.argv[3]) if len(sys.argv) > 3 else None)
except OSError:  # the writer closed the pipes (it stopped waiting): end quietly
    code = 4
sys.exit(code)
"""
NATIVE_SHA256: Final = "taco_gdal._sha256_thread"
"""The C extension whose ``sha256_many`` digests several members at once (optional)."""


@functools.cache
def native_path() -> str | None:
    """The file of the :data:`NATIVE_SHA256` extension, None where it was not built."""
    try:
        spec = importlib.util.find_spec(NATIVE_SHA256)
    except ImportError:  # pragma: no cover - the package itself is importable here
        return None
    return spec.origin if spec is not None and spec.has_location else None


def _interpreter() -> str | None:
    """A Python interpreter to run the helper with; None when this process is not one
    (frozen, or embedded in an application whose executable is not Python)."""
    executable = sys.executable
    if not executable or getattr(sys, "frozen", False):
        return None
    return executable if os.path.basename(executable).lower().startswith("python") else None


def start_digest_process(
    algorithm: str,
    output: int,
    flush: Callable[[], None],
    cpus: set[int] | None = None,
    visible: Callable[[], int] | None = None,
) -> DigestProcess | None:
    """A :class:`DigestProcess` of ``algorithm`` reading ``output``, placed on
    ``cpus`` when given (the writer's caller passes
    :func:`~taco_gdal.write._cpus.other_cpus`, and starts no helper at all when
    that is empty); None when the algorithm is not one of
    :data:`PROCESS_DIGESTS` or no helper can start.  ``visible``, when given,
    says how many bytes of the output the helper can read without a ``flush``.

    The helper is started by a thread of its own (:class:`_Spawn`): this thread
    does not wait for it."""
    if algorithm not in PROCESS_DIGESTS:
        return None
    executable = _interpreter()
    if executable is None or os.name != "posix":  # pass_fds, pread, poll: POSIX only
        return None
    ends: list[int] = []
    try:
        for _ in range(3):
            ends.extend(os.pipe())
        duplicate = os.dup(output)  # the helper's own: the writer may close `output` first
    except OSError as exc:
        for fd in ends:
            os.close(fd)
        log.debug("no digest helper process (%s): digests are computed inline", exc)
        return None
    requests_in, requests, answers, answers_out, nap, wake = ends
    argv = [executable, "-I", "-S", "-c", _CHILD, str(duplicate), native_path() or "", str(nap)]
    try:
        spawn = _Spawn(argv, (requests_in, answers_out, nap, duplicate), cpus)
    except RuntimeError as exc:  # no new thread (the interpreter is shutting down)
        for fd in [*ends, duplicate]:
            os.close(fd)
        log.debug("no digest helper process (%s): digests are computed inline", exc)
        return None
    return DigestProcess(algorithm, output, flush, spawn, (requests, answers, wake), visible)


class _Spawn:
    """The helper process, started by a thread of its own, which then reaps it.

    ``subprocess.Popen`` returns only once the child has replaced itself with the
    interpreter, and the calling thread waits for that (``vfork``): 0.3 to 7 ms
    in ``create()`` of 10k samples (7 ms in most rounds: the child is placed
    on the other CPU, which must wake first), against a write of 0.43 s.  The
    writer already holds its ends of the pipes, so it sends requests at once;
    they wait in the pipe until the helper reads them.

    Args:
        argv: the helper's command line.
        child_ends: its standard input, standard output, then the descriptors
            it inherits (``argv`` names them); all closed here once it started.
        cpus: where the helper may run (None: anywhere).
    """

    def __init__(
        self, argv: list[str], child_ends: tuple[int, int, int, int], cpus: set[int] | None
    ) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.error: OSError | None = None
        self._started = _thread.allocate_lock()
        self._started.acquire()
        _thread.start_new_thread(self._run, (argv, child_ends, cpus))

    def wait(self) -> subprocess.Popen[bytes] | None:
        """The helper once started, None when it could not start."""
        with self._started:
            return self.child

    def outcome(self) -> str:
        """How the helper ended, for a log message."""
        child = self.wait()
        if child is None:
            return f"it could not start: {self.error}"
        try:
            return f"exit code {child.wait(timeout=1)}"
        except subprocess.TimeoutExpired:
            return "it stopped answering"

    def _run(
        self, argv: list[str], child_ends: tuple[int, int, int, int], cpus: set[int] | None
    ) -> None:
        stdin, stdout, *inherited = child_ends
        try:
            self.child = subprocess.Popen(
                argv, stdin=stdin, stdout=stdout, pass_fds=inherited, bufsize=0
            )
        except OSError as exc:  # the writer finds its pipes broken and digests alone
            self.error = exc
        finally:
            for fd in child_ends:
                os.close(fd)
            self._started.release()
        if self.child is None:
            return
        if cpus:
            with contextlib.suppress(OSError):  # placement only: the helper works anywhere
                os.sched_setaffinity(self.child.pid, cpus)
        _reap(self.child)  # it ends when the writer closes its requests


class DigestProcess:
    """Digests of members written to ``output``, computed by the helper ``spawn`` starts.

    Members are numbered in the order they are submitted; :meth:`digests` gives
    all their raw digests at once, in that order, to be formatted together
    (:func:`~taco_gdal.format.checksum.stored_ascii`): no object and no string
    per member on the writing thread.

    Requests are sent :data:`_BATCH` members at a time, only for members
    already readable from the output (``visible``), so the output is not
    flushed for the helper: its buffer goes out when full, as without a
    digest.  Answers are read only when :data:`_IN_FLIGHT` members are owed, and
    at the end.  Both cost the writer a system call each time: a flush (16 us)
    and a read (16 us) per 64 members had added 5 ms to a 0.43 s write of 10k
    samples.

    Args:
        algorithm: the digest (one of :data:`PROCESS_DIGESTS`).
        output: a descriptor of the output open for reading, shared with the child.
        flush: makes every byte written so far visible to the child (the
            output's buffered writer's ``flush``).
        spawn: the helper, running ``_CHILD`` on ``output``.
        pipes: this side's ends: requests (written), answers (read), and the
            helper's wake-up (written).
        visible: how many bytes of the output are readable now (None: flush
            before every request).

    Example:
        >>> fd = os.open("members.bin", os.O_CREAT | os.O_RDWR, 0o644)
        >>> _ = os.pwrite(fd, b"abcdef", 0)
        >>> helper = start_digest_process("sha256", fd, lambda: None)
        >>> helper.submit(b"abc", 0), helper.submit(b"def", 3)
        (0, 1)
        >>> digests = helper.digests()
        >>> digests[:32] == hashlib.sha256(b"abc").digest(), digests[32:36].hex()
        (True, 'cb8379ac')
        >>> helper.close(); os.close(fd)
    """

    def __init__(
        self,
        algorithm: str,
        output: int,
        flush: Callable[[], None],
        spawn: _Spawn,
        pipes: tuple[int, int, int],
        visible: Callable[[], int] | None = None,
    ) -> None:
        self.algorithm = algorithm
        self.size = _DIGEST_SIZE
        """Bytes of one raw digest."""
        self._output = output
        self._flush = flush
        self._visible = visible
        self._spawn = spawn
        self._stopped = False
        self._count = 0
        self._batch = bytearray()
        """Requests not sent yet (16 bytes each: position and size)."""
        self._send_at = _BATCH * _REQUEST.size
        self._owed = bytearray()
        """Requests sent whose digest has not come back, in order."""
        self._done = bytearray()
        """Raw digests of members 0, 1, 2...: every one that came back."""
        self._partial = bytearray()
        self._requests, self._answers, self._wake = pipes
        os.set_blocking(self._answers, False)
        os.set_blocking(self._wake, False)
        self._poll = select.poll()  # not select(): a descriptor may be above FD_SETSIZE
        self._poll.register(self._answers, select.POLLIN)
        self._stop = weakref.finalize(self, _stop, pipes)

    def submit(self, data: bytes, position: int) -> int:
        """Ask for the digest of the member ``data`` written at ``position`` of the
        output (read back from there); returns the member's number (its place in
        :meth:`digests`)."""
        self._batch += _REQUEST.pack(position, len(data))
        number = self._count
        self._count += 1
        if len(self._batch) >= self._send_at:
            self._send_readable()
        return number

    def digests(self) -> bytes:
        """Every member's raw digest, in submitted order (waits for the last ones).

        Raises:
            TacoIOError: a member the helper did not digest could not be read
                back from the output here either.
        """
        self._flush()
        self._send(len(self._batch))
        if self._owed and not self._done:
            self._receive(until=self._owed_members())  # what came back, without waiting
            if not self._done and not self._partial and not self._stopped:
                # the helper is still starting (about 12 ms): members too few to make
                # the writer wait for it (1,088 at most) are digested here instead
                self.abort()
        self._receive(until=0)
        return bytes(self._done)

    def close(self) -> None:
        """Wait for every digest, then let the helper end."""
        self.digests()
        self.abort()

    def abort(self) -> None:
        """Let the helper end now; digests not known yet are never computed."""
        self._stop()
        self._stopped = True

    def _spawned(self) -> subprocess.Popen[bytes] | None:
        """The helper process, once started (None if it could not start)."""
        return self._spawn.wait()

    def _owed_members(self) -> int:
        return len(self._owed) // _REQUEST.size

    def _send_readable(self) -> None:
        """Send the requests of the members the helper can read now; flush first when
        :data:`_PENDING` members are waiting (a buffer larger than they are)."""
        batch = self._batch
        if self._visible is None or len(batch) >= _PENDING * _REQUEST.size:
            self._flush()
            cut = len(batch)
        else:
            cut = _readable(batch, self._visible())
        self._send(cut)
        self._send_at = len(self._batch) + _BATCH * _REQUEST.size

    def _send(self, cut: int) -> None:
        """Send the first ``cut`` bytes of requests (their members are readable)."""
        if not cut:
            return
        sent = self._batch[:cut]
        del self._batch[:cut]
        self._owed += sent
        if self._stopped:  # the helper is gone: the writer digests
            self._digest_here()
            return
        try:
            view = memoryview(sent)
            while view:
                view = view[os.write(self._requests, view) :]
        except OSError as exc:
            self._fail(f"cannot send requests: {exc}")
            return
        if len(self._owed) > _IN_FLIGHT * _REQUEST.size:
            self._receive(until=_IN_FLIGHT)

    def _receive(self, until: int) -> None:
        """Take the digests that came back; wait while more than ``until`` are owed."""
        while self._owed:
            if self._stopped:
                self._digest_here()
                return
            try:
                chunk: bytes | None = os.read(self._answers, _DIGEST_SIZE * self._owed_members())
            except BlockingIOError:
                chunk = None
            except OSError as exc:
                self._fail(f"cannot read digests: {exc}")
                continue
            if chunk == b"":
                self._fail(f"the helper ended ({self._spawn.outcome()})")
                continue
            if chunk:
                self._partial += chunk
                whole = len(self._partial) // _DIGEST_SIZE
                self._done += self._partial[: whole * _DIGEST_SIZE]
                del self._partial[: whole * _DIGEST_SIZE]
                del self._owed[: whole * _REQUEST.size]
            if self._owed_members() <= until:
                return
            if chunk is None:
                self._poke()
                self._poll.poll()

    def _poke(self) -> None:
        """Wake the helper if it naps: this thread is about to wait for it."""
        with contextlib.suppress(OSError):  # full (already poked) or the helper is gone
            os.write(self._wake, b"!")

    def _fail(self, why: str) -> None:
        log.warning("digest helper process: %s; the writer computes the rest", why)
        self.abort()

    def _digest_here(self) -> None:
        """The digests the helper owes, computed here from the output."""
        self._partial.clear()
        self._flush()
        many = _digests_here(self.algorithm)
        step = _HERE_BATCH * _REQUEST.size
        while self._owed:
            batch = _REQUEST.iter_unpack(self._owed[:step])
            self._done += many([self._read_back(position, size) for position, size in batch])
            del self._owed[:step]

    def _read_back(self, position: int, size: int) -> bytes:
        data = os.pread(self._output, size, position)
        if len(data) != size:
            raise TacoIOError(
                f"cannot digest the member of {size} bytes at {position} of the output: "
                f"read {len(data)} bytes back"
            )
        return data


def _readable(requests: bytearray, visible: int) -> int:
    """The bytes of ``requests`` (in the order written) whose members end at or before
    ``visible``: a binary search, two unpacks per step.

    Example:
        >>> requests = bytearray(_REQUEST.pack(0, 10) + _REQUEST.pack(10, 5) + _REQUEST.pack(20, 5))
        >>> _readable(requests, 14), _readable(requests, 15), _readable(requests, 99)
        (16, 32, 48)
    """
    low, high = 0, len(requests) // _REQUEST.size  # the first `low` members are readable
    while low < high:
        middle = (low + high) // 2
        position, size = _REQUEST.unpack_from(requests, middle * _REQUEST.size)
        if position + size <= visible:
            low = middle + 1
        else:
            high = middle
    return low * _REQUEST.size


_HERE_BATCH: Final = 16
"""Members read back and digested together when the writer digests them itself."""


@functools.cache
def _digests_here(algorithm: str) -> Callable[[list[bytes]], bytes]:
    """Raw digests of several members at once, in this process: the extension's
    ``sha256_many`` (three members in flight) where it was built, else hashlib.

    Example:
        >>> _digests_here("sha256")([b"abc"]) == hashlib.sha256(b"abc").digest()
        True
    """
    if algorithm == "sha256":
        try:
            many: Callable[[list[bytes]], bytes] = importlib.import_module(
                NATIVE_SHA256
            ).sha256_many
            return many
        except ImportError:
            pass
    return lambda datas: b"".join(hashlib.new(algorithm, data).digest() for data in datas)


def _stop(pipes: tuple[int, int, int]) -> None:
    """Close this side's pipes: the helper ends at the end of its requests, and the
    thread that started it reaps it (the interpreter's exit takes about 8 ms, 2% of a
    10k-sample write)."""
    for fd in pipes:
        os.close(fd)


def _reap(child: subprocess.Popen[bytes]) -> None:
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a helper stuck in a read
        child.kill()
        child.wait()
