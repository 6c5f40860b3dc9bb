"""SHA-256 of small members, computed by a helper process from the ZIP as it is written.

The writer's side (answers looked up by position, what the helper missed read
back and digested) is :class:`~taco_gdal.write._output_digests.OutputDigests`,
shared with the native scan thread that does the helper's work where no
interpreter can be started.

A SHA-256 of a 16 KiB sample takes about 8 us (SHA-NI), a sixth of what the
ZIP writer spends on the sample.  Inline it added 25-33% to ``create()`` of
10,000 such samples.  The process's digest thread (:mod:`._copy`) does not
help with small members: every hashlib call hands the GIL back and forth
with the writing thread, and each hand-off waits for a thread to wake.

A :class:`DigestProcess` is another interpreter (``python -I -S``, no
imports but the package's C extension, loaded from its folder), started for
the write by a thread of the writer (:class:`_Spawn`), so the writer does not
wait for it.  It is ready about 12 ms after it starts.

The writing thread tells it nothing per member.  The helper reads the output
as it grows (up to its size, ``fstat``, 1 MiB per read), walks the ZIP's
local headers, and digests every member of up to ``limit`` bytes (the
writer's small-member limit; larger ones are digested as they are copied).
It appends the position and size of each to a file in memory
(``memfd_create``), which no pipe's capacity bounds, and the digest's stored
form (``sha256:`` and its hex) to another.  The walk is the extension's
``Scanner`` thread (:class:`~taco_gdal.write._output_digests.DigestScan`
runs the same one in the writer's process where no helper can start), up to
three members at once with the SHA extensions, while the helper's own
thread only waits for the writer's message; without the extension, the same
walk in Python with ``hashlib``.  Until the twenty-sixth session the helper
walked in Python whatever it had: 0.7 us more per member of the helper's CPU
(a finished ZIP of 10k members read by the helper, 12 runs: 3.9 against 3.1
us per 4 KiB member, 9.5 against 8.8 per 16 KiB), and ``create()`` of 10k x
4 KiB with SHA-256 took +4.9% [+2.4, +6.2] over the plain write against
+3.3% [+1.1, +4.9] with the scan thread (paired -1.5% [-2.3, +0.7], 80
blocks, ``bench/results/digest_s26_tmpfs_10000x4k_native_helper.json``).
When the samples are written the writer sends the helper where they end (8
bytes, :meth:`DigestProcess.members_written`), goes on to the metadata while
the helper digests the last members, then waits for its exit status, maps
both files and takes the stored forms by position, all at once
(:meth:`DigestProcess.stored_at`).  Until then the scan thread naps when it
has caught up (1 ms, doubling to 8 ms) and the helper's main thread sleeps
in a read of that one message (a closed pipe, the writer gone, ends it), so
the writer never wakes it (a write that wakes a sleeping process cost the
writer 19.6 us on this machine's VM: the wake-up is an inter-processor
interrupt).  The previous helper was sent 16 bytes per member, 64 at a time,
and returned 32 bytes per member through a pipe: about 0.5 us of the writing
thread per member (5 ms in ``create()`` of 10k samples, 2% of the write),
a flow control that bounded what the pipes held, and a flush of the buffer
when members waited for it.

The writer's own bytes decide what is digested: the helper reads the output
only below its size, stops at anything that is not a member header, and an
answer counts only when its position and size are those the writer recorded
for the row.  If the helper cannot start (no Python interpreter to run:
frozen, embedded as in QGIS) the writer digests inline; if it dies, stops or
misses a member, the writer digests what is missing from the output, so a
digest is never lost or wrong.  A write that ends before the helper has
found anything (a few hundred small samples) does not wait for it either:
the writer digests those members itself, 16 at a time with ``sha256_many``.
Waiting for the helper to start had made ``create()`` of 20 samples of 16
KiB take 27 ms with SHA-256 against 7 ms without.
"""

from __future__ import annotations

import _thread
import contextlib
import functools
import importlib.util
import logging
import os
import struct
import subprocess
import sys
import weakref
from collections.abc import Callable
from typing import Final

from taco_gdal.format.checksum import NATIVE_SHA256
from taco_gdal.write._output_digests import SMALL_MEMBER, OutputDigests, answer_files

__all__ = ["PROCESS_DIGESTS", "DigestProcess", "start_digest_process"]

log = logging.getLogger(__name__)

PROCESS_DIGESTS: Final = frozenset({"sha256"})
"""Digests of small members the ZIP writer hands to a :class:`DigestProcess`."""


_CHILD: Final = r"""
import binascii, os, select, struct, sys
HEADER = struct.Struct("<IHHHHHIIIHH")
FOUND = struct.Struct("<QQ")
WINDOW = 1 << 20
WHOLE = memoryview(bytearray(WINDOW))
def native_scanner(path):
    # the package's extension, from its folder: the helper imports nothing else
    try:
        sys.path.insert(0, os.path.dirname(path))
        from _sha256_thread import Scanner
        return Scanner
    except Exception:
        return None
    finally:
        del sys.path[0]
def one_by_one(datas):
    import hashlib
    return b"".join(hashlib.sha256(data).digest() for data in datas)
def stored_size(block, at, extra, xlen):
    # a ZIP64 member: its sizes are in the extra field (tag 1: original, then stored size)
    end = extra + xlen
    while extra + 4 <= end:
        tag, n = struct.unpack_from("<HH", block, extra)
        if tag == 1:
            values = struct.unpack_from(f"<{n // 8}Q", block, extra + 4)
            original = HEADER.unpack_from(block, at)[8]
            return values[1 if original == 0xFFFFFFFF and len(values) > 1 else 0]
        extra += 4 + n
    return None
def append(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
def scan(fd, position, readable, limit, found):
    # digest the members whose bytes are all below `readable`; returns where it stopped
    # and how much must be readable before it can go on (a member being written)
    need = position + HEADER.size
    while position + HEADER.size <= readable:
        # into one reused buffer: a fresh 1 MiB object per read is a fresh mapping to fault in
        got = os.preadv(fd, [WHOLE[: min(WINDOW, readable - position)]], position)
        block = WHOLE[:got]
        at, datas, places, broken = 0, [], [], None
        while at + HEADER.size <= len(block):
            signature, _, _, _, _, _, _, size, _, nlen, xlen = HEADER.unpack_from(block, at)
            start = at + HEADER.size + nlen + xlen
            if signature != 0x04034B50:
                broken = f"no member header at {position + at}"
                break
            if start > len(block):
                break
            if size == 0xFFFFFFFF:
                size = stored_size(block, at, at + HEADER.size + nlen, xlen)
                if size is None:
                    broken = f"no ZIP64 size at {position + at}"
                    break
            stop = start + size
            if position + stop > readable:
                need = position + stop
                if size > limit:  # not read: the next header is all it waits for
                    at = stop
                break
            if size <= limit:
                if stop > len(block):
                    if at:
                        break  # read again from this member
                    data = os.pread(fd, size, position + start)
                    if len(data) != size:
                        break
                    datas.append(data)
                else:
                    datas.append(block[start:stop])
                places.append(FOUND.pack(position + start, size))
            at = stop
        if datas:
            hexed = binascii.hexlify(one_by_one(datas))
            # the stored forms first: a place is never written without its digest
            append(found[1], b"".join(b"sha256:" + hexed[64 * i : 64 * i + 64]
                                      for i in range(len(places))))
            append(found[0], b"".join(places))
        del block, datas
        if broken:  # what came before it is digested; the writer digests the rest
            raise ValueError(broken)
        if not at:
            break
        position += at
        need = max(need, position + HEADER.size)
    return position, need
def serve(fd, limit, found):
    os.set_blocking(0, False)
    wait = select.poll()
    wait.register(0, select.POLLIN)
    position, need, end, nap = 0, 0, None, 1
    while True:
        readable = end if end is not None else os.fstat(fd).st_size
        moved = position
        if readable >= need:  # not while a large member is still being copied
            moved, need = scan(fd, position, readable, limit, found)
        if end is not None and moved >= end:
            return 0
        if end is not None and moved == position:
            return 5  # the end was given, and no member is left to read: not a ZIP
        nap = 1 if moved != position else min(2 * nap, 8)
        position = moved
        if end is None and wait.poll(nap):
            message = os.read(0, 8)
            if len(message) != 8:
                return 4
            end, = struct.unpack("<Q", message)
def serve_natively(scanner, fd, limit, found, cpus):
    scan = scanner(fd, limit, found[0], found[1], cpus)
    try:
        message = b""
        while len(message) < 8:  # blocking: the scan thread works meanwhile
            chunk = os.read(0, 8 - len(message))
            if not chunk:
                return 4
            message += chunk
        return scan.finish(struct.unpack("<Q", message)[0])
    finally:
        scan.close()
try:
    fd, limit = int(sys.argv[1]), int(sys.argv[2])
    found = (int(sys.argv[4]), int(sys.argv[5]))
    placed = sys.argv[6] if len(sys.argv) > 6 else ""  # its CPUs, for the thread it starts
    cpus = [int(cpu) for cpu in placed.split(",")] if placed else None
    scanner = len(sys.argv) > 3 and sys.argv[3] and native_scanner(sys.argv[3])
    if scanner:
        code = serve_natively(scanner, fd, limit, found, cpus)
    else:
        code = serve(fd, limit, found)
except (OSError, RuntimeError, ValueError, struct.error):
    code = 3
try:
    os.write(1, struct.pack("<Q", code))
except OSError:
    pass
sys.exit(code)
"""


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
    limit: int = SMALL_MEMBER,
) -> DigestProcess | None:
    """A :class:`DigestProcess` of ``algorithm`` digesting the members of up to
    ``limit`` bytes written to the ZIP ``output`` (a descriptor open for
    reading), placed on ``cpus`` when given (the writer's caller passes
    :func:`~taco_gdal.write._cpus.other_cpus`, and starts no helper at all when
    that is empty); None when the algorithm is not one of
    :data:`PROCESS_DIGESTS` or no helper can start.  ``flush`` makes every byte
    written so far readable (the output's buffered writer's).

    The helper is started by a thread of its own (:class:`_Spawn`): this thread
    does not wait for it."""
    if algorithm not in PROCESS_DIGESTS:
        return None
    executable = _interpreter()
    if executable is None or os.name != "posix":  # pass_fds, pread, poll: POSIX only
        return None
    ends: list[int] = []
    try:
        for _ in range(2):
            ends.extend(os.pipe())
        ends.extend(answer_files())
        ends.extend([os.dup(ends[-2]), os.dup(ends[-1])])  # the helper's ends of them
        ends.append(os.dup(output))  # the helper's own: the writer may close `output` first
    except OSError as exc:
        for fd in ends:
            os.close(fd)
        log.debug("no digest helper process (%s): digests are computed inline", exc)
        return None
    end_in, end_out, status_in, status_out, places, stored, appended, written, duplicate = ends
    argv = [
        executable, "-I", "-S", "-c", _CHILD,
        str(duplicate), str(limit), native_path() or "", str(appended), str(written),
        ",".join(str(cpu) for cpu in sorted(cpus or ())),
    ]  # fmt: skip
    try:
        spawn = _Spawn(argv, (end_in, status_out, appended, written, duplicate), cpus)
    except RuntimeError as exc:  # no new thread (the interpreter is shutting down)
        for fd in ends:
            os.close(fd)
        log.debug("no digest helper process (%s): digests are computed inline", exc)
        return None
    return DigestProcess(algorithm, output, flush, spawn, (end_out, status_in), (places, stored))


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

    def __init__(self, argv: list[str], child_ends: tuple[int, ...], cpus: set[int] | None) -> None:
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

    def _run(self, argv: list[str], child_ends: tuple[int, ...], cpus: set[int] | None) -> None:
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


class DigestProcess(OutputDigests):
    """Digests of the small members written to ``output``, found and computed by
    the helper ``spawn`` starts, while the writer goes on.

    The writer tells the helper nothing per member: the helper reads the ZIP as
    it grows, member header by member header.  :meth:`stored_at` ends the
    helper's work (once: it tells it where the members end and waits for it)
    and gives the stored forms of the members asked for, by the position of
    their bytes, all at once, from the helper's answers mapped.  A member the
    helper did not digest (it died, it stopped at something that is not a
    member, it was still starting) is read back and digested here, so a digest
    is never lost or wrong.

    Args:
        algorithm: the digest (one of :data:`PROCESS_DIGESTS`).
        output: a descriptor of the output open for reading, shared with the child.
        flush: makes every byte written so far readable by the child (the
            output's buffered writer's ``flush``).
        spawn: the helper, running ``_CHILD`` on ``output``.
        pipes: this side's ends: where the members end (written) and the
            helper's exit status (read).
        answers: the files the helper appends its answers to
            (:func:`~taco_gdal.write._output_digests.answer_files`).

    Example:
        >>> import hashlib
        >>> from taco_gdal.write.zipstream import ZipWriter
        >>> out = open("members.zip", "w+b")
        >>> writer = ZipWriter(out)
        >>> helper = start_digest_process("sha256", out.fileno(), out.flush)
        >>> a, b = writer.add_bytes("a", b"abc"), writer.add_bytes("b", b"de")
        >>> rows = helper.stored_at(np.array([b.data_offset, a.data_offset]), np.array([2, 3]))
        >>> rows[1].tobytes() == b"sha256:" + hashlib.sha256(b"abc").hexdigest().encode()
        True
        >>> rows[0, :15].tobytes()
        b'sha256:959a45d4'
        >>> helper.abort(); writer.close(); out.close()
    """

    def __init__(
        self,
        algorithm: str,
        output: int,
        flush: Callable[[], None],
        spawn: _Spawn,
        pipes: tuple[int, int],
        answers: tuple[int, int],
    ) -> None:
        super().__init__(algorithm, output, flush, answers)
        self._spawn = spawn
        self._end, self._status = pipes
        self._sent: bool | None = None
        """Whether the end was sent (None: not yet; False: the pipe was broken)."""
        self._stop = weakref.finalize(self, _stop, pipes)

    def _spawned(self) -> subprocess.Popen[bytes] | None:
        """The helper process, once started (None if it could not start)."""
        return self._spawn.wait()

    def _let_go(self) -> None:
        self._stop()

    def members_written(self) -> None:
        """Tell the helper now where the members end, once it has answered at all, so
        that it digests the last ones while the writer goes on to the metadata
        (:meth:`stored_at` then only waits for its exit status)."""
        if self._sent is None and self._stop.alive and os.fstat(self._files[0]).st_size:
            self._send(self._end_of_members())

    def _finish(self, asked: int) -> None:
        """Tell the helper where the members end, unless :meth:`members_written` did, and
        wait for it (not when it has found nothing yet and the members are few: they
        are digested here)."""
        if not self._stop.alive:
            return
        if self._sent is None:
            if os.fstat(self._files[0]).st_size == 0 and asked <= _HERE_LIMIT:
                # the helper is still starting (about 12 ms): members too few to make
                # the writer wait for it are digested here instead
                log.debug("digest helper not started yet: %d members digested here", asked)
                return
            self._send(self._end_of_members())
        if self._sent:
            self._wait()

    def _send(self, end: int) -> None:
        """Send ``end``, where the members end, once."""
        try:
            os.write(self._end, _END.pack(end))
            self._sent = True
        except OSError as exc:
            self._sent = False
            log.warning("digest helper process: %s; the writer computes the rest", exc)

    def _wait(self) -> None:
        """Wait for the helper's exit status."""
        try:
            status = b""
            while len(status) < _END.size:
                chunk = os.read(self._status, _END.size - len(status))
                if not chunk:
                    break
                status += chunk
        except OSError as exc:
            log.warning("digest helper process: %s; the writer computes the rest", exc)
            return
        if status != _END.pack(0):
            code = _END.unpack(status)[0] if len(status) == _END.size else None
            log.warning(
                "digest helper process: it stopped (status %s, %s); the writer computes the rest",
                code,
                self._spawn.outcome(),
            )


_END: Final = struct.Struct("<Q")
_HERE_LIMIT: Final = 1088
"""Members the writer digests itself, rather than wait, when the helper has found none yet."""


def _stop(pipes: tuple[int, int]) -> None:
    """Close this side's pipes: a helper still reading ends (its poll sees the pipe
    closed), and the thread that started it reaps it (the interpreter's exit takes
    about 8 ms, 2% of a 10k-sample write)."""
    for fd in pipes:
        os.close(fd)


def _reap(child: subprocess.Popen[bytes]) -> None:
    try:
        child.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - a helper stuck in a read
        child.kill()
        child.wait()
