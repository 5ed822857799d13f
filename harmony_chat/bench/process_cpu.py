"""The CPU time a running process and its children have used, read from ``/proc`` (Linux).

``bench --serve`` divides what ``serve`` (all its workers included) spent during a round by the
tokens it streamed: the cost per token that sets how many streams one machine's ``serve`` keeps up
with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class CpuTime:
    """User and system seconds."""

    user_s: float = 0.0
    system_s: float = 0.0

    def __sub__(self, other: CpuTime) -> CpuTime:
        return CpuTime(self.user_s - other.user_s, self.system_s - other.system_s)

    def __add__(self, other: CpuTime) -> CpuTime:
        return CpuTime(self.user_s + other.user_s, self.system_s + other.system_s)


def _ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def _own_cpu(pid: int) -> CpuTime | None:
    """One process's CPU time (None: gone, or not readable)."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    ticks = _ticks()
    return CpuTime(int(fields[11]) / ticks, int(fields[12]) / ticks)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def tree_cpu(pid: int) -> CpuTime | None:
    """The CPU time of ``pid`` and of every live process below it (None when ``pid`` is gone)."""
    own = _own_cpu(pid)
    if own is None:
        return None
    total = own
    for child in _children(pid):
        below = tree_cpu(child)
        if below is not None:
            total = total + below
    return total
