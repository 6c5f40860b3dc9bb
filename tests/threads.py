"""Threads of a process as the kernel lists them (``/proc/<pid>/task``)."""

from __future__ import annotations

from pathlib import Path


def thread_cpus(name: str, pid: int | str = "self") -> set[int]:
    """The CPUs the thread called ``name`` of process ``pid`` (this one by default) may
    run on (its affinity)."""
    cpus = find_thread_cpus(name, pid)
    if cpus is None:
        raise AssertionError(f"no thread called {name!r} in process {pid}")
    return cpus


def find_thread_cpus(name: str, pid: int | str = "self") -> set[int] | None:
    """:func:`thread_cpus`, None while there is no such thread."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            if (task / "comm").read_text().strip() != name:
                continue
            status = (task / "status").read_text()
        except FileNotFoundError:  # a thread that just ended
            continue
        listed = next(
            line.split(":", 1)[1] for line in status.splitlines()
            if line.startswith("Cpus_allowed_list")
        )  # fmt: skip
        cpus: set[int] = set()
        for part in listed.strip().split(","):
            low, _, high = part.partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
        return cpus
    return None
