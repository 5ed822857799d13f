"""How the python tool's kernel is contained on this machine: probing, the launch plan, and what to tell the user.

On Linux with ``unshare`` and user namespaces the kernel gets no network, a PID namespace, and a
view of the disk where the user's home, the data dir and the shared temp folders are empty and
only its working folder (at ``/mnt/data``), Python's own folders and its socket folder are
visible. Everywhere it gets resource limits, a working folder of its own and an environment
without the user's secrets. What is available is probed once per process.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

MNT_DATA = "/mnt/data"
"""Where the model is told its files live; the working folder appears there when mounts are allowed."""
SANDBOX_UID = 65534
"""The unprivileged user (``nobody``) the kernel runs as when harmony-chat itself runs as root."""
SAFE_ENV_KEYS = ("LANG", "LANGUAGE", "TZ", "TERM")
"""The only variables passed on from the user's environment (plus ``LC_*``): no keys, no tokens."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
_GIB = 1024**3
_MIB = 1024**2


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits on the kernel process (and each process it starts)."""

    cpu_s: int = 1800
    """CPU seconds over the kernel's life; past it the kernel is stopped and restarts fresh."""
    memory_bytes: int = 4 * _GIB
    """Address space per process (RLIMIT_AS): allocations past it raise MemoryError."""
    file_bytes: int = 512 * _MIB
    """The largest file the code may write (RLIMIT_FSIZE)."""
    processes: int = 128
    """Processes and threads (RLIMIT_NPROC, counted inside the sandbox's user namespace)."""
    open_files: int = 256
    tmp_bytes: int = 256 * _MIB
    """Size of the private ``/tmp`` and ``/dev/shm`` (memory-backed) when mounts are allowed."""

    def as_spec(self) -> dict[str, int]:
        """The limits as the launcher reads them."""
        return {
            "cpu_s": self.cpu_s,
            "memory_bytes": self.memory_bytes,
            "file_bytes": self.file_bytes,
            "processes": self.processes,
            "open_files": self.open_files,
        }


Isolation = Literal["full", "network", "none"]
"""``full``: network, mount and PID namespaces; ``network``: only a network namespace; ``none``."""


@dataclass(frozen=True)
class Platform:
    """What this machine lets the sandbox do."""

    isolation: Isolation
    as_root: bool
    unshare_args: tuple[str, ...] = ()
    reason: str = ""
    """Why isolation is less than full (empty when full)."""
    host_root: bool = False
    """The kernel's processes would belong to the host's root (root in a namespace mapping only
    itself), whom RLIMIT_NPROC never limits."""

    @property
    def network_blocked(self) -> bool:
        """True when the kernel gets a network namespace of its own (loopback only, down)."""
        return self.isolation != "none"

    @property
    def files_hidden(self) -> bool:
        """True when the user's files are hidden and the working folder appears at ``/mnt/data``."""
        return self.isolation == "full"


def unshare_args(as_root: bool, isolation: Isolation) -> tuple[str, ...]:
    """The ``unshare`` command prefix for an isolation level (root needs no user namespace)."""
    user = () if as_root else ("--map-root-user",)
    if isolation == "full":
        return ("unshare", *user, "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "--")
    return ("unshare", *user, "--net", "--")


def _id_mapped(map_file: Path, wanted: int) -> bool:
    """Whether ``wanted`` is an id this process's user namespace maps (``/proc/self/uid_map``)."""
    try:
        lines = map_file.read_text(encoding="ascii").splitlines()
    except OSError:
        return True  # no namespace information (not Linux): every id is real
    for line in lines:
        inside, _outside, count = (int(field) for field in line.split())
        if inside <= wanted < inside + count:
            return True
    return False


def _maps_to_host_root() -> bool:
    """Whether uid 0 here is the host's root (``/proc/self/uid_map`` maps it onto uid 0)."""
    try:
        lines = Path("/proc/self/uid_map").read_text(encoding="ascii").splitlines()
    except OSError:
        return False
    for line in lines:
        inside, outside, count = (int(field) for field in line.split())
        if inside <= 0 < inside + count:
            return outside - inside == 0
    return False


def runs_as_real_root() -> bool:
    """True when this process is root and can hand the kernel to ``nobody``.

    Root inside a user namespace that maps only itself (``unshare -r``, rootless containers)
    cannot: it is treated as an ordinary user, who gets a user namespace of its own.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    proc = Path("/proc/self")
    return _id_mapped(proc / "uid_map", SANDBOX_UID) and _id_mapped(proc / "gid_map", SANDBOX_UID)


@functools.cache
def probe_platform() -> Platform:
    """Find the strongest isolation ``unshare`` gives here (run once per process, about 10 ms a try)."""
    as_root = runs_as_real_root()
    host_root = not as_root and hasattr(os, "geteuid") and os.geteuid() == 0 and _maps_to_host_root()
    if not sys.platform.startswith("linux"):
        return Platform("none", as_root, reason=f"{sys.platform} has no Linux namespaces")
    if shutil.which("unshare") is None:
        return Platform("none", as_root, reason="the unshare command is not installed")
    reason = ""
    for isolation in ("full", "network"):
        args = unshare_args(as_root, isolation)
        try:
            done = subprocess.run([*args, "true"], capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError) as error:
            reason = str(error)
            continue
        if done.returncode == 0:
            note = "" if isolation == "full" else f"mount/PID namespaces unavailable ({reason})"
            return Platform(isolation, as_root, args, note, host_root)
        reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return Platform("none", as_root, reason=f"user namespaces are not allowed here ({reason})")


def process_limit_holds(platform: Platform) -> bool:
    """True when RLIMIT_NPROC can be set usefully.

    It counts a user's processes: inside a user namespace only the sandbox's, so it is safe there;
    without one it would count every process the user runs (so it is left unset), and root
    ignores it (so root runs the kernel as ``nobody``, which needs the mount namespace). Root in a
    namespace that maps only itself onto the host's root cannot be limited at all.
    """
    if platform.as_root:
        return platform.isolation == "full"
    return platform.isolation != "none" and not platform.host_root


def describe(platform: Platform, limits: SandboxLimits, workdir_shown: str) -> str:
    """One paragraph for the approval dialog: what is contained here, and what is not."""
    contained = [f"working folder {workdir_shown}", "no API keys or tokens in its environment"]
    gaps: list[str] = []
    if platform.network_blocked:
        contained.insert(0, "no network")
    else:
        gaps.append("network is not blocked")
    if platform.files_hidden:
        contained.append("your home, the data folder and shared temp folders hidden")
    else:
        gaps.append("it can read and write your files outside the working folder")
    processes = f", {limits.processes} processes" if process_limit_holds(platform) else ""
    if not processes:
        gaps.append("no limit on the number of processes")
    contained.append(
        f"limits: {limits.memory_bytes // _MIB} MiB memory, {limits.file_bytes // _MIB} MiB per file"
        f"{processes}, {limits.cpu_s} CPU s"
    )
    text = "Contained: " + "; ".join(contained) + "."
    if gaps:
        why = f" ({platform.reason})" if platform.reason else ""
        text += " Not contained" + why + ": " + "; ".join(gaps) + "."
    return text


def sandbox_environment(home: str, tmp: str, user_site: str | None) -> dict[str, str]:
    """The kernel's whole environment: an allow-list, never the user's keys or tokens."""
    env = {key: value for key, value in os.environ.items() if key in SAFE_ENV_KEYS or key.startswith("LC_")}
    threads = str(min(os.cpu_count() or 1, 4))
    env.update(
        PATH=f"{Path(sys.executable).parent}:{SYSTEM_PATH}",
        HOME=home,
        USER="sandbox",
        LOGNAME="sandbox",
        TMPDIR=tmp,
        MALLOC_ARENA_MAX="2",
        # Math libraries start a thread per core, each reserving address space and counting as a process.
        OMP_NUM_THREADS=threads,
        OPENBLAS_NUM_THREADS=threads,
        MKL_NUM_THREADS=threads,
        PYDEVD_DISABLE_FILE_VALIDATION="1",
        JUPYTER_PLATFORM_DIRS="1",
    )
    if user_site:
        env["PYTHONPATH"] = user_site
    return env


def python_folders() -> list[str]:
    """The folders the kernel's Python needs: its prefixes, site-packages and user site."""
    candidates = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    candidates.add(str(Path(os.path.realpath(sys.executable)).parent.parent))
    candidates.update(site.getsitepackages())
    user_site = site.getusersitepackages()
    if user_site:
        candidates.add(user_site)
    return sorted({os.path.realpath(path) for path in candidates if os.path.isdir(path)})


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class LaunchPlan:
    """Everything needed to start one kernel: the command line and the launcher's spec."""

    argv: list[str]
    spec: dict[str, Any]
    workdir_inside: str
    """The working folder's path as the code sees it."""
    owner: tuple[int, int] | None = None
    """(uid, gid) that must own the working and socket folders (root runs the kernel as nobody)."""
    env: dict[str, str] = field(default_factory=dict)
    """The environment of the first process (the launcher's is the sandbox's own)."""
    cleanup_argv: list[str] | None = None
    """A command to run after the kernel is killed (a container runner removes its container)."""


def hidden_roots(data_dir: Path) -> list[str]:
    """The places emptied inside the sandbox: homes, the data dir, shared temp and runtime folders."""
    roots = ["/home", "/root", str(Path.home()), str(data_dir), "/tmp", "/var/tmp", "/run", "/dev/shm", "/mnt"]
    return sorted({os.path.realpath(root) for root in roots} - {"/"})


def build_plan(
    platform: Platform,
    limits: SandboxLimits,
    *,
    workdir: Path,
    ipc_dir: Path,
    data_dir: Path,
    kernel_argv: list[str],
    launcher: Path,
) -> LaunchPlan:
    """The command that starts the launcher (under ``unshare`` when available) and its spec."""
    work = os.path.realpath(workdir)
    full = platform.files_hidden
    owner = (SANDBOX_UID, SANDBOX_UID) if platform.as_root and full else None
    hide: list[tuple[str, str]] = []
    binds: list[tuple[str, str, bool]] = []
    inside = work
    if full:
        tmp_size = str(limits.tmp_bytes)
        for root in hidden_roots(data_dir):
            hide.append((root, tmp_size if root in ("/tmp", "/dev/shm") else "1m"))
        roots = [root for root, _size in hide]
        inside = MNT_DATA if os.path.isdir("/mnt") and not os.path.islink("/mnt") else work
        binds.append((work, inside, False))
        binds.append((os.path.realpath(ipc_dir), os.path.realpath(ipc_dir), False))
        for folder in python_folders():
            if any(_under(folder, root) for root in roots):
                binds.append((folder, folder, True))
    home = f"{inside}/.home"
    user_site = site.getusersitepackages()
    env = sandbox_environment(home, "/tmp" if full else f"{home}/tmp", user_site if os.path.isdir(user_site) else None)
    drop = "user" if owner else ("capabilities" if platform.isolation != "none" and not platform.as_root else "none")
    spec: dict[str, Any] = {
        "hide": hide,
        "binds": binds,
        "drop": drop,
        "uid": SANDBOX_UID,
        "gid": SANDBOX_UID,
        "limits": {
            key: value for key, value in limits.as_spec().items() if key != "processes" or process_limit_holds(platform)
        },
        "init": sys.platform.startswith("linux"),
        "cwd": inside,
        "argv": kernel_argv,
        "env": env,
    }
    argv = [*platform.unshare_args, sys.executable, "-I", "-S", str(launcher), str(ipc_dir / "launch.json")]
    return LaunchPlan(argv, spec, inside, owner, env)
