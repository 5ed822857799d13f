"""The first program inside the python tool's sandbox: fold up the view of the disk, drop power, exec the kernel.

Runs as ``python -I -S launcher.py SPEC.json``, usually under ``unshare`` (new network, mount and
PID namespaces), with the standard library only: it must not import harmony_chat, whose files may
be hidden by the time it would. In order it:

1. opens the folders the kernel keeps (the working folder, Python's own folders, the socket folder);
2. in a private mount namespace, mounts small empty tmpfs over the hidden places (the user's home,
   the data dir, ``/tmp``, ``/run`` ...) and binds the kept folders back, the working folder at
   ``/mnt/data`` where the spec says so, Python read-only;
3. gives up privilege: as real root it switches to an unprivileged uid; as the root of a user
   namespace it drops every capability for good (so the tmpfs cannot be unmounted again);
4. sets the resource limits, and ``no_new_privs``;
5. on Linux stays as the kernel's parent, a subreaper (reaping orphans, passing interrupts on,
   killing every process the code left behind when the kernel ends or on SIGTERM); elsewhere it
   execs the kernel.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import sys
from typing import Any

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384

PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
# SECBIT_NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each with its lock bit.
SECUREBITS_LOCKED_DOWN = 0b1110_1111
LINUX_CAPABILITY_VERSION_3 = 0x20080522

LIMITS = {
    "cpu_s": resource.RLIMIT_CPU,
    "memory_bytes": resource.RLIMIT_AS,
    "file_bytes": resource.RLIMIT_FSIZE,
    "processes": resource.RLIMIT_NPROC,
    "open_files": resource.RLIMIT_NOFILE,
}

_libc = ctypes.CDLL(None, use_errno=True)  # mount, prctl and capset: used on Linux only


def _fail(what: str, error: int | None = None) -> None:
    code = ctypes.get_errno() if error is None else error
    raise OSError(code, f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    if _libc.mount(
        source.encode(), target.encode(), fstype.encode() if fstype else None, flags, data.encode() if data else None
    ):
        _fail(f"mount {target}")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def prepare_mounts(spec: dict[str, Any]) -> None:
    """Hide ``spec["hide"]`` behind empty tmpfs and bind ``spec["binds"]`` (source, target, read-only)."""
    binds: list[tuple[int, str, bool]] = []
    for source, target, read_only in spec["binds"]:
        binds.append((os.open(source, os.O_PATH | os.O_DIRECTORY), target, bool(read_only)))
    hidden: list[str] = []
    for root, size in spec["hide"]:
        if any(_under(root, done) for done in hidden) or os.path.islink(root) or not os.path.isdir(root):
            continue
        _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=755")
        hidden.append(root)
    for fd, target, read_only in binds:
        os.makedirs(target, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)
        if read_only:
            _mount("none", target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        os.close(fd)


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

    On Linux every limit must hold; elsewhere (macOS refuses some, such as RLIMIT_AS) a limit the
    system refuses is reported on stderr and skipped.
    """
    linux = sys.platform.startswith("linux")
    for name, value in [("core", 0), *limits.items()]:
        which = resource.RLIMIT_CORE if name == "core" else LIMITS[name]
        try:
            resource.setrlimit(which, (value, value + 5) if name == "cpu_s" else (value, value))
        except (OSError, ValueError) as error:
            if linux:
                raise OSError(f"limit {name}: {error}") from error
            print(f"harmony-chat sandbox: limit {name} not applied: {error}", file=sys.stderr)
    if linux and _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
        _fail("set no_new_privs")


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


def kill_everything() -> None:
    """Kill every descendant: each one killed orphans its own children to this subreaper, so repeat."""
    for _ in range(200):
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break


def run_as_init(spec: dict[str, Any]) -> int:
    """Run the kernel as a child; pass SIGINT on; on SIGTERM or the kernel's end, kill every descendant.

    As a subreaper, processes the code starts and abandons come back here, so none outlive the
    kernel even without a PID namespace. Returns the kernel's exit status (128 + signal if killed).
    """
    if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0):
        _fail("become a subreaper")
    child = os.fork()
    if child == 0:
        try:
            _exec_kernel(spec)
        finally:
            os._exit(127)

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(child, signum)
        except ProcessLookupError:
            pass

    def terminate(signum: int, _frame: object) -> None:
        kill_everything()
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, forward)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, terminate)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        if pid == child:
            kill_everything()
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def main(argv: list[str]) -> int:
    """Read the spec file named on the command line and start the kernel inside the sandbox."""
    with open(argv[1], encoding="utf-8") as handle:
        spec: dict[str, Any] = json.load(handle)
    try:
        if spec["hide"] or spec["binds"]:
            prepare_mounts(spec)
        if spec["drop"] == "user":
            switch_user(spec["uid"], spec["gid"])
        elif spec["drop"] == "capabilities":
            drop_capabilities()
        set_limits(spec["limits"])
    except OSError as error:
        print(f"harmony-chat sandbox: {error}", file=sys.stderr)
        return 126
    if spec["init"]:
        return run_as_init(spec)
    _exec_kernel(spec)
    return 127  # pragma: no cover - execve does not return


if __name__ == "__main__":
    sys.exit(main(sys.argv))
