"""The python sandbox's memory cgroup: v2 and v1 in fake trees, a real one where this machine allows it.

``memory_cgroup`` takes the cgroup file system's root as ``root=`` but reads this process's own
cgroup from ``/proc/self/cgroup`` itself, with no parameter for it. The fake-tree tests therefore
point that one read at a file of their own by replacing the module's ``Path`` for ``memory_cgroup``
alone (``own_cgroup``); one test reads the real ``/proc/self/cgroup`` against a fake root mirroring it.
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harmony_chat.tools.python import cgroup as cgroup_module
from harmony_chat.tools.python import sandbox
from harmony_chat.tools.python.cgroup import CGROUP_ROOT, PREFIX, STALE_S, Cgroup, can_limit_memory, memory_cgroup
from harmony_chat.tools.python.kernel import kernel_argv
from harmony_chat.tools.python.sandbox import Platform, SandboxLimits, build_plan, describe

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="cgroups are Linux's")

MIB = 1024**2
NAME = re.compile(rf"{re.escape(PREFIX)}[0-9a-f]{{12}}")
"""A sandbox cgroup's name: the prefix and 6 random bytes in hex."""
V2_OWN = "/X11.slice/session-1.scope"
V1_OWN = "/Xpra/0123abcd"


@pytest.fixture(autouse=True)
def umask() -> Iterator[None]:
    """A known umask, so that the folders' modes are the modes asked for."""
    old = os.umask(0o022)
    yield
    os.umask(old)


@pytest.fixture
def own_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Give ``memory_cgroup`` a ``/proc/self/cgroup`` of the test's own text."""
    fake = tmp_path / "proc-self-cgroup"
    real_path = Path

    def path(name: str) -> Path:
        return fake if name == "/proc/self/cgroup" else real_path(name)

    def give(text: str) -> None:
        fake.write_text(text, encoding="ascii")

    monkeypatch.setattr(cgroup_module, "Path", path)
    return give


def v2_tree(root: Path, controllers: str = "cpu memory pids") -> Path:
    """A unified hierarchy whose ``V2_OWN`` gives its children ``controllers``; return that folder."""
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids rdma misc\n", encoding="ascii")
    own = root / V2_OWN.lstrip("/")
    own.mkdir(parents=True)
    (own / "cgroup.subtree_control").write_text(f"{controllers}\n", encoding="ascii")
    return own


def v1_tree(root: Path, own: str = V1_OWN) -> Path:
    """A v1 memory hierarchy under ``root/memory`` holding ``own``; return that folder."""
    hierarchy = root / "memory"
    (hierarchy / own.lstrip("/")).mkdir(parents=True)
    (hierarchy / "memory.limit_in_bytes").write_text("9223372036854771712\n", encoding="ascii")
    return hierarchy / own.lstrip("/")


def only_child(folder: Path) -> Path:
    """The one sandbox cgroup made in ``folder`` (there must be exactly one)."""
    made = [path for path in folder.iterdir() if path.is_dir()]
    assert len(made) == 1 and NAME.fullmatch(made[0].name), made
    return made[0]


def read(path: Path) -> str:
    return path.read_text(encoding="ascii")


V2_PROC = f"0::{V2_OWN}\n"
V1_PROC = f"12:pids:/x\n5:memory:{V1_OWN}\n4:cpu,cpuacct:/\n1:name=systemd:/init.scope\n0::/\n"


# -- /proc/self/cgroup --------------------------------------------------------------------------------------------


def test_own_paths_per_controller() -> None:
    text = "malformed\n12:cpu,cpuacct:/a\n2:pids\n5:memory:/b:with:colons\n1:name=systemd:/c\n0::/d\n"
    assert cgroup_module._own_paths(text) == {
        "cpu": "/a",
        "cpuacct": "/a",
        "memory": "/b:with:colons",
        "name=systemd": "/c",
        "": "/d",
    }
    assert cgroup_module._own_paths("") == {}


# -- cgroup v2 ----------------------------------------------------------------------------------------------------


def test_v2_limits_memory_swap_and_processes(tmp_path: Path, own_cgroup: Callable[[str], None]) -> None:
    own_cgroup(V2_PROC)
    own = v2_tree(tmp_path / "cgroup")
    made = memory_cgroup(300 * MIB, 77, root=tmp_path / "cgroup")
    assert made is not None and made.version == 2
    folder = only_child(own)
    assert made.folder == folder and made.procs == folder / "cgroup.procs"
    assert (folder.stat().st_mode & 0o777) == 0o755
    assert read(folder / "memory.max") == str(300 * MIB)
    assert read(folder / "memory.swap.max") == "0"
    assert read(folder / "pids.max") == "77"
    assert sorted(path.name for path in folder.iterdir()) == ["memory.max", "memory.swap.max", "pids.max"]
    (folder / "memory.max").unlink()  # a real cgroup's files go with it; a fake one's must go first
    (folder / "memory.swap.max").unlink()
    (folder / "pids.max").unlink()
    made.remove()
    assert not folder.exists()


def test_v2_without_pids_controller_limits_memory_only(tmp_path: Path, own_cgroup: Callable[[str], None]) -> None:
    own_cgroup(V2_PROC)
    own = v2_tree(tmp_path / "cgroup", controllers="memory io")
    made = memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup")
    assert made is not None and made.version == 2
    assert sorted(path.name for path in only_child(own).iterdir()) == ["memory.max", "memory.swap.max"]


@pytest.mark.parametrize("controllers", ["cpu pids", "", "memoryx pids", "cpu io"])
def test_v2_without_memory_controller_makes_nothing(
    tmp_path: Path, own_cgroup: Callable[[str], None], controllers: str
) -> None:
    own_cgroup(V2_PROC)
    own = v2_tree(tmp_path / "cgroup", controllers=controllers)
    assert memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup") is None
    assert [path.name for path in own.iterdir()] == ["cgroup.subtree_control"]


def test_v2_where_its_own_cgroup_is_not_there_makes_nothing(tmp_path: Path, own_cgroup: Callable[[str], None]) -> None:
    own_cgroup("0::/elsewhere\n")
    v2_tree(tmp_path / "cgroup")
    assert memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup") is None
    assert not (tmp_path / "cgroup" / "elsewhere").exists()


def test_v2_where_mkdir_fails_makes_nothing(
    tmp_path: Path, own_cgroup: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    own_cgroup(V2_PROC)
    own = v2_tree(tmp_path / "cgroup")
    monkeypatch.setattr(secrets, "token_hex", lambda size: "a" * 2 * size)
    (own / f"{PREFIX}{'a' * 12}").mkdir()  # taken: mkdir fails with EEXIST
    assert memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup") is None
    assert not any((own / f"{PREFIX}{'a' * 12}").iterdir())


def refusing(names: set[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Make writing any file named in ``names`` fail as the kernel would (EINVAL, EACCES)."""
    write = cgroup_module._write

    def fake(path: Path, value: str) -> None:
        if path.name in names:
            raise PermissionError(13, "Permission denied", str(path))
        write(path, value)

    monkeypatch.setattr(cgroup_module, "_write", fake)


def test_v2_without_swap_accounting_still_limits_memory(
    tmp_path: Path, own_cgroup: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    own_cgroup(V2_PROC)
    own = v2_tree(tmp_path / "cgroup")
    refusing({"memory.swap.max"}, monkeypatch)
    made = memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup")
    assert made is not None and made.version == 2
    assert sorted(path.name for path in only_child(own).iterdir()) == ["memory.max", "pids.max"]


def recording(monkeypatch: pytest.MonkeyPatch, *, busy: bool) -> list[str]:
    """Record each file written and each removal; a ``busy`` cgroup cannot be removed (EBUSY)."""
    done: list[str] = []
    write = cgroup_module._write
    real_rmdir = Path.rmdir

    def recorded(path: Path, value: str) -> None:
        done.append(path.name)
        write(path, value)

    def rmdir(self: Path) -> None:
        done.append(f"rmdir {self.name}")
        if busy:
            raise OSError(errno.EBUSY, "Device or resource busy", str(self))
        for file in self.iterdir():  # a real cgroup's files are the kernel's and go with it
            file.unlink()
        real_rmdir(self)

    monkeypatch.setattr(cgroup_module, "_write", recorded)
    monkeypatch.setattr(Path, "rmdir", rmdir)
    return done


@pytest.mark.parametrize("busy", [False, True], ids=["removed", "busy"])
@pytest.mark.parametrize("refused", ["memory.max", "pids.max"])
def test_v2_where_a_limit_cannot_be_set_removes_the_cgroup(
    tmp_path: Path, own_cgroup: Callable[[str], None], monkeypatch: pytest.MonkeyPatch, refused: str, busy: bool
) -> None:
    own_cgroup(V2_PROC)
    own = v2_tree(tmp_path / "cgroup")
    refusing({refused}, monkeypatch)
    done = recording(monkeypatch, busy=busy)
    assert memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup") is None
    assert refused in done and NAME.fullmatch(done[-1].removeprefix("rmdir "))
    assert [path.is_dir() for path in own.iterdir()].count(True) == (1 if busy else 0)


# -- cgroup v1 ----------------------------------------------------------------------------------------------------


def test_v1_limits_memory_and_swap(tmp_path: Path, own_cgroup: Callable[[str], None]) -> None:
    own_cgroup(V1_PROC)
    own = v1_tree(tmp_path / "cgroup")
    made = memory_cgroup(300 * MIB, 77, root=tmp_path / "cgroup")
    assert made is not None and made.version == 1
    folder = only_child(own)
    assert made.folder == folder and made.procs == folder / "cgroup.procs"
    assert (folder.stat().st_mode & 0o777) == 0o755
    assert read(folder / "memory.limit_in_bytes") == str(300 * MIB)
    assert read(folder / "memory.memsw.limit_in_bytes") == str(300 * MIB)
    assert sorted(path.name for path in folder.iterdir()) == ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"]


def test_v1_where_unified_hierarchy_is_elsewhere(tmp_path: Path, own_cgroup: Callable[[str], None]) -> None:
    """A hybrid layout (v1 controllers, v2 in ``unified/``) has a ``0::`` line but no v2 root: v1 it is."""
    own_cgroup(V1_PROC)
    own = v1_tree(tmp_path / "cgroup")
    (tmp_path / "cgroup" / "unified").mkdir()
    (tmp_path / "cgroup" / "unified" / "cgroup.controllers").write_text("", encoding="ascii")
    made = memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup")
    assert made is not None and made.version == 1 and made.folder.parent == own


def test_v1_without_swap_accounting_still_limits_memory(
    tmp_path: Path, own_cgroup: Callable[[str], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    own_cgroup(V1_PROC)
    own = v1_tree(tmp_path / "cgroup")
    refusing({"memory.memsw.limit_in_bytes"}, monkeypatch)
    made = memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup")
    assert made is not None and made.version == 1
    assert [path.name for path in only_child(own).iterdir()] == ["memory.limit_in_bytes"]


@pytest.mark.parametrize("busy", [False, True], ids=["removed", "busy"])
def test_v1_where_the_limit_cannot_be_set_removes_the_cgroup(
    tmp_path: Path, own_cgroup: Callable[[str], None], monkeypatch: pytest.MonkeyPatch, busy: bool
) -> None:
    own_cgroup(V1_PROC)
    own = v1_tree(tmp_path / "cgroup")
    refusing({"memory.limit_in_bytes"}, monkeypatch)
    done = recording(monkeypatch, busy=busy)
    assert memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup") is None
    assert done[0] == "memory.limit_in_bytes" and NAME.fullmatch(done[-1].removeprefix("rmdir "))
    assert len(list(own.iterdir())) == (1 if busy else 0)


@pytest.mark.parametrize(
    ("proc", "tree"),
    [
        pytest.param("4:cpu:/\n0::/\n", True, id="no-memory-controller"),
        pytest.param(V1_PROC, False, id="no-memory-hierarchy"),
        pytest.param("5:memory:/not/there\n", True, id="own-cgroup-missing"),
    ],
)
def test_v1_where_none_can_be_made(tmp_path: Path, own_cgroup: Callable[[str], None], proc: str, tree: bool) -> None:
    own_cgroup(proc)
    root = tmp_path / "cgroup"
    root.mkdir()
    if tree:
        v1_tree(root)
    before = sorted(root.rglob("*"))
    assert memory_cgroup(64 * MIB, 8, root=root) is None
    assert sorted(root.rglob("*")) == before


def test_without_proc_self_cgroup_none_is_made(tmp_path: Path, own_cgroup: Callable[[str], None]) -> None:
    v2_tree(tmp_path / "cgroup")  # own_cgroup was never given a text: the file is missing
    assert memory_cgroup(64 * MIB, 8, root=tmp_path / "cgroup") is None


def test_through_the_real_proc_self_cgroup(tmp_path: Path) -> None:
    """The real ``/proc/self/cgroup`` against a fake root mirroring it (v2 where this machine has a ``0::`` line)."""
    paths = cgroup_module._own_paths(Path("/proc/self/cgroup").read_text(encoding="ascii"))
    root = tmp_path / "cgroup"
    if "memory" in paths:
        own = v1_tree(root, paths["memory"])
        version = 1
    elif "" in paths:
        root.mkdir()
        (root / "cgroup.controllers").write_text("memory pids\n", encoding="ascii")
        own = root / paths[""].lstrip("/")
        own.mkdir(parents=True, exist_ok=True)
        (own / "cgroup.subtree_control").write_text("memory pids\n", encoding="ascii")
        version = 2
    else:
        pytest.skip("this process is in no cgroup")
    made = memory_cgroup(64 * MIB, 8, root=root)
    assert made is not None and made.version == version and made.folder.parent == own


def test_remove_kills_what_is_left_in_a_busy_cgroup_and_leaves_a_missing_one_alone(tmp_path: Path) -> None:
    """The sandbox's processes are still ending when its kernel is closed: they get a moment, then SIGKILL."""
    lingering = subprocess.Popen(["sleep", "30"])
    ended = subprocess.Popen(["true"])
    ended.wait()  # a pid the list still names, gone already: killing it must not fail
    busy = Cgroup(tmp_path / "busy", 2)
    busy.folder.mkdir()
    (busy.folder / "cgroup.procs").write_text(f"{ended.pid}\n{lingering.pid}\n", encoding="ascii")
    failures: list[BaseException] = []

    def remove() -> None:
        try:
            busy.remove(wait_s=0.2)
        except BaseException as error:  # noqa: BLE001 - reported by the test below
            failures.append(error)

    started = time.monotonic()
    watcher = threading.Thread(target=remove, daemon=True)
    watcher.start()
    assert lingering.wait(timeout=10) == -signal.SIGKILL and time.monotonic() - started >= 0.2
    time.sleep(0.3)  # killed again after another wait: the list still names it, and nothing breaks
    (busy.folder / "cgroup.procs").write_text("", encoding="ascii")  # as the kernel empties a real one
    emptied = time.monotonic()
    watcher.join(10)
    assert failures == [] and not watcher.is_alive() and time.monotonic() - emptied < 0.5
    assert busy.folder.exists()  # a plain folder holding a file: rmdir refused, quietly
    gone = Cgroup(tmp_path / "gone", 1)
    gone.remove()
    assert not gone.folder.exists()


@pytest.mark.parametrize("version", [1, 2])
def test_empty_cgroups_left_behind_are_removed_when_the_next_is_made(
    tmp_path: Path, own_cgroup: Callable[[str], None], version: int
) -> None:
    """A killed app leaves its kernel's cgroup: the next one made removes it, but never a fresh or busy one."""
    own_cgroup(V2_PROC if version == 2 else V1_PROC)
    parent = v2_tree(tmp_path / "cgroup") if version == 2 else v1_tree(tmp_path / "cgroup")
    old, fresh, busy = (parent / f"{PREFIX}0000000000{tail}" for tail in ("aa", "bb", "cc"))
    for folder in (old, fresh, busy):
        folder.mkdir()
    (busy / "cgroup.procs").write_text("1\n", encoding="ascii")  # rmdir refuses it, as a cgroup with processes
    long_ago = time.time() - STALE_S - 5
    for folder in (old, busy):
        os.utime(folder, (long_ago, long_ago))
    made = memory_cgroup(1024 * MIB, 64, root=tmp_path / "cgroup")
    assert made is not None and made.version == version
    assert not old.exists() and fresh.exists() and busy.exists()


# -- can_limit_memory and the plan --------------------------------------------------------------------------------


def test_can_limit_memory_makes_and_removes_a_probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[int, int]] = []
    probe = Cgroup(tmp_path / "probe", 2)

    def made(memory_bytes: int, processes: int) -> Cgroup:
        asked.append((memory_bytes, processes))
        probe.folder.mkdir()
        return probe

    monkeypatch.setattr(cgroup_module, "memory_cgroup", made)
    assert can_limit_memory() is True
    assert asked == [(1024**3, 64)] and not probe.folder.exists()
    monkeypatch.setattr(cgroup_module, "memory_cgroup", lambda memory_bytes, processes: None)
    assert can_limit_memory() is False


def test_limits_with_and_without_a_cgroup() -> None:
    limits = SandboxLimits(memory_bytes=3 * MIB, processes=50, process_memory_bytes=MIB, fallback_processes=5)
    whole = {"cpu_s": 1800, "memory_bytes": 3 * MIB, "file_bytes": 512 * MIB, "processes": 50, "open_files": 256}
    assert limits.rlimits(cgroup=True) == whole
    assert limits.rlimits(cgroup=False) == {**whole, "memory_bytes": MIB, "processes": 5}


def test_describe_says_how_memory_is_bounded_in_full() -> None:
    limits = SandboxLimits(cpu_s=60, memory_bytes=3 * 1024 * MIB, processes=50, disk_bytes=100 * MIB)
    common = (
        "Contained by bubblewrap and a seccomp filter: no network; only system libraries and Python's folders"
        " visible (read-only), not your files; working folder /w and /tmp in a 100 MiB quota; no API keys or"
        " tokens in its environment; no keyring, shared memory or processes of yours; limits: "
    )
    whole = describe(Platform(True, False, memory="cgroup"), limits, "/w")
    assert whole == f"{common}3072 MiB memory for all its processes, 50 processes, 512 MiB per file, 60 CPU s."
    each = describe(Platform(True, True, memory="process"), limits, "/w")
    per_process = "2048 MiB memory per process and 32 processes (no cgroup here to bound them together)"
    assert each == f"{common}{per_process}, 512 MiB per file, 60 CPU s."
    assert describe(Platform(False, False, "no bwrap"), limits, "/w") == "Unavailable: no bwrap."


def test_plan_puts_the_kernel_in_its_cgroup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[int, int]] = []
    made = Cgroup(tmp_path / "made", 2)

    def fake(memory_bytes: int, processes: int) -> Cgroup:
        asked.append((memory_bytes, processes))
        return made

    monkeypatch.setattr(sandbox, "memory_cgroup", fake)
    limits = SandboxLimits(memory_bytes=3 * MIB, processes=50)
    platform = Platform(True, False, memory="cgroup")
    plan = build_plan(platform, limits, private_dir=tmp_path, kernel_argv_for=kernel_argv, launcher=Path("l.py"))
    try:
        assert asked == [(3 * MIB, 50)] and plan.cgroup is made
        assert plan.spec["cgroup_procs"] == str(tmp_path / "made" / "cgroup.procs")
        assert plan.spec["init"]["limits"] == limits.rlimits(cgroup=True)
    finally:
        for fd in plan.pass_fds:
            os.close(fd)


# -- a real cgroup ------------------------------------------------------------------------------------------------


@pytest.fixture
def real_cgroup() -> Iterator[Cgroup]:
    """A real cgroup of 64 MiB and 16 processes, removed afterwards; skip where none can be made."""
    made = memory_cgroup(64 * MIB, 16)
    if made is None:
        pytest.skip("no cgroup can be made here (not root, no delegation, or no memory controller)")
    yield made
    made.remove()


def test_a_real_cgroup_holds_the_limit_and_goes_away(real_cgroup: Cgroup) -> None:
    assert real_cgroup.folder.is_dir() and real_cgroup.folder.is_relative_to(CGROUP_ROOT)
    assert NAME.fullmatch(real_cgroup.folder.name)
    limit = "memory.max" if real_cgroup.version == 2 else "memory.limit_in_bytes"
    assert int(read(real_cgroup.folder / limit)) == 64 * MIB
    if real_cgroup.version == 2 and (real_cgroup.folder / "pids.max").exists():
        assert read(real_cgroup.folder / "pids.max").strip() == "16"
    assert read(real_cgroup.procs) == ""
    real_cgroup.remove()
    assert not real_cgroup.folder.exists()


def test_a_process_that_joins_a_real_cgroup_is_held_to_its_limit(real_cgroup: Cgroup) -> None:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # never return into pytest
        try:
            signal.alarm(10)
            os.close(read_end)
            real_cgroup.procs.write_text("0", encoding="ascii")  # as the launcher joins it
            os.write(write_end, b"joined")
            hog = bytearray(256 * MIB)  # four times the limit, every page touched
            os.write(write_end, bytes(hog[:1]))
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as stream:
        said = stream.read()
    _, status = os.waitpid(pid, 0)
    assert said == b"joined"
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL  # the OOM killer, within the cgroup
