"""How the python tool's kernel is contained on this machine: probing, the launch plan, and what to tell the user.

On Linux with ``unshare`` and user (or root's) namespaces the kernel gets no network, a PID
namespace, and a root of its own built from an allow-list (:func:`visible_paths`):

- read-only: the system's programs and libraries (``/usr``, ``/bin``, ``/sbin``, ``/lib*``), the
  folders of the Python that runs the kernel (its prefixes, site-packages, the user site), and a
  few files of ``/etc`` that Python and common libraries need (``ETC_ALLOWED``: the loader's
  cache, TLS certificates, the time zone, name service and MIME tables, fonts); ``/etc/passwd``,
  ``/etc/group`` and ``/etc/hosts`` are written for the sandbox (root and nobody, localhost);
- ``/dev/null``, ``zero``, ``full``, ``random``, ``urandom``, and ``/proc`` of its own PID namespace;
- read-write, on one tmpfs of ``disk_bytes`` (the quota): the working folder at ``/mnt/data``,
  ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the kernel's socket folder ``/run/kernel``.

Nothing else is there: not the user's home, not other users' files, not project folders, not
the data dir, not the rest of ``/etc``, ``/var``, ``/opt``, ``/srv``, ``/sys``. The tmpfs is memory
that only its quota bounds; the host keeps a copy of the working folder (not ``/tmp``) in the data
dir. Everywhere the kernel gets resource limits, a working folder of its own and an environment
without the user's secrets. What is available is probed once per process.
"""

from __future__ import annotations

import functools
import os
import shutil
import site
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

MNT_DATA = "/mnt/data"
"""Where the model is told its files live; the working folder appears there when mounts are allowed."""
SANDBOX_UID = 65534
"""The unprivileged user (``nobody``) the kernel runs as when harmony-chat itself runs as root."""
KERNEL_DIR = "/run/kernel"
"""The kernel's socket folder inside the sandbox (on the quota's tmpfs)."""
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
    disk_bytes: int = 256 * _MIB
    """The quota: what the working folder, ``/tmp`` and ``/dev/shm`` hold together.

    With full isolation they are one tmpfs of this size, so the kernel refuses writes past it (no
    space left on device) and the host's copy of the working folder never grows past it either;
    the tmpfs is memory, which only this size bounds. Without a mount namespace (or in a container)
    it is checked after each call and bounds each file through RLIMIT_FSIZE, but the code can write
    wherever the user can.
    """
    inodes: int = 10_000
    """Files and folders the quota's tmpfs holds at most (each costs memory even when empty)."""

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
    quota = f"{limits.disk_bytes // _MIB} MiB"
    if platform.files_hidden:
        contained.append("only system libraries and Python's folders visible (read-only), not your files")
        contained.append(f"a {quota} quota for the working folder and /tmp together")
    else:
        gaps.append("it can read and write your files outside the working folder")
        gaps.append(f"the working folder's {quota} quota is only checked after each call")
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
    ipc_inside: str
    """The kernel's socket folder as the code sees it (without a view: the same path on the host)."""
    owner: tuple[int, int] | None = None
    """(uid, gid) to give what the host creates in the code's folder (root runs the kernel as nobody)."""
    env: dict[str, str] = field(default_factory=dict)
    """The environment of the first process (the launcher's is the sandbox's own)."""
    cleanup_argv: list[str] | None = None
    """A command to run after the kernel is killed (a container runner removes its container)."""
    handshake: bool = True
    """The launcher says on its channel when the sandbox is ready (a container runner has no launcher)."""

    @property
    def view(self) -> bool:
        """True when the launcher builds a root of its own and hands the host its two folders."""
        return bool(self.spec.get("view"))


SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
"""System programs and libraries, shown read-only (links such as ``/bin -> usr/bin`` are remade as links)."""
ETC_ALLOWED = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "protocols",
    "services",
    "mime.types",
    "ssl/certs",
    "ssl/openssl.cnf",
    "pki/tls/certs",
    "pki/tls/openssl.cnf",
    "pki/ca-trust",
    "crypto-policies",
    "ca-certificates.conf",
    "fonts",
    "alternatives",
    "python3",
    f"python{sys.version_info.major}.{sys.version_info.minor}",
)
"""What of ``/etc`` the sandbox sees, read-only: the loader, TLS, time zone, name service, MIME, fonts,
Debian's alternatives and Python config. Never ``shadow``, keys, ``passwd`` (it gets its own) or the rest."""
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


def _without_nested(paths: list[str]) -> list[str]:
    """``paths`` sorted, leaving out each one that lies under another (it is shown with its parent)."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(_under(path, parent) for parent in kept):
            kept.append(path)
    return kept


def visible_paths() -> list[str]:
    """Everything the sandbox's root shows of the host, read-only: the system, Python, part of ``/etc``."""
    paths = [*SYSTEM_ROOTS, *(f"/etc/{name}" for name in ETC_ALLOWED), *python_folders()]
    return _without_nested([path for path in paths if os.path.lexists(path)])


def sandbox_files() -> dict[str, str]:
    """The ``/etc`` files written for the sandbox: its own users (the kernel is one), groups and hosts."""
    home = f"{MNT_DATA}/.home"
    return {
        "/etc/passwd": f"root:x:0:0:root:{home}:/bin/sh\nnobody:x:{SANDBOX_UID}:{SANDBOX_UID}:nobody:{home}:/bin/sh\n",
        "/etc/group": f"root:x:0:\nnogroup:x:{SANDBOX_UID}:\n",
        "/etc/hosts": "127.0.0.1 localhost\n::1 localhost\n",
    }


def build_plan(
    platform: Platform,
    limits: SandboxLimits,
    *,
    workdir: Path,
    private_dir: Path,
    kernel_argv_for: Callable[[str], list[str]],
    launcher: Path,
) -> LaunchPlan:
    """The command that starts the launcher (under ``unshare`` when available) and its spec.

    ``private_dir`` is the host's own folder for this kernel (the spec, the launcher's log, and
    without a view the sockets); ``kernel_argv_for`` gives the kernel's command for the path of its
    connection file as the kernel sees it.
    """
    full = platform.files_hidden
    owner = (SANDBOX_UID, SANDBOX_UID) if platform.as_root and full else None
    user_site = site.getusersitepackages()
    python_path = user_site if os.path.isdir(user_site) else None
    view: dict[str, Any] | None = None
    if full:
        inside, ipc = MNT_DATA, KERNEL_DIR
        env = sandbox_environment(f"{inside}/.home", "/tmp", python_path)
        view = {
            "root": str(private_dir / "root"),
            "scratch": str(private_dir / "scratch"),
            "readonly": visible_paths(),
            "devices": [device for device in DEVICES if os.path.exists(device)],
            "files": sandbox_files(),
            "disk_bytes": limits.disk_bytes,
            "inodes": limits.inodes,
            "owner": list(owner or (0, 0)),
            "workdir": inside,
            "ipc": ipc,
        }
    else:
        inside, ipc = os.path.realpath(workdir), str(private_dir / "sock")
        env = sandbox_environment(f"{inside}/.home", f"{inside}/.home/tmp", python_path)
    drop = "user" if owner else ("capabilities" if platform.isolation != "none" and not platform.as_root else "none")
    spec: dict[str, Any] = {
        "view": view,
        "drop": drop,
        "uid": SANDBOX_UID,
        "gid": SANDBOX_UID,
        "limits": {
            key: value for key, value in limits.as_spec().items() if key != "processes" or process_limit_holds(platform)
        },
        "cwd": inside,
        "argv": kernel_argv_for(f"{ipc}/connection.json"),
        "env": env,
        "kernel_log": f"{ipc}/kernel.log" if full else None,
    }
    argv = [*platform.unshare_args, sys.executable, "-I", "-S", str(launcher), str(private_dir / "launch.json")]
    return LaunchPlan(argv, spec, inside, ipc, owner, env)
