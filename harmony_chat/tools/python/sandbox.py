"""How the python tool's kernel is contained: bubblewrap, seccomp, a quota, a cgroup, and what to tell the user.

On Linux with bubblewrap (``bwrap``) and libseccomp the kernel runs in new user, mount, PID, IPC,
network, UTS and cgroup namespaces, with no capabilities, no nested user namespaces, a new session
and a new session keyring, under the seccomp filter of :mod:`seccomp_filter`. Its root is built from
an allow-list (:func:`visible_paths`):

- read-only: the system's programs and libraries (``/usr``, ``/bin``, ``/sbin``, ``/lib*``), the
  folders of the Python that runs the kernel (its prefixes, site-packages, the user site), and a
  few files of ``/etc`` that Python and common libraries need (``ETC_ALLOWED``); ``/etc/passwd``,
  ``/etc/group`` and ``/etc/hosts`` are written for the sandbox (root and nobody, localhost);
- bubblewrap's ``/dev`` (null, zero, full, random, urandom, tty) and ``/proc`` of its own PID namespace;
- read-write, on one tmpfs of ``disk_bytes`` and ``inodes`` (the quota): the working folder at
  ``/mnt/data``, ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the kernel's socket folder ``/run/kernel``.

Memory is bounded for the whole sandbox by a cgroup where this machine lets harmony-chat make one
(:mod:`cgroup`), or else by a transient scope of the user's systemd (``systemd-run --user --scope``),
otherwise per process. Without bubblewrap or libseccomp the python tool is
unavailable (fail closed) and says why in one line, with the install command; the docker/podman
runner (:mod:`container`) is the alternative. What is available is probed once per process.
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

from harmony_chat.tools.python.cgroup import Cgroup, can_limit_memory, memory_cgroup
from harmony_chat.tools.python.seccomp_filter import SeccompUnavailable, build_filter, compiled_filter

MNT_DATA = "/mnt/data"
"""Where the model is told its files live."""
SANDBOX_UID = 65534
"""The user (``nobody``) the kernel runs as inside the sandbox, and on the host when harmony-chat runs as root."""
KERNEL_DIR = "/run/kernel"
"""The kernel's socket folder inside the sandbox (on the quota's tmpfs)."""
SAFE_ENV_KEYS = ("LANG", "LANGUAGE", "TZ", "TERM")
"""The only variables passed on from the user's environment (plus ``LC_*``): no keys, no tokens."""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
CONTAINER_HINT = 'or set [tools] python_runner = "container" (docker or podman)'
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap;"
    f" Arch: sudo pacman -S bubblewrap), {CONTAINER_HINT}"
)
_GIB = 1024**3
_MIB = 1024**2


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits on the sandbox: the whole of it where a cgroup holds, each process otherwise."""

    cpu_s: int = 1800
    """CPU seconds of each process; past it the kernel is stopped and restarts fresh."""
    memory_bytes: int = 4 * _GIB
    """Memory of the whole sandbox (a cgroup), and the address space of each of its processes."""
    processes: int = 128
    """Processes and threads (RLIMIT_NPROC, counted inside the sandbox's user namespace)."""
    process_memory_bytes: int = 2 * _GIB
    """Without a cgroup: the address space of each process (RLIMIT_AS), lower than ``memory_bytes``."""
    fallback_processes: int = 32
    """Without a cgroup: processes and threads at most, so that all of them hold at most this times the above."""
    file_bytes: int = 512 * _MIB
    """The largest file the code may write (RLIMIT_FSIZE)."""
    open_files: int = 256
    disk_bytes: int = 256 * _MIB
    """The quota: what the working folder, ``/tmp`` and ``/dev/shm`` hold together (a tmpfs, so memory)."""
    inodes: int = 10_000
    """Files and folders the quota's tmpfs holds at most (each costs memory even when empty)."""

    def rlimits(self, *, cgroup: bool) -> dict[str, int]:
        """The per-process limits the launcher sets, with or without a cgroup bounding the whole."""
        return {
            "cpu_s": self.cpu_s,
            "memory_bytes": self.memory_bytes if cgroup else self.process_memory_bytes,
            "file_bytes": self.file_bytes,
            "processes": self.processes if cgroup else self.fallback_processes,
            "open_files": self.open_files,
        }


MemoryBound = Literal["cgroup", "systemd", "process"]
"""``cgroup``: one limit for the whole sandbox, in a cgroup made here; ``systemd``: the same, in a transient
scope of the user's systemd (``systemd-run --user --scope``); ``process``: a lower limit per process."""


SYSTEMD_USER_ENV = ("XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS")
"""What ``systemd-run --user`` needs to reach the user's manager: given to it and the launcher, never to the kernel."""


def systemd_scope_prefix(limits: SandboxLimits, program: str = "systemd-run") -> list[str]:
    """``systemd-run`` putting the sandbox in a transient user scope with its memory and task limits."""
    return [
        program,
        "--user",
        "--scope",
        "--quiet",
        "--collect",
        "-p",
        f"MemoryMax={limits.memory_bytes}",
        "-p",
        "MemorySwapMax=0",
        "-p",
        f"TasksMax={limits.processes}",
        "--",
    ]


def _systemd_scope_works() -> bool:
    """Whether the user's systemd makes a scope with a memory limit here (a trial run of ``true``)."""
    if shutil.which("systemd-run") is None:
        return False
    try:
        done = subprocess.run(
            [*systemd_scope_prefix(SandboxLimits()), "true"], capture_output=True, timeout=20, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@dataclass(frozen=True)
class Platform:
    """What this machine lets the sandbox do."""

    available: bool
    as_root: bool
    reason: str = ""
    """Why the sandbox is unavailable, with what to install (empty when available)."""
    memory: MemoryBound = "process"
    bwrap: str = "bwrap"

    @property
    def network_blocked(self) -> bool:
        """True when the kernel runs without a network (always, when it runs at all)."""
        return self.available


def runs_as_real_root() -> bool:
    """True when this process is the host's root (not root of a user namespace mapping only itself)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    try:
        lines = Path("/proc/self/uid_map").read_text(encoding="ascii").splitlines()
    except OSError:
        return True
    return any(int(count) > SANDBOX_UID for _inside, _outside, count in (line.split() for line in lines))


def unshare_prefix(as_root: bool) -> list[str]:
    """The ``unshare`` command the launcher's quota step runs under: a mount namespace (and a user one)."""
    user = [] if as_root else ["--user", "--map-root-user"]
    return ["unshare", *user, "--mount", "--propagation", "private", "--"]


def bwrap_options(bwrap: str) -> list[str]:
    """Bubblewrap's fixed options: every namespace, no nested user namespaces, no capabilities, its own session."""
    return [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--hostname",
        "sandbox",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]


def _first_line(text: str, fallback: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else fallback


def _try_bwrap(bwrap: str, as_root: bool) -> str:
    """Run ``true`` in a sandbox as the kernel's would be made; return why it failed (empty: it worked)."""
    argv = [*bwrap_options(bwrap), "--ro-bind", "/", "/", "--", "true"]
    extra: dict[str, Any] = {"user": SANDBOX_UID, "group": SANDBOX_UID, "extra_groups": []} if as_root else {}
    if not as_root:
        argv = [*unshare_prefix(False), *argv]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False, **extra)
    except (OSError, subprocess.SubprocessError) as error:
        return str(error)
    return "" if done.returncode == 0 else _first_line(done.stderr, f"exit status {done.returncode}")


@functools.cache
def probe_platform() -> Platform:
    """Whether the sandbox can run here (bubblewrap, libseccomp, namespaces) and how memory is bounded."""
    as_root = runs_as_real_root()
    if not sys.platform.startswith("linux"):
        return Platform(False, as_root, f"the python tool's sandbox needs Linux ({sys.platform}): " + CONTAINER_HINT)
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Platform(False, as_root, "bubblewrap (bwrap) is not installed: " + INSTALL_HINT)
    if shutil.which("unshare") is None:
        return Platform(False, as_root, "the unshare command (util-linux) is not installed")
    try:
        build_filter()
    except SeccompUnavailable as error:
        return Platform(False, as_root, f"{error}: install libseccomp2 (Debian/Ubuntu) or libseccomp (Fedora, Arch)")
    failed = _try_bwrap(bwrap, as_root)
    if failed:
        return Platform(False, as_root, f"bubblewrap cannot make a sandbox here ({failed}); " + CONTAINER_HINT)
    memory: MemoryBound = "process"
    if can_limit_memory():
        memory = "cgroup"
    elif not as_root and _systemd_scope_works():
        memory = "systemd"
    return Platform(True, as_root, memory=memory, bwrap=bwrap)


def describe(platform: Platform, limits: SandboxLimits, workdir_shown: str) -> str:
    """One paragraph for the approval dialog: what contains the code here, or why it cannot run."""
    if not platform.available:
        return f"Unavailable: {platform.reason}."
    if platform.memory in ("cgroup", "systemd"):
        memory = f"{limits.memory_bytes // _MIB} MiB memory for all its processes, {limits.processes} processes"
        if platform.memory == "systemd":
            memory += " (a systemd scope)"
    else:
        memory = (
            f"{limits.process_memory_bytes // _MIB} MiB memory per process and {limits.fallback_processes}"
            " processes (no cgroup here to bound them together)"
        )
    return (
        "Contained by bubblewrap and a seccomp filter: no network; only system libraries and Python's"
        f" folders visible (read-only), not your files; working folder {workdir_shown} and /tmp in a"
        f" {limits.disk_bytes // _MIB} MiB quota; no API keys or tokens in its environment; no keyring,"
        f" shared memory or processes of yours; limits: {memory}, {limits.file_bytes // _MIB} MiB per file,"
        f" {limits.cpu_s} CPU s."
    )


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
    """The environment of the first process."""
    cleanup_argv: list[str] | None = None
    """A command to run after the kernel is killed (a container runner removes its container)."""
    handshake: bool = True
    """The launcher says on its channel when the sandbox is ready (a container runner has no launcher)."""
    socket_uid: int = -1
    """Whose the kernel's sockets are on the host (the host connects to no socket of anyone else)."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors the first process inherits (the seccomp filter); the host closes them once it started."""
    cgroup: Cgroup | None = None
    """The sandbox's cgroup, removed when the kernel is gone."""

    @property
    def view(self) -> bool:
        """True when the sandbox has a root of its own and hands the host its two folders."""
        return bool(self.spec.get("view"))


def readonly_and_links(paths: list[str]) -> tuple[list[str], dict[str, str]]:
    """Split the allow-list into folders and files to bind and links to make again (``/bin -> usr/bin``)."""
    readonly = [path for path in paths if not os.path.islink(path)]
    links = {path: os.readlink(path) for path in paths if os.path.islink(path)}
    return readonly, links


def build_plan(
    platform: Platform,
    limits: SandboxLimits,
    *,
    private_dir: Path,
    kernel_argv_for: Callable[[str], list[str]],
    launcher: Path,
) -> LaunchPlan:
    """The launcher's command and spec for one kernel; makes its cgroup and compiles its seccomp filter.

    ``private_dir`` is the host's own folder for this kernel (the spec, the launcher's log, the
    quota's mount point); ``kernel_argv_for`` gives the kernel's command for the path of its
    connection file as the kernel sees it.
    """
    owner = (SANDBOX_UID, SANDBOX_UID) if platform.as_root else (0, 0)
    user_site = site.getusersitepackages()
    python_path = user_site if os.path.isdir(user_site) else None
    env = sandbox_environment(f"{MNT_DATA}/.home", "/tmp", python_path)
    cgroup = memory_cgroup(limits.memory_bytes, limits.processes) if platform.memory == "cgroup" else None
    seccomp_fd = compiled_filter()
    readonly, links = readonly_and_links(visible_paths())
    spec: dict[str, Any] = {
        "view": True,
        "cgroup_procs": str(cgroup.procs) if cgroup else None,
        "unshare": unshare_prefix(platform.as_root),
        "scratch": str(private_dir / "scratch"),
        "disk_bytes": limits.disk_bytes,
        "inodes": limits.inodes,
        "owner": list(owner),
        "become": [SANDBOX_UID, SANDBOX_UID] if platform.as_root else None,
        "bwrap": bwrap_options(platform.bwrap),
        "readonly": readonly,
        "links": links,
        "files": sandbox_files(),
        "seccomp_fd": seccomp_fd,
        "python": sys.executable,
        "init": {
            "limits": limits.rlimits(cgroup=cgroup is not None or platform.memory == "systemd"),
            "argv": kernel_argv_for(f"{KERNEL_DIR}/connection.json"),
            "env": env,
        },
    }
    argv = [sys.executable, "-I", "-S", str(launcher), "enter", str(private_dir / "launch.json")]
    first_env = env
    if platform.memory == "systemd":  # the kernel's own environment stays the spec's: init execs it with that
        argv = [*systemd_scope_prefix(limits, shutil.which("systemd-run") or "systemd-run"), *argv]
        first_env = env | {key: os.environ[key] for key in SYSTEMD_USER_ENV if key in os.environ}
    return LaunchPlan(
        argv,
        spec,
        MNT_DATA,
        KERNEL_DIR,
        owner=(SANDBOX_UID, SANDBOX_UID) if platform.as_root else None,
        env=first_env,
        socket_uid=SANDBOX_UID if platform.as_root else os.getuid(),
        pass_fds=(seccomp_fd,),
        cgroup=cgroup,
    )
