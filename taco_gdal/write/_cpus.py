"""Where a digest helper may run: the CPUs this thread may use, and what its cgroup allows.

A helper (the native SHA-256 thread, or the helper process) only pays when it
runs beside the writer on another CPU.  Two limits say there is none:

- the thread's affinity holds one CPU (a pinned DataLoader worker, ``taskset``);
- the cgroup's CPU quota allows one CPU's worth of time or less (``docker run
  --cpus=1``, a Kubernetes limit of ``1``), while the affinity still lists
  every CPU of the host.  Writer and helper would then share that one CPU's
  time and the helper's hand-offs would be pure cost.

cgroup v2 (``cpu.max``) and v1 (``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``)
are read where ``/proc/self/mountinfo`` says they are mounted, at the
process's own cgroup and every ancestor up to the mount (the smallest quota
is the one that binds).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

__all__ = ["cpu_quota", "other_cpus"]

ONE_CPU: Final = 1.0
"""A quota of at most this many CPUs' worth of time leaves no room for a helper."""


def other_cpus(proc: Path = Path("/proc")) -> set[int] | None:
    """The CPUs this thread may run on, but the one it runs on now; None when unknown.

    A helper is kept off the writing thread's CPU.  A helper woken by the
    writer is otherwise often placed on the writer's own CPU (a pipe write is
    a synchronous wake-up) and takes turns with it while the other CPU idles:
    on two vCPUs, SHA-256 of 10k x 16 KiB added 9-13% to ``create()`` with the
    helper process placed by the scheduler, 8-9% kept off the writer's CPU
    (paired in-process runs, 20-40 rounds each, four runs).  An empty set
    means one CPU (by affinity, or by a cgroup quota of at most
    :data:`ONE_CPU`, :func:`cpu_quota`): no helper then, the writer digests inline.
    """
    try:
        allowed = os.sched_getaffinity(0)
        stat = _read(os.path.join(proc, "thread-self", "stat"))  # field 39: its last CPU
        here = int(stat.rsplit(")", 1)[1].split()[36])
    except (AttributeError, OSError, ValueError, IndexError):  # not Linux
        return None
    if here not in allowed:
        return None
    quota = cpu_quota(proc)
    return set() if quota is not None and quota <= ONE_CPU else allowed - {here}


def cpu_quota(proc: Path = Path("/proc")) -> float | None:
    """The CPUs' worth of time this process's cgroups allow (the smallest along its
    path, cgroup v2 or v1); None when there is no quota or it cannot be read.

    Example:
        >>> quota = cpu_quota()
        >>> quota is None or quota > 0
        True
    """
    try:
        memberships = _read(os.path.join(proc, "self", "cgroup")).splitlines()
        mounts = [
            line  # only cgroup mounts matter: "... - cgroup2 ..." or "... - cgroup ..."
            for line in _read(os.path.join(proc, "self", "mountinfo")).splitlines()
            if " - cgroup" in line
        ]
    except OSError:
        return None
    found = [
        quota
        for directory, files in _cpu_cgroup_dirs(memberships, mounts)
        for quota in [_quota_in(directory, files)]
        if quota is not None
    ]
    return min(found, default=None)


def _read(path: str) -> str:
    """The text of a small ``/proc`` or ``/sys`` file, read through its descriptor.

    With a ``Path`` and a text layer per file, :func:`other_cpus` took 0.5-0.9 ms
    of a fresh ``create()`` with SHA-256 (10k x 4 KiB, timed inside the write,
    three rounds), 0.35-0.45 ms this way; only the cgroup lines of
    ``mountinfo`` are parsed.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "surrogateescape")


_V2: Final = ("cpu.max",)
_V1: Final = ("cpu.cfs_quota_us", "cpu.cfs_period_us")
_Places = list[tuple[str, tuple[str, ...]]]
"""Directories of cgroups, each with the files holding its CPU quota."""


def _cpu_cgroup_dirs(memberships: list[str], mounts: list[str]) -> _Places:
    """Each directory holding this process's CPU quota or an ancestor's, with the
    files to read there (cgroup v2: ``cpu.max``; v1: the CFS quota and period)."""
    v2_path = v1_path = None
    for line in memberships:  # "hierarchy:controllers:path"
        hierarchy, controllers, path = [*line.split(":", 2), "", ""][:3]
        if hierarchy == "0" and controllers == "":
            v2_path = path
        elif "cpu" in controllers.split(","):
            v1_path = path
    found: _Places = []
    for line in mounts:  # "id parent major:minor root mountpoint options ... - fstype source super"
        fields, _, tail = line.partition(" - ")
        parts, kind = fields.split(), tail.split()
        if len(parts) < 5 or len(kind) < 3:
            continue
        root, point = _unescape(parts[3]), _unescape(parts[4])
        if kind[0] == "cgroup2" and v2_path is not None:
            found += _ancestors(point, root, v2_path, _V2)
        elif kind[0] == "cgroup" and "cpu" in kind[2].split(",") and v1_path is not None:
            found += _ancestors(point, root, v1_path, _V1)
    return found


def _ancestors(point: str, root: str, path: str, files: tuple[str, ...]) -> _Places:
    """``path`` (a cgroup, seen from this namespace) under the mount of cgroup
    ``root`` at ``point``, and its ancestors up to the mount."""
    if root != "/" and (path == root or path.startswith(root + "/")):
        path = path[len(root) :]  # a mount of a sub-tree (a container without cgroupns)
    names = [name for name in path.split("/") if name and name not in (".", "..")]
    return [(os.path.join(point, *names[:depth]), files) for depth in range(len(names), -1, -1)]


def _quota_in(directory: str, files: tuple[str, ...]) -> float | None:
    try:
        texts = [_read(os.path.join(directory, name)).split() for name in files]
    except OSError:  # no such cgroup here, or the controller is not enabled on it
        return None
    try:
        if files == _V2:  # "max 100000" or "150000 100000"
            quota, period = texts[0][0], texts[0][1]
        else:  # "-1" or "150000", then "100000"
            quota, period = texts[0][0], texts[1][0]
        if quota in ("max", "-1") or int(period) <= 0:
            return None
        return int(quota) / int(period)
    except (IndexError, ValueError):
        return None


def _unescape(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are octal escapes there."""
    for escaped, plain in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(escaped, plain)
    return field
