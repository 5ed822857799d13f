"""The first program inside the python tool's sandbox: build its root, drop power, run the kernel, die with the host.

Runs as ``python -I -S launcher.py SPEC.json``, usually under ``unshare`` (new network, mount and
PID namespaces), with the standard library only: it must not import harmony_chat, whose files are
not in the sandbox's root. In order it:

1. with a view (full isolation), builds a new root from the spec's allow-list on a small tmpfs:
   the system and Python read-only, a few device nodes and ``/proc``, and one tmpfs of the quota's
   size holding the working folder, ``/tmp``, ``/var/tmp``, ``/dev/shm`` and the socket folder;
   then ``pivot_root`` into it and lets go of the old root, so nothing else of the host is there;
2. gives up privilege: as real root it switches to an unprivileged uid; as the root of a user
   namespace it drops every capability for good (so no mount can be undone);
3. sets the resource limits and ``no_new_privs``, and makes itself undumpable (the code, the same
   user, cannot open its descriptors through ``/proc/1/fd``);
4. says "ready" on its channel to the host, handing over descriptors of the working and socket
   folders (with a view the host reaches them only through these, never by a path);
5. stays as the kernel's parent (on Linux a subreaper, reaping orphans): it passes interrupts on,
   and kills every process the code started when the kernel ends, on SIGTERM, or when the channel
   closes (the host exited, even by SIGKILL), then exits; the PID namespace takes the rest.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket
import stat
import sys
from typing import Any

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
MNT_DETACH = 2
# statvfs's f_flag bits of a mount, and the mount flag each one must keep on a read-only remount
# (inside a user namespace the kernel refuses a remount that would clear a flag the parent set).
KEPT_MOUNT_FLAGS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME}
ST_RELATIME = 4096
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "loongarch64": 41, "ppc64le": 203, "s390x": 217}

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
# SECBIT_NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each with its lock bit.
SECUREBITS_LOCKED_DOWN = 0b1110_1111
LINUX_CAPABILITY_VERSION_3 = 0x20080522
ROOT_SIZE = "4m"
"""The new root's own tmpfs: mount points and the few files written for the sandbox, read-only once built."""

LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "file_bytes": resource.RLIMIT_FSIZE,
    "processes": resource.RLIMIT_NPROC,
    "open_files": resource.RLIMIT_NOFILE,
}
LINUX = sys.platform.startswith("linux")

_libc = ctypes.CDLL(None, use_errno=True)  # mount, prctl and capset: used on Linux only


def _fail(what: str, error: int | None = None) -> None:
    code = ctypes.get_errno() if error is None else error
    raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags, data.encode() if data else None
    ):
        _fail(f"mount {target}")


def _kept_flags(fd: int) -> int:
    """The mount flags of ``fd``'s mount that a read-only remount of a bind of it must keep."""
    have = os.fstatvfs(fd).f_flag
    flags = sum(flag for bit, flag in KEPT_MOUNT_FLAGS.items() if have & bit)
    if not have & (1024 | ST_RELATIME):
        flags |= MS_STRICTATIME
    elif have & ST_RELATIME:
        flags |= MS_RELATIME
    return flags


def _bind(source_fd: int, target: str, *, read_only: bool, recursive: bool = False) -> None:
    _mount(f"/proc/self/fd/{source_fd}", target, None, MS_BIND | (MS_REC if recursive else 0))
    if read_only:
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | _kept_flags(source_fd)
        _mount("none", target, None, flags)


def _pivot_root(new_root: str) -> None:
    """Make ``new_root`` the root and let go of the old one (``pivot_root(".", ".")`` then a lazy unmount)."""
    os.chdir(new_root)
    number = SYS_PIVOT_ROOT.get(os.uname().machine)
    if number is not None:
        if _libc.syscall(number, b".", b"."):
            _fail("pivot_root")
        if _libc.umount2(b".", MNT_DETACH):
            _fail("detach the old root")
    else:  # no known syscall number: move the new root over "/" and enter it (as switch_root does)
        _mount(".", "/", None, 8192)  # MS_MOVE
        os.chroot(".")
    os.chdir("/")


def _make_target(path: str, *, folder: bool) -> None:
    """Make a mount point in the new root: a folder, or an empty file (with the folders above it)."""
    os.makedirs(path if folder else os.path.dirname(path), mode=0o755, exist_ok=True)
    if not folder:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))


def _make_link(path: str, points_to: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    os.symlink(points_to, path)


def _writable(path: str, mode: int, owner: tuple[int, int]) -> None:
    os.mkdir(path, mode)
    os.chmod(path, mode)  # mkdir's mode is filtered by the umask
    os.chown(path, *owner)


def build_view(view: dict[str, Any], connection: str) -> list[int]:
    """Build the sandbox's root (see the module docstring) and enter it; return the working and socket folders.

    Every source is opened before anything is mounted, so a source under a place the new root
    covers is still found; the writable parts are mounted before the sources, so a source under
    ``/tmp`` (a virtual environment made there) shows through the sandbox's own. Links on the
    allow-list (``/bin -> usr/bin``, ``/etc/localtime``) are made again as links.
    """
    sources: list[tuple[str, int | str]] = []
    for path in [*view["readonly"], *view["devices"]]:
        if os.path.islink(path):
            sources.append((path, os.readlink(path)))
        elif os.path.exists(path):
            sources.append((path, os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)))
    proc = os.open("/proc", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    root, scratch = view["root"], view["scratch"]
    owner = (int(view["owner"][0]), int(view["owner"][1]))
    for mount_point in (root, scratch):
        os.makedirs(mount_point, mode=0o700, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, f"size={ROOT_SIZE},mode=755")
    quota = f"size={int(view['disk_bytes'])},nr_inodes={int(view['inodes'])},mode=755"
    _mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, quota)
    for name, mode in (("data", 0o700), ("data/.home", 0o700), ("kernel", 0o700), ("tmp", 0o1777), ("shm", 0o1777)):
        _writable(f"{scratch}/{name}", mode, owner if mode == 0o700 else (0, 0))
    handle = os.open(f"{scratch}/kernel/connection.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.fchown(handle, *owner)
    os.write(handle, connection.encode("utf-8"))
    os.close(handle)
    for part, targets in (  # first: a read-only source under /tmp (a venv there) is bound over them
        ("data", [view["workdir"]]),
        ("tmp", ["/tmp", "/var/tmp"]),
        ("shm", ["/dev/shm"]),
        ("kernel", [view["ipc"]]),
    ):
        part_fd = os.open(f"{scratch}/{part}", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        for target in targets:
            _make_target(root + target, folder=True)
            _bind(part_fd, root + target, read_only=False)
        os.close(part_fd)
    devices = set(view["devices"])
    for path, source in sources:
        target = root + path
        if isinstance(source, str):
            _make_link(target, source)
            continue
        _make_target(target, folder=stat.S_ISDIR(os.fstat(source).st_mode))
        _bind(source, target, read_only=path not in devices)
        os.close(source)
    for number, link in enumerate(("stdin", "stdout", "stderr")):
        _make_link(f"{root}/dev/{link}", f"/proc/self/fd/{number}")
    _make_link(f"{root}/dev/fd", "/proc/self/fd")
    for path, text in view["files"].items():
        _make_target(root + path, folder=False)
        with open(root + path, "w", encoding="utf-8") as handle_file:
            handle_file.write(text)
    _make_target(f"{root}/proc", folder=True)
    _bind(proc, f"{root}/proc", read_only=False, recursive=True)
    os.close(proc)
    _pivot_root(root)
    _mount("none", "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    return [os.open(view["workdir"], flags), os.open(view["ipc"], flags)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> None:
    """Lose every capability, now and across exec (root of a user namespace stays uid 0, powerless)."""
    with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
        last = int(handle.read())
    for cap in range(last + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) and ctypes.get_errno() != 22:  # EINVAL: unknown cap
            _fail("drop capability bounding set")
    if _libc.prctl(PR_SET_SECUREBITS, SECUREBITS_LOCKED_DOWN, 0, 0, 0):
        _fail("set securebits")
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), ctypes.byref(data)):
        _fail("capset")


def switch_user(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` with no supplementary groups (real root only); capabilities go with it."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def set_limits(limits: dict[str, int]) -> None:
    """Apply the resource limits; CPU gets a few seconds of grace between SIGXCPU and SIGKILL.

    On Linux every limit must hold, ``no_new_privs`` is set and the process is made undumpable (the
    kernel becomes dumpable again when it execs); elsewhere (macOS refuses some limits, such as
    RLIMIT_AS) a limit the system refuses is reported on stderr and skipped.
    """
    for name, value in [("core", 0), *limits.items()]:
        which = resource.RLIMIT_CORE if name == "core" else LIMITS[name]
        try:
            resource.setrlimit(which, (value, value + 5) if name == "cpu_s" else (value, value))
        except (OSError, ValueError) as error:
            if LINUX:
                raise OSError(f"limit {name}: {error}") from error
            print(f"harmony-chat sandbox: limit {name} not applied: {error}", file=sys.stderr)
    if LINUX and _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        _fail("set no_new_privs")
    if LINUX and _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0):  # the code may not reach /proc/1/fd (the channel)
        _fail("set dumpable")


def _exec_kernel(spec: dict[str, Any]) -> None:
    if os.getsid(0) != os.getpid():
        os.setsid()  # the kernel leads its own process group, as Jupyter expects for interrupts
    os.chdir(spec["cwd"])
    argv = spec["argv"]
    os.execve(argv[0], argv, spec["env"])


def _children() -> list[int]:
    """The children of the launcher, from ``/proc`` (orphans come here: it is a subreaper)."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.append(int(entry))
    return found


def _reap() -> None:
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def kill_everything(kernel: int) -> None:
    """Kill every descendant: each one killed orphans its own children to this subreaper, so repeat.

    Without ``/proc`` (macOS) it kills the kernel's process group, which is all it can find.
    """
    if not LINUX:
        try:
            os.killpg(kernel, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _reap()
        return
    for _ in range(200):
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap()


def _exit_status(status: int) -> int:
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def run_as_init(spec: dict[str, Any], channel: socket.socket | None) -> int:
    """Run the kernel as a child and watch it, the signals and the host's channel.

    SIGINT is passed on to the kernel. When the kernel ends, on SIGTERM or SIGHUP, or when the
    channel reaches its end (the host exited, however it died), every descendant is killed.
    Returns the kernel's exit status (128 + signal if it was killed, or for the signal that ended it).
    """
    if LINUX and _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
        _fail("become a subreaper")
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    child = os.fork()
    if child == 0:
        try:
            _exec_kernel(spec)
        finally:
            os._exit(127)
    stop: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    def terminate(signum: int, _frame: object) -> None:
        stop.append(signum)

    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, terminate)
    watched: list[Any] = [wake_read] + ([channel] if channel is not None else [])
    while True:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == child:
            kill_everything(child)
            return _exit_status(status)
        if pid:
            continue  # an orphan reaped: look for more before waiting
        if stop:
            kill_everything(child)
            return 128 + stop[0]
        readable = select.select(watched, [], [])[0]
        if wake_read in readable:
            _drain(wake_read)
        if channel is not None and channel in readable and not _receive(channel):
            kill_everything(child)  # the host is gone, however it ended
            return 128 + signal.SIGHUP


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except BlockingIOError:
        pass


def _receive(channel: socket.socket) -> bytes:
    """What the host sent (nothing is expected); empty when the channel has reached its end."""
    try:
        return channel.recv(64)
    except OSError:
        return b""


def main(argv: list[str]) -> int:
    """Read the spec file named on the command line and start the kernel inside the sandbox."""
    with open(argv[1], encoding="utf-8") as handle:
        spec: dict[str, Any] = json.load(handle)
    channel = None
    if spec.get("channel") is not None:
        channel = socket.socket(fileno=int(spec["channel"]))
        channel.set_inheritable(False)
    try:
        handed = build_view(spec["view"], spec["connection"]) if spec.get("view") else []
        if spec["drop"] == "user":
            switch_user(spec["uid"], spec["gid"])
        elif spec["drop"] == "capabilities":
            drop_capabilities()
        set_limits(spec["limits"])
    except OSError as error:
        print(f"harmony-chat sandbox: {error}", file=sys.stderr)
        return 126
    if channel is not None:
        socket.send_fds(channel, [b"ready"], handed)
    for fd in handed:
        os.close(fd)
    if spec.get("kernel_log"):  # from here on the launcher's and the kernel's stderr stay in the sandbox
        log = os.open(spec["kernel_log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        os.dup2(log, 2)
        os.close(log)
    return run_as_init(spec, channel)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
