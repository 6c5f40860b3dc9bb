"""write/_cpus.py: a cgroup CPU quota of one CPU means no digest helper.

The quota is read from files laid out as the kernel lays them out (cgroup v2
and v1, a sub-tree mount as in a container, escaped mount points), and from a
real cgroup made here (v1 ``cpu``, or v2 where that is what the machine
mounts): a child process moved into a group with a quota of one CPU gets no
digest helper (the writer would digest inline), while its affinity still
lists every CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from taco_gdal.write._cpus import cpu_quota


def _proc(tmp_path: Path, cgroup: str, mountinfo: list[str]) -> Path:
    proc = tmp_path / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "self" / "cgroup").write_text(cgroup)
    (proc / "self" / "mountinfo").write_text("\n".join(mountinfo) + "\n")
    return proc


def _write(path: Path, text: str) -> None:
    path.mkdir(parents=True, exist_ok=True)
    for line in text.split(";"):
        name, value = line.split("=")
        (path / name).write_text(value + "\n")


def test_cgroup_v2_quota_is_the_smallest_along_the_path(tmp_path: Path) -> None:
    mount = tmp_path / "sys fs cgroup"  # a space: escaped as \040 in mountinfo
    _write(mount, "cpu.max=max 100000")
    _write(mount / "user.slice", "cpu.max=300000 100000")
    _write(mount / "user.slice" / "job", "cpu.max=150000 100000")
    escaped = str(mount).replace(" ", "\\040")
    proc = _proc(
        tmp_path,
        "0::/user.slice/job\n",
        [f"41 31 0:38 / {escaped} rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate"],
    )
    assert cpu_quota(proc) == 1.5
    _write(mount / "user.slice", "cpu.max=80000 100000")  # an ancestor binds harder
    assert cpu_quota(proc) == 0.8


def test_cgroup_v1_quota_and_an_unlimited_group(tmp_path: Path) -> None:
    mount = tmp_path / "cpu"
    _write(mount, "cpu.cfs_quota_us=-1;cpu.cfs_period_us=100000")
    _write(mount / "a", "cpu.cfs_quota_us=-1;cpu.cfs_period_us=100000")
    mountinfo = [
        f"32 31 0:29 / {mount} rw,relatime - cgroup cgroup rw,cpu,cpuacct",
        f"35 31 0:32 / {tmp_path / 'memory'} rw,relatime - cgroup cgroup rw,memory",
    ]
    proc = _proc(tmp_path, "4:memory:/a\n2:cpu,cpuacct:/a\n0::/\n", mountinfo)
    assert cpu_quota(proc) is None  # no quota anywhere
    _write(mount / "a", "cpu.cfs_quota_us=100000;cpu.cfs_period_us=100000")
    assert cpu_quota(proc) == 1.0


def test_a_sub_tree_mount_as_in_a_container(tmp_path: Path) -> None:
    # Docker without a cgroup namespace: /proc/self/cgroup names the host's path,
    # the mount shows the container's group at the mount point itself
    mount = tmp_path / "cgroup"
    _write(mount, "cpu.max=100000 100000")
    proc = _proc(
        tmp_path,
        "0::/system.slice/docker-abc.scope\n",
        [f"50 40 0:30 /system.slice/docker-abc.scope {mount} ro - cgroup2 cgroup2 rw"],
    )
    assert cpu_quota(proc) == 1.0


@pytest.mark.parametrize(
    "cpu_max", ["", "garbage", "100000 0", "max 100000", "-5"], ids=repr
)  # fmt: skip
def test_unreadable_quotas_are_no_quota(tmp_path: Path, cpu_max: str) -> None:
    mount = tmp_path / "cgroup"
    _write(mount, f"cpu.max={cpu_max}")
    proc = _proc(tmp_path, "0::/\n", [f"41 31 0:38 / {mount} rw - cgroup2 cgroup2 rw"])
    assert cpu_quota(proc) is None
    assert cpu_quota(tmp_path / "no proc") is None


@dataclass(frozen=True)
class QuotaGroup:
    """A real cgroup with the CPU controller, made for a test (v1 ``cpu`` or v2)."""

    path: Path
    v2: bool

    def set_cpus(self, cpus: int) -> None:
        if self.v2:
            (self.path / "cpu.max").write_text(f"{cpus * 100000} 100000")
        else:
            (self.path / "cpu.cfs_period_us").write_text("100000")
            (self.path / "cpu.cfs_quota_us").write_text(str(cpus * 100000))


def _cpu_controller() -> tuple[Path, bool]:
    """Where this machine mounts a CPU controller: cgroup v1 ``cpu``, else a cgroup v2
    hierarchy whose root hands ``cpu`` to its children."""
    v2 = None
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        kind, point = tail.split(), Path(fields.split()[4])
        if kind[0] == "cgroup" and "cpu" in kind[2].split(","):
            return point, False
        if kind[0] == "cgroup2" and "cpu" in (point / "cgroup.subtree_control").read_text().split():
            v2 = point
    assert v2 is not None, "the test needs a CPU cgroup controller (v1 cpu, or v2 with +cpu)"
    return v2, True


@pytest.fixture
def quota_group() -> Iterator[QuotaGroup]:
    """A real cgroup made for the test (as root) and removed after it."""
    root, v2 = _cpu_controller()
    group = root / f"taco-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    try:
        yield QuotaGroup(group, v2)
    finally:
        group.rmdir()


_CHILD = textwrap.dedent(
    """
    import json, os, sys
    with open(sys.argv[1] + "/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
    from taco_gdal.write._cpus import cpu_quota, other_cpus
    from taco_gdal.write._digest_thread import start_member_digests
    helper = start_member_digests("sha256", None, lambda: None)
    print(json.dumps({
        "quota": cpu_quota(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "others": None if (o := other_cpus()) is None else sorted(o),
        "helper": type(helper).__name__,
    }))
    """
)


@pytest.mark.parametrize("cpus", [1, 2])
def test_a_real_quota_of_one_cpu_starts_no_helper(quota_group: QuotaGroup, cpus: int) -> None:
    allowed = os.sched_getaffinity(0)
    assert len(allowed) >= 2, f"the test needs two CPUs, this process may use {allowed}"
    quota_group.set_cpus(cpus)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(quota_group.path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    seen = json.loads(done.stdout)
    assert seen["quota"] == cpus
    assert seen["affinity"] == sorted(allowed)  # the affinity does not show the quota
    if cpus == 1:
        assert seen["others"] == [] and seen["helper"] == "LaneDigests"  # on the writer's CPU
    else:
        assert len(seen["others"]) == len(allowed) - 1 and seen["helper"] == "DigestThread"
