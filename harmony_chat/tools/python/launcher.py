"""The small steps around bubblewrap that it does not take itself: a cgroup, a keyring, a quota, the kernel's watch.

Runs as ``python -I -S launcher.py STEP SPEC.json``, with the standard library only (inside the
sandbox harmony_chat is not there). bubblewrap builds the sandbox; these steps do what it does not:

``enter`` (on the host, first)
    joins the kernel's cgroup (so every process of the sandbox counts against its memory limit)
    and a new anonymous session keyring (the host's keys are not the sandbox's), then execs
    ``unshare`` (a mount namespace of its own; for an ordinary user, a user namespace too) to run
    ``quota``.
``quota`` (in that namespace)
    mounts the quota: one tmpfs of the disk limit *and* an inode limit (bubblewrap's ``--size``
    has no inode limit), with the working folder, ``/tmp``, ``/dev/shm`` and the kernel's socket
    folder on it; as real root it makes the read-only sources reachable by the sandbox's user and
    becomes that user (``nobody``); then execs ``bwrap`` with those folders bound in.
``init`` (inside the sandbox, the program bubblewrap starts)
    sets the resource limits, hands the host descriptors of the working and socket folders on its
    channel, runs the kernel, and exits when the kernel ends or when the channel closes (the host
    is gone, however it died); bubblewrap's PID 1 then ends and takes every process with it.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import sys
from typing import Any

MS_NOSUID = 2
MS_NODEV = 4
MS_BIND = 4096
MS_REC = 16384
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "loongarch64": 219, "ppc64le": 271, "s390x": 280}
KEYCTL_JOIN_SESSION_KEYRING = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "file_bytes": resource.RLIMIT_FSIZE,
    "processes": resource.RLIMIT_NPROC,
    "open_files": resource.RLIMIT_NOFILE,
}
FOLDERS = {"data": 0o700, "data/.home": 0o700, "kernel": 0o700, "tmp": 0o1777, "shm": 0o1777, "launch": 0o755}
"""The quota's folders and their modes: the first three belong to the sandbox's user."""

_libc = ctypes.CDLL(None, use_errno=True)


def _fail(what: str) -> None:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags, data.encode() if data else None
    ):
        _fail(f"mount {target}")


def join_new_keyring() -> None:
    """Join a new anonymous session keyring: what the sandbox inherits holds none of the host's keys."""
    number = SYS_KEYCTL.get(os.uname().machine)
    if number is None or _libc.syscall(number, KEYCTL_JOIN_SESSION_KEYRING, None) < 0:
        _fail("join a new session keyring")


def enter(spec: dict[str, Any], spec_path: str) -> None:
    """Step one, on the host: the cgroup, the keyring, then ``unshare`` running ``quota``."""
    if spec.get("cgroup_procs"):
        with open(spec["cgroup_procs"], "w", encoding="ascii") as handle:
            handle.write("0")
    join_new_keyring()
    argv = [*spec["unshare"], sys.executable, "-I", "-S", os.path.abspath(__file__), "quota", spec_path]
    os.execvp(argv[0], argv)


def _make_folder(path: str, mode: int, owner: tuple[int, int]) -> None:
    os.mkdir(path, mode)
    os.chmod(path, mode)  # mkdir's mode is filtered by the umask
    os.chown(path, *owner)


def _write_file(path: str, text: str, mode: int, owner: tuple[int, int]) -> None:
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        os.fchmod(handle, mode)
        os.fchown(handle, *owner)
        os.write(handle, text.encode("utf-8"))
    finally:
        os.close(handle)


def make_quota(spec: dict[str, Any]) -> str:
    """Mount the quota's tmpfs and fill it: the folders, the connection file, ``/etc``'s files, the launcher."""
    scratch = str(spec["scratch"])
    os.makedirs(scratch, mode=0o755, exist_ok=True)
    options = f"size={int(spec['disk_bytes'])},nr_inodes={int(spec['inodes'])},mode=755"
    _mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, options)
    owner = (int(spec["owner"][0]), int(spec["owner"][1]))
    for name, mode in FOLDERS.items():
        _make_folder(f"{scratch}/{name}", mode, owner if mode == 0o700 else (os.getuid(), os.getgid()))
    _write_file(f"{scratch}/kernel/connection.json", spec["connection"], 0o600, owner)
    _write_file(f"{scratch}/launch/init.json", json.dumps(spec["init"]), 0o644, (os.getuid(), os.getgid()))
    shutil.copyfile(os.path.abspath(__file__), f"{scratch}/launch/launcher.py")
    for index, (_path, text) in enumerate(sorted(spec["files"].items())):
        _write_file(f"{scratch}/launch/etc-{index}", text, 0o644, (os.getuid(), os.getgid()))
    return scratch


def stage_sources(sources: list[str], stage: str) -> list[str]:
    """Bind each read-only source under ``stage`` (real root only) so that the sandbox's user can reach it.

    ``nobody`` may not pass through the folders above a source (a Python under ``/root``), and
    bubblewrap runs as ``nobody`` here; a bind made by root in this mount namespace shows the
    source itself, with its own permissions.
    """
    staged: list[str] = []
    os.mkdir(stage, 0o755)
    for index, source in enumerate(sources):
        target = f"{stage}/{index}"
        if stat.S_ISDIR(os.stat(source).st_mode):
            os.mkdir(target, 0o755)
        else:
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        _mount(source, target, None, MS_BIND | MS_REC)
        staged.append(target)
    return staged


def become(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` with no supplementary groups (real root handing the sandbox to ``nobody``)."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def bwrap_argv(spec: dict[str, Any], scratch: str, sources: list[str]) -> list[str]:
    """Bubblewrap's command line: its fixed options, the quota's folders, the read-only sources, the launcher."""
    argv = list(spec["bwrap"])
    for part, targets in (("data", ["/mnt/data"]), ("tmp", ["/tmp", "/var/tmp"]), ("kernel", ["/run/kernel"])):
        for target in targets:
            argv += ["--bind", f"{scratch}/{part}", target]
    argv += ["--bind", f"{scratch}/shm", "/dev/shm"]  # after --dev, which makes /dev
    for source, target in zip(sources, spec["readonly"], strict=True):
        argv += ["--ro-bind", source, target]
    for target, points_to in spec["links"].items():
        argv += ["--symlink", points_to, target]
    for index, (target, _text) in enumerate(sorted(spec["files"].items())):
        argv += ["--ro-bind", f"{scratch}/launch/etc-{index}", target]
    argv += ["--ro-bind", f"{scratch}/launch", "/run/harmony-chat", "--remount-ro", "/"]
    argv += ["--seccomp", str(spec["seccomp_fd"]), "--chdir", "/mnt/data", "--"]
    return [*argv, spec["python"], "-I", "-S", "/run/harmony-chat/launcher.py", "init", "/run/harmony-chat/init.json"]


def quota(spec: dict[str, Any]) -> None:
    """Step two, in a mount namespace of its own: the quota, then ``bwrap``."""
    scratch = make_quota(spec)
    sources = list(spec["readonly"])
    if spec.get("become"):
        sources = stage_sources(sources, f"{scratch}-sources")
        uid, gid = spec["become"]
        become(int(uid), int(gid))
    argv = bwrap_argv(spec, scratch, sources)
    try:
        os.execv(argv[0], argv)
    except OSError as error:
        raise OSError(error.errno, f"cannot run {argv[0]}: {error.strerror}") from error


def set_limits(limits: dict[str, int]) -> None:
    """Apply the resource limits (CPU gets a few seconds of grace between SIGXCPU and SIGKILL), no core files.

    A hard limit this process inherited lower than the sandbox's is kept: it cannot be raised.
    """
    for name, value in [("core", 0), *limits.items()]:
        which = resource.RLIMIT_CORE if name == "core" else LIMITS[name]
        ceiling = resource.getrlimit(which)[1]  # a limit inherited lower (ulimit, a batch system) stays lower
        hard = value + 5 if name == "cpu_s" else value
        if ceiling != resource.RLIM_INFINITY:
            hard = min(hard, ceiling)
        resource.setrlimit(which, (min(value, hard), hard))
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        _fail("set no_new_privs")
    if _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0):  # the code may not open the channel through /proc/2/fd
        _fail("set dumpable")


def _receive(channel: socket.socket) -> bytes:
    """What the host sent (nothing is expected); empty when the channel has reached its end."""
    try:
        return channel.recv(64)
    except OSError:
        return b""


def watch(kernel: int, channel: socket.socket) -> int:
    """Wait until the kernel ends (its exit status) or the channel closes (128 + SIGHUP)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    while True:
        pid, status = os.waitpid(kernel, os.WNOHANG)
        if pid == kernel:
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        watched: list[Any] = [wake_read, channel]
        readable = select.select(watched, [], [])[0]
        if wake_read in readable:
            while True:
                try:
                    if not os.read(wake_read, 512):
                        break
                except BlockingIOError:
                    break
        if channel in readable and not _receive(channel):
            return 128 + signal.SIGHUP  # the host is gone: leaving ends the sandbox


def init(spec: dict[str, Any]) -> int:
    """Step three, inside the sandbox: limits, the folders for the host, the kernel, the watch."""
    channel = socket.socket(fileno=int(spec["channel"]))
    channel.set_inheritable(False)
    try:
        set_limits(spec["limits"])
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        handed = [os.open("/mnt/data", flags), os.open("/run/kernel", flags)]
    except OSError as error:
        print(f"harmony-chat sandbox: {error}", file=sys.stderr)
        return 126
    socket.send_fds(channel, [b"ready"], handed)
    for fd in handed:
        os.close(fd)
    log = os.open("/run/kernel/kernel.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    os.dup2(log, 2)  # from here on the kernel's stderr stays in the sandbox
    os.close(log)
    kernel = os.fork()
    if kernel == 0:
        try:
            os.setsid()  # the kernel leads its own process group, as Jupyter expects for interrupts
            os.execve(spec["argv"][0], spec["argv"], spec["env"])
        finally:
            os._exit(127)
    return watch(kernel, channel)


def main(argv: list[str]) -> int:
    """Run the step named on the command line with the spec file it names."""
    step, spec_path = argv[1], argv[2]
    with open(spec_path, encoding="utf-8") as handle:
        spec: dict[str, Any] = json.load(handle)
    try:
        if step == "enter":
            enter(spec, spec_path)
        elif step == "quota":
            quota(spec)
        else:
            return init(spec)
    except OSError as error:
        print(f"harmony-chat sandbox: {error}", file=sys.stderr)
        return 126
    return 126  # exec returned: cannot happen


if __name__ == "__main__":
    sys.exit(main(sys.argv))
