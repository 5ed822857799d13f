"""The python sandbox's seccomp filter, rule by rule, and the rest of the sandbox that bubblewrap makes.

Each system call runs in a forked child that loads two filters: first a *sentinel* that answers the
call under test with ``ENOTRECOVERABLE``, then the filter under test. The kernel runs the newest
filter first and, when both answer with an errno, keeps the newest's answer; so the child sees
``EPERM`` (or ``ENOSYS``, ``EAFNOSUPPORT``) when the filter refuses the call and ``ENOTRECOVERABLE``
when the filter lets it through. Either way the call never reaches the kernel proper: the arguments
cannot do harm, and an ``EPERM`` can only come from the filter, not from a missing privilege.

The tests of ``sandbox.py`` here (bubblewrap's options, the probe, the environment, the plan run by
the real launcher with a stand-in for the kernel) need no kernel and run in well under a second.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import errno
import json
import mmap
import os
import platform
import resource
import shutil
import signal
import site
import socket
import stat
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harmony_chat.tools.python import launcher, sandbox, seccomp_filter
from harmony_chat.tools.python.cgroup import Cgroup, can_limit_memory
from harmony_chat.tools.python.kernel import short_temp_root
from harmony_chat.tools.python.sandbox import (
    CONTAINER_HINT,
    INSTALL_HINT,
    SANDBOX_UID,
    SYSTEM_PATH,
    Platform,
    SandboxLimits,
    build_plan,
    bwrap_options,
    probe_platform,
    python_folders,
    runs_as_real_root,
    sandbox_environment,
    systemd_scope_prefix,
    unshare_prefix,
)
from harmony_chat.tools.python.seccomp_filter import (
    ALLOWED_FAMILIES,
    DENIED,
    DENIED_WITH_ARGUMENTS,
    MAX_FAMILY,
    NAMESPACE_FLAGS,
    SeccompUnavailable,
    build_filter,
    compiled_filter,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="seccomp and bubblewrap are Linux's")
pyseccomp = pytest.importorskip("pyseccomp", reason="the pyseccomp binding (or libseccomp) is not installed")

SENTINEL = errno.ENOTRECOVERABLE
"""The answer of the filter beneath the one under test: the call got past the filter under test."""
LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.syscall.restype = ctypes.c_long
PR_SET_NO_NEW_PRIVS = 38
BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bubblewrap (bwrap) is not installed")
x86_64_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="the other ABIs tested are x86-64's")

CLONE_NAMESPACES = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}
FORK_FLAGS = 0x01200011
"""What the C library's ``fork`` passes: ``CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD``."""
THREAD_FLAGS = 0x003D0F00
"""What ``pthread_create`` passes: ``CLONE_VM | FS | FILES | SIGHAND | THREAD | SYSVSEM | SETTLS | *_TID``."""
PERSONAS = {"PER_LINUX32": 0x0008, "ADDR_NO_RANDOMIZE": 0x0040000, "READ_IMPLIES_EXEC": 0x0400000}
IOCTLS = {"TCGETS": 0x5401, "TIOCGWINSZ": 0x5413, "FIONREAD": 0x541B, "FIONBIO": 0x5421}
FAMILY_NAMES = {
    0: "AF_UNSPEC",
    1: "AF_UNIX",
    2: "AF_INET",
    4: "AF_IPX",
    5: "AF_APPLETALK",
    9: "AF_X25",
    10: "AF_INET6",
    15: "AF_KEY",
    16: "AF_NETLINK",
    17: "AF_PACKET",
    29: "AF_CAN",
    31: "AF_BLUETOOTH",
    38: "AF_ALG",
    40: "AF_VSOCK",
    44: "AF_XDP",
    45: "AF_MCTP",
}
NETLINK_PROTOCOLS = {"NETLINK_AUDIT": 9, "NETLINK_NETFILTER": 12, "NETLINK_KOBJECT_UEVENT": 15, "NETLINK_GENERIC": 16}


def number(name: str) -> int:
    """The system call's number on this machine's architecture (negative where it has no such call)."""
    return int(pyseccomp.resolve_syscall(pyseccomp.system_arch(), name))


def in_child(body: Callable[[], bytes]) -> tuple[bytes, int]:
    """Run ``body`` in a forked child; return what it wrote and its wait status. The child never returns."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 70
        try:
            signal.alarm(10)  # a stuck child dies rather than hang the test
            os.close(read)
            os.write(write, body())
            status = 0
        except BaseException as error:
            with contextlib.suppress(BaseException):
                os.write(write, repr(error).encode())
        finally:
            os._exit(status)
    os.close(write)
    with os.fdopen(read, "rb") as stream:
        data = stream.read()
    _, status = os.waitpid(pid, 0)
    return data, status


def load(rules: Any, *, sentinel_for: int | None = None) -> None:
    """In a child: no new privileges, then the sentinel for one call, then ``rules`` (a filter built by the parent).

    The parent builds the filter so that mutmut, which records only what the test's own process calls,
    sees every test here reach ``build_filter``.
    """
    if LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if sentinel_for is not None:
        sentinel = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        sentinel.add_rule(pyseccomp.ERRNO(SENTINEL), sentinel_for)
        sentinel.load()
    if rules is not None:
        rules.load()


def call(name: str, *args: int, filtered: bool = True) -> int:
    """The errno of ``name(*args)`` in a child under the sentinel and (when ``filtered``) the filter."""
    nr = number(name)
    rules = build_filter() if filtered else None

    def body() -> bytes:
        load(rules, sentinel_for=nr)
        result = LIBC.syscall(ctypes.c_long(nr), *(ctypes.c_long(arg) for arg in args))
        return str(ctypes.get_errno() if result == -1 else 0).encode()

    data, status = in_child(body)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, data
    return int(data)


# -- calls refused outright ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(DENIED))
def test_denied_call_is_refused_with_eperm(name: str) -> None:
    """Every call of the denylist fails with EPERM under the filter and gets through without it."""
    if number(name) < 0:
        pytest.skip(f"{name} does not exist on {platform.machine()}")
    assert call(name, filtered=False) == SENTINEL  # the sentinel answers: nothing else refuses it here
    assert call(name) == errno.EPERM
    assert DENIED[name]  # each says why


def test_the_rules_with_arguments_are_those_documented() -> None:
    assert set(DENIED_WITH_ARGUMENTS) == {"clone", "clone3", "personality", "ioctl", "socket"}
    assert not set(DENIED) & set(DENIED_WITH_ARGUMENTS)
    assert set(NAMESPACE_FLAGS) == set(CLONE_NAMESPACES.values())


# -- calls refused for some arguments -----------------------------------------------------------------------------

ARGUMENT_CASES = [
    *(pytest.param("clone", (flag,), errno.EPERM, id=f"clone-{name}") for name, flag in CLONE_NAMESPACES.items()),
    *(
        pytest.param("clone", (flag | FORK_FLAGS,), errno.EPERM, id=f"clone-fork-{name}")
        for name, flag in CLONE_NAMESPACES.items()
    ),
    pytest.param("clone", (sum(CLONE_NAMESPACES.values()),), errno.EPERM, id="clone-every-namespace"),
    pytest.param("clone", (FORK_FLAGS,), SENTINEL, id="clone-fork-allowed"),
    pytest.param("clone", (THREAD_FLAGS,), SENTINEL, id="clone-thread-allowed"),
    pytest.param("clone", (0,), SENTINEL, id="clone-no-flags-allowed"),
    pytest.param("clone3", (0, 0), errno.ENOSYS, id="clone3-enosys"),
    pytest.param("clone3", (1, 88), errno.ENOSYS, id="clone3-any-arguments-enosys"),
    pytest.param("personality", (0,), SENTINEL, id="personality-default-allowed"),
    *(pytest.param("personality", (value,), errno.EPERM, id=f"personality-{name}") for name, value in PERSONAS.items()),
    pytest.param("personality", (0xFFFFFFFF,), errno.EPERM, id="personality-query"),
    pytest.param("ioctl", (0, seccomp_filter.TIOCSTI), errno.EPERM, id="ioctl-TIOCSTI"),
    pytest.param("ioctl", (0, seccomp_filter.TIOCLINUX), errno.EPERM, id="ioctl-TIOCLINUX"),
    pytest.param("ioctl", (0, seccomp_filter.TIOCSTI | 1 << 32), errno.EPERM, id="ioctl-TIOCSTI-high-bits"),
    *(pytest.param("ioctl", (0, value), SENTINEL, id=f"ioctl-{name}-allowed") for name, value in IOCTLS.items()),
    *(
        pytest.param("socket", (family, socket.SOCK_STREAM, 0), SENTINEL, id=f"socket-{FAMILY_NAMES[family]}-allowed")
        for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
    ),
    pytest.param("socket", (socket.AF_INET, socket.SOCK_DGRAM, 0), SENTINEL, id="socket-AF_INET-dgram-allowed"),
    pytest.param("socket", (socket.AF_INET, socket.SOCK_STREAM, 6), SENTINEL, id="socket-AF_INET-IPPROTO_TCP-allowed"),
    pytest.param(
        "socket", (socket.AF_INET6, socket.SOCK_DGRAM, 17), SENTINEL, id="socket-AF_INET6-IPPROTO_UDP-allowed"
    ),
    pytest.param("socket", (socket.AF_NETLINK, socket.SOCK_RAW, 0), SENTINEL, id="socket-NETLINK_ROUTE-allowed"),
    *(
        pytest.param("socket", (socket.AF_NETLINK, socket.SOCK_RAW, protocol), errno.EPERM, id=f"socket-{name}")
        for name, protocol in NETLINK_PROTOCOLS.items()
    ),
    pytest.param("socket", (socket.AF_NETLINK, socket.SOCK_RAW, 1 << 32), errno.EPERM, id="socket-netlink-high-bits"),
    *(
        pytest.param("socket", (family, socket.SOCK_RAW, 0), errno.EAFNOSUPPORT, id=f"socket-{name}")
        for family, name in FAMILY_NAMES.items()
        if family not in ALLOWED_FAMILIES
    ),
    *(
        pytest.param("socket", (family, socket.SOCK_RAW, 0), errno.EAFNOSUPPORT, id=f"socket-family-{family}")
        for family in (MAX_FAMILY + 1, 1000, -1, socket.AF_INET | 1 << 32)
    ),
]


@pytest.mark.parametrize(("name", "args", "expected"), ARGUMENT_CASES)
def test_call_refused_or_allowed_by_its_arguments(name: str, args: tuple[int, ...], expected: int) -> None:
    """Clone, clone3, personality, ioctl and socket: refused for the arguments the filter names, allowed else."""
    assert call(name, *args) == expected


@pytest.mark.parametrize("family", range(MAX_FAMILY + 1))
def test_every_family_but_the_allowed_four_is_refused(family: int) -> None:
    expected = SENTINEL if family in ALLOWED_FAMILIES else errno.EAFNOSUPPORT
    assert call("socket", family, socket.SOCK_DGRAM, 0) == expected


# -- other ABIs ---------------------------------------------------------------------------------------------------


def x32_getpid() -> bytes:
    """``getpid`` through the x32 ABI (the x32 bit set on the x86-64 number)."""
    return str(LIBC.syscall(ctypes.c_long(0x40000000 | 39))).encode()


def int80_getpid() -> bytes:
    """``getpid`` through the 32-bit ABI: ``mov eax, 20; int 0x80; ret`` in an executable page."""
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(b"\xb8\x14\x00\x00\x00\xcd\x80\xc3")
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    return str(ctypes.CFUNCTYPE(ctypes.c_int)(address)()).encode()


@x86_64_only
@pytest.mark.parametrize("attempt", [x32_getpid, int80_getpid], ids=["x32", "int80"])
def test_calls_of_other_abis_kill_the_caller(attempt: Callable[[], bytes]) -> None:
    """Another ABI's numbering would dodge every rule: the filter kills the caller instead (SIGSYS)."""
    rules = build_filter()

    def unfiltered_attempt() -> bytes:
        load(None)
        return attempt()

    def filtered_attempt() -> bytes:
        load(rules)
        return attempt()

    _, unfiltered = in_child(unfiltered_attempt)
    assert not (os.WIFSIGNALED(unfiltered) and os.WTERMSIG(unfiltered) == signal.SIGSYS)
    data, filtered = in_child(filtered_attempt)
    assert os.WIFSIGNALED(filtered) and os.WTERMSIG(filtered) == signal.SIGSYS, (data, filtered)


def test_calls_of_other_abis_kill_the_whole_process() -> None:
    assert build_filter().get_attr(pyseccomp.Attr.ACT_BADARCH) == pyseccomp.KILL_PROCESS


# -- failures -----------------------------------------------------------------------------------------------------


def test_without_the_binding_the_filter_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyseccomp", None)  # importing it raises ImportError
    with pytest.raises(SeccompUnavailable, match=r"^libseccomp cannot be loaded \(.*pyseccomp") as caught:
        build_filter()
    assert isinstance(caught.value.__cause__, ImportError)


def test_a_rule_libseccomp_refuses_makes_the_filter_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    class Refusing:
        def __init__(self, action: int) -> None:
            self.action = action

        def set_attr(self, *args: Any) -> None:
            return None

        def add_rule(self, *args: Any) -> None:
            raise OSError(errno.EINVAL, "Invalid argument")

    binding = types.SimpleNamespace(**vars(pyseccomp))
    binding.SyscallFilter = Refusing
    monkeypatch.setattr(seccomp_filter, "_binding", lambda: binding)
    with pytest.raises(SeccompUnavailable, match=r"^libseccomp refused a rule \(\[Errno 22\] Invalid argument\)$"):
        build_filter()


def test_a_denied_name_this_architecture_lacks_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A call libseccomp cannot resolve here is not a call anything can make: the filter still builds."""
    unknown = {"not_a_system_call_anywhere": "a name no ABI has"}
    monkeypatch.setattr(seccomp_filter, "DENIED", unknown | seccomp_filter.DENIED)  # first, before the rest
    assert pyseccomp.resolve_syscall(pyseccomp.system_arch(), "not_a_system_call_anywhere") < 0
    rules = build_filter()  # used to raise: libseccomp refused the rule, and the whole python tool was unavailable
    with tempfile.TemporaryFile("w+") as text:
        rules.export_pfc(text)
        text.seek(0)
        compiled = text.read()
    keyctl = pyseccomp.resolve_syscall(pyseccomp.system_arch(), "keyctl")
    assert f"$syscall == {keyctl}" in compiled  # the names after it are refused still


def open_descriptors() -> set[int]:
    """The open file descriptors of this process (not the one that listed them, closed by now)."""
    listed = [int(name) for name in os.listdir("/proc/self/fd")]
    return {fd for fd in listed if is_open(fd)}


def is_open(fd: int) -> bool:
    """True when ``fd`` is an open descriptor."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def test_a_failed_export_closes_the_anonymous_file(monkeypatch: pytest.MonkeyPatch) -> None:
    class Failing:
        def export_bpf(self, stream: Any) -> None:
            raise OSError(errno.EIO, "export failed")

    monkeypatch.setattr(seccomp_filter, "build_filter", Failing)
    before = open_descriptors()
    with pytest.raises(OSError, match="export failed"):
        compiled_filter()
    assert open_descriptors() == before


# -- the compiled filter and bubblewrap ---------------------------------------------------------------------------


@pytest.fixture
def compiled() -> Iterator[int]:
    """A compiled filter's descriptor, closed afterwards."""
    before = open_descriptors()
    fd = compiled_filter()
    assert open_descriptors() - before == {fd}  # one descriptor: the copy it wrote through is closed
    yield fd
    os.close(fd)


def test_compiled_filter_is_bpf_in_an_inheritable_rewound_anonymous_file(compiled: int) -> None:
    assert os.lseek(compiled, 0, os.SEEK_CUR) == 0  # rewound: bubblewrap reads from where it stands
    assert os.get_inheritable(compiled)  # bubblewrap inherits it
    assert stat.S_ISREG(os.fstat(compiled).st_mode)
    assert os.readlink(f"/proc/self/fd/{compiled}") == "/memfd:harmony-chat-seccomp (deleted)"
    program = os.read(compiled, 1 << 20)
    assert program and len(program) % 8 == 0  # struct sock_filter: 8 bytes an instruction
    assert len(program) // 8 <= 4096  # BPF_MAXINSNS: the kernel refuses a longer program
    with tempfile.TemporaryFile() as reference:
        build_filter().export_bpf(reference)
        reference.seek(0)
        assert reference.read() == program


def bwrap(fd: int | None, *options: str, command: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``command`` under bubblewrap with ``options`` and, given ``fd``, the compiled filter (rewound)."""
    assert BWRAP is not None
    seccomp: list[str] = []
    if fd is not None:
        os.lseek(fd, 0, os.SEEK_SET)  # the previous run read it to the end
        seccomp = ["--seccomp", str(fd)]
    argv = [BWRAP, "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", *options, *seccomp, "--", *command]
    pass_fds = () if fd is None else (fd,)
    return subprocess.run(argv, pass_fds=pass_fds, capture_output=True, text=True, timeout=20, check=False)


@needs_bwrap
def test_bubblewrap_loads_the_compiled_filter(compiled: int) -> None:
    done = bwrap(compiled, "--unshare-user", "--disable-userns", command=["/bin/true"])
    unfiltered = bwrap(None, "--unshare-user", "--disable-userns", command=["/bin/true"])
    if unfiltered.returncode != 0:
        pytest.skip(f"bubblewrap cannot make a sandbox here: {unfiltered.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    refused = bwrap(compiled, "--unshare-user", "--disable-userns", command=["unshare", "-r", "true"])
    assert refused.returncode != 0 and "Operation not permitted" in refused.stderr


@needs_bwrap
@pytest.mark.parametrize("command", [["unshare", "-r", "true"], ["unshare", "-m", "true"]], ids=["user", "mount"])
def test_the_filter_alone_stops_new_namespaces_under_bubblewrap(compiled: int, command: list[str]) -> None:
    unfiltered = bwrap(None, "--unshare-user", command=command)
    if unfiltered.returncode != 0:
        pytest.skip(f"nested namespaces are not allowed here: {unfiltered.stderr.strip()}")
    refused = bwrap(compiled, "--unshare-user", command=command)
    assert refused.returncode != 0 and "Operation not permitted" in refused.stderr


# -- bubblewrap's options and the probe (sandbox.py) --------------------------------------------------------------

INSIDE = """
import ctypes, json, os, socket, subprocess
libc = ctypes.CDLL(None, use_errno=True)
signal = ctypes.c_int()
libc.prctl(2, ctypes.byref(signal), 0, 0, 0)  # PR_GET_PDEATHSIG
status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
print(json.dumps({
    "ids": [os.getuid(), os.getgid(), os.getgroups()],
    "hostname": socket.gethostname(),
    "caps": [status["CapEff"].strip(), status["CapBnd"].strip()],
    "session": os.getsid(0),
    "pdeathsig": signal.value,
    "interfaces": [line.split(":")[0].strip() for line in open("/proc/net/dev").read().splitlines()[2:]],
    "processes": sorted(int(name) for name in os.listdir("/proc") if name.isdigit()),
    "dev_has_vda_or_sda": any(name.startswith(("vd", "sd", "nvme")) for name in os.listdir("/dev")),
    "namespaces": {name: os.readlink(f"/proc/self/ns/{name}") for name in %r},
    "nested_user_namespace": subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode,
}))
"""
NAMESPACES = ("user", "mnt", "net", "pid", "ipc", "uts", "cgroup")


@needs_bwrap
def test_bubblewrap_options_make_the_sandbox_the_docstring_promises() -> None:
    assert BWRAP is not None
    options = bwrap_options(BWRAP)
    assert options[0] == BWRAP
    argv = [options[0], "--ro-bind", "/", "/", *options[1:], "--", sys.executable, "-c", INSIDE % (NAMESPACES,)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    if done.returncode != 0 and not runs_as_real_root():
        pytest.skip(f"bubblewrap cannot make a sandbox here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    uid, gid, groups = seen["ids"]
    assert (uid, gid) == (SANDBOX_UID, SANDBOX_UID)
    # root has none; an ordinary user's own groups cannot be dropped in a user namespace: unmapped, they show
    # as the overflow group and name nothing inside
    assert groups == [] if os.geteuid() == 0 else set(groups) <= {SANDBOX_UID}
    assert seen["hostname"] == "sandbox"
    assert seen["caps"] == ["0000000000000000", "0000000000000000"]
    assert seen["session"] != 0  # a session of its own (the caller's session lies outside its PID namespace)
    assert seen["pdeathsig"] == signal.SIGKILL  # --die-with-parent
    assert seen["interfaces"] == ["lo"]
    assert len(seen["processes"]) <= 3 and not seen["dev_has_vda_or_sda"]  # its own /proc and /dev
    assert seen["nested_user_namespace"] != 0  # --disable-userns
    for name in NAMESPACES:
        assert seen["namespaces"][name] != os.readlink(f"/proc/self/ns/{name}"), name


def test_unshare_prefix_makes_a_private_mount_namespace() -> None:
    assert unshare_prefix(True) == ["unshare", "--mount", "--propagation", "private", "--"]
    assert unshare_prefix(False) == [
        "unshare",
        "--user",
        "--map-root-user",
        "--mount",
        "--propagation",
        "private",
        "--",
    ]


@pytest.fixture
def reporter() -> Iterator[Callable[[str], str]]:
    """Make a stand-in for ``bwrap`` (any user may run it) from a shell script's body; return its path."""
    folder = tempfile.mkdtemp(prefix="harmony-chat-fake-bwrap-")
    os.chmod(folder, 0o755)

    def make(body: str) -> str:
        path = Path(folder) / "bwrap"
        path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        path.chmod(0o755)
        return str(path)

    yield make
    shutil.rmtree(folder)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="the unshare command is not installed")
def test_the_probe_runs_bwrap_as_the_kernel_would_run(reporter: Callable[[str], str]) -> None:
    fake = reporter('echo "$(id -u) $(id -g) [$(id -G)] {$(tr -s " " < /proc/self/uid_map | xargs)} $*" >&2; exit 1')
    expected = " ".join([*bwrap_options(fake)[1:], "--ro-bind", "/", "/", "--", "true"])
    own_map = " ".join(Path("/proc/self/uid_map").read_text(encoding="ascii").split())
    if os.geteuid() == 0:  # the host's root hands the sandbox to nobody, with no other groups, in its own namespace
        said = sandbox._try_bwrap(fake, True)
        assert said == f"{SANDBOX_UID} {SANDBOX_UID} [{SANDBOX_UID}] {{{own_map}}} {expected}"
    plain = sandbox._try_bwrap(fake, False)  # a plain user: in a user namespace of its own, mapped to root
    if plain.startswith("unshare:"):
        pytest.skip(f"user namespaces are not allowed here: {plain}")
    assert plain.startswith("0 0 [") and plain.endswith(f"] {{0 {os.geteuid()} 1}} {expected}")


def test_the_probe_reports_the_last_line_bwrap_wrote_or_the_status(reporter: Callable[[str], str]) -> None:
    as_root = runs_as_real_root()
    said = reporter("echo 'bwrap: first words' >&2; echo '  bwrap: last words  ' >&2; echo >&2; exit 3")
    assert sandbox._try_bwrap(said, as_root) == "bwrap: last words"
    silent = reporter("echo '  ' >&2; exit 3")
    assert sandbox._try_bwrap(silent, as_root) == "exit status 3"
    assert sandbox._try_bwrap(reporter("exit 0"), as_root) == ""
    missing = sandbox._try_bwrap("/nonexistent/bwrap", as_root)
    assert "No such file or directory" in missing and "/nonexistent/bwrap" in missing


@pytest.fixture
def probe(monkeypatch: pytest.MonkeyPatch) -> Callable[[], Platform]:
    """``probe_platform`` without its cache, on a machine where everything is there unless a test says otherwise."""
    found = {"bwrap": "/opt/bwrap", "unshare": "/usr/bin/unshare"}
    monkeypatch.setattr(shutil, "which", lambda name: found.get(name))
    monkeypatch.setattr(sandbox, "runs_as_real_root", lambda: True)
    monkeypatch.setattr(sandbox, "build_filter", lambda: None)
    monkeypatch.setattr(
        sandbox, "_try_bwrap", lambda bwrap, as_root: "" if (bwrap, as_root) == ("/opt/bwrap", True) else "?"
    )
    monkeypatch.setattr(sandbox, "can_limit_memory", lambda: True)
    return probe_platform.__wrapped__


def test_the_probe_finds_a_sandbox_and_how_memory_is_bounded(
    probe: Callable[[], Platform], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert probe() == Platform(True, True, "", memory="cgroup", bwrap="/opt/bwrap")
    assert probe().network_blocked
    monkeypatch.setattr(sandbox, "can_limit_memory", lambda: False)
    assert probe() == Platform(True, True, "", memory="process", bwrap="/opt/bwrap")


def test_the_probe_says_what_is_missing(probe: Callable[[], Platform], monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse() -> None:
        raise SeccompUnavailable("libseccomp cannot be loaded (no libseccomp.so.2)")

    monkeypatch.setattr(sandbox, "_try_bwrap", lambda bwrap, as_root: "bwrap: setting up uid map: Permission denied")
    assert probe() == Platform(
        False,
        True,
        f"bubblewrap cannot make a sandbox here (bwrap: setting up uid map: Permission denied); {CONTAINER_HINT}",
    )
    monkeypatch.setattr(sandbox, "build_filter", refuse)
    reason = (
        "libseccomp cannot be loaded (no libseccomp.so.2): install libseccomp2 (Debian/Ubuntu) or libseccomp"
        " (Fedora, Arch)"
    )
    assert probe() == Platform(False, True, reason)
    monkeypatch.setattr(shutil, "which", lambda name: "/opt/bwrap" if name == "bwrap" else None)
    assert probe() == Platform(False, True, "the unshare command (util-linux) is not installed")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert probe() == Platform(False, True, f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.setattr(sandbox, "runs_as_real_root", lambda: False)
    assert probe() == Platform(False, False, f"the python tool's sandbox needs Linux (darwin): {CONTAINER_HINT}")
    assert not probe().network_blocked


@needs_bwrap
def test_the_probe_finds_this_machines_sandbox() -> None:
    found = probe_platform.__wrapped__()
    if not found.available:
        pytest.skip(f"no sandbox here: {found.reason}")
    assert found.as_root == runs_as_real_root() and found.bwrap == BWRAP and found.reason == ""
    assert probe_platform() is probe_platform()  # probed once per process


# -- the rest of sandbox.py: who is root, the environment, the allow-list, the plan -------------------------------


@pytest.mark.parametrize(
    ("uid_map", "real"),
    [
        pytest.param("         0          0 4294967295\n", True, id="host"),
        pytest.param("0 100000 65536\n", True, id="delegated-range"),
        pytest.param("0 100000 65535\n", True, id="up-to-nobody"),
        pytest.param("0 100000 65534\n", False, id="short-of-nobody"),
        pytest.param("0 1000 1\n", False, id="only-itself"),
        pytest.param("0 1000 1\n1 100000 65536\n", True, id="itself-and-a-range"),
        pytest.param(None, True, id="no-uid-map"),
    ],
)
def test_root_is_real_when_its_user_namespace_maps_nobody_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, uid_map: str | None, real: bool
) -> None:
    fake = tmp_path / "uid_map"
    if uid_map is not None:
        fake.write_text(uid_map, encoding="ascii")
    monkeypatch.setattr(sandbox, "Path", lambda name: fake if name == "/proc/self/uid_map" else Path(name))
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert runs_as_real_root() is real
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert runs_as_real_root() is False


def test_the_environment_is_exactly_the_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in list(os.environ):
        if key in ("LANG", "LANGUAGE", "TZ", "TERM") or key.startswith("LC"):
            monkeypatch.delenv(key)
    passed = {"LANG": "C.UTF-8", "LANGUAGE": "en", "TZ": "UTC", "TERM": "xterm", "LC_ALL": "C", "LC_CTYPE": "C"}
    for key, value in {**passed, "LCX": "1", "OPENAI_API_KEY": "sk-x", "LD_PRELOAD": "/x.so", "HOME": "/root"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    expected = {
        **passed,
        "PATH": f"{Path(sys.executable).parent}:{SYSTEM_PATH}",
        "HOME": "/h",
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "TMPDIR": "/t",
        "MALLOC_ARENA_MAX": "2",
        "OMP_NUM_THREADS": "4",
        "OPENBLAS_NUM_THREADS": "4",
        "MKL_NUM_THREADS": "4",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYTHONPATH": "/u",
    }
    assert sandbox_environment("/h", "/t", "/u") == expected
    assert SYSTEM_PATH == "/usr/local/bin:/usr/bin:/bin"
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one thread each
    threads = {key: "1" for key in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    without_site = {key: value for key, value in expected.items() if key != "PYTHONPATH"}
    assert sandbox_environment("/h", "/t", None) == {**without_site, **threads}
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert sandbox_environment("/h", "/t", "")["OMP_NUM_THREADS"] == "2"


def test_nested_paths_are_shown_with_their_parent() -> None:
    paths = ["/usr/lib/python3", "/usr", "/usrlocal", "/opt/a/", "/opt/a/b", "/opt/X", "/opt/Y", "/usr"]
    assert sandbox._without_nested(paths) == ["/opt/X", "/opt/Y", "/opt/a/", "/usr", "/usrlocal"]
    shown = sandbox.visible_paths()
    assert not [path for path in shown if any(sandbox._under(path, other) for other in shown if other != path)]


def test_python_folders_include_the_user_site_and_the_real_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(tmp_path))
    folders = python_folders()
    assert str(tmp_path) in folders
    interpreter = os.path.realpath(sys.executable)
    assert any(interpreter.startswith(folder + "/") for folder in folders)


@pytest.mark.parametrize("exists", [True, False])
def test_plan_puts_the_user_site_on_the_path_only_where_it_exists(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, exists: bool
) -> None:
    user_site = tmp_path / "user-site"
    if exists:
        user_site.mkdir()
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user_site))
    plan = build_plan(
        Platform(True, False), SandboxLimits(), private_dir=tmp_path, kernel_argv_for=list, launcher=Path("l.py")
    )
    for fd in plan.pass_fds:
        os.close(fd)
    assert plan.env["HOME"] == "/mnt/data/.home"
    assert plan.env.get("PYTHONPATH") == (str(user_site) if exists else None)


STAND_IN = """
import grp, json, os, pwd, resource, socket, sys
facts = {"ids": [os.getuid(), os.getgid()], "cwd": os.getcwd(), "env": dict(os.environ)}
user = pwd.getpwuid(os.getuid())
facts["user"] = [user.pw_name, user.pw_dir, grp.getgrgid(os.getgid()).gr_name]
facts["localhost"] = sorted({info[4][0] for info in socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)})
names = {"cpu_s": "RLIMIT_CPU", "memory_bytes": "RLIMIT_AS", "file_bytes": "RLIMIT_FSIZE",
         "processes": "RLIMIT_NPROC", "open_files": "RLIMIT_NOFILE"}
facts["limits"] = {key: resource.getrlimit(getattr(resource, name))[0] for key, name in names.items()}
status = dict(line.split(":\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\t" in line)
facts["seccomp"] = status["Seccomp"].strip()
try:
    socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    facts["packet"] = 0
except OSError as error:
    facts["packet"] = error.errno
for folder in ("/mnt/data", "/tmp", "/dev/shm"):
    with open(f"{folder}/written", "w") as handle:
        handle.write("x")
facts["connection"] = open(sys.argv[1]).read()
facts["etc"] = {name: open(f"/etc/{name}").read().splitlines() for name in ("passwd", "group", "hosts")
                if os.path.exists(f"/etc/{name}")}
print(json.dumps(facts))
"""


def launch(
    plan: sandbox.LaunchPlan, private: Path, preexec_fn: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    """Start ``plan`` as the kernel's start does (spec, channel, descriptors); wait for its stand-in to end."""
    host_end, launcher_end = socket.socketpair()
    with host_end:
        spec = dict(plan.spec, connection="{}")
        spec["init"] = dict(spec["init"], channel=launcher_end.fileno())
        if spec.get("become"):
            private.chmod(0o711)
        (private / "launch.json").write_text(json.dumps(spec), encoding="utf-8")
        try:
            process = subprocess.Popen(
                plan.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd="/",
                env=plan.env,
                start_new_session=True,
                pass_fds=(launcher_end.fileno(), *plan.pass_fds),
                preexec_fn=preexec_fn,
            )
        finally:
            launcher_end.close()
            for fd in plan.pass_fds:
                os.close(fd)
        host_end.settimeout(20)
        try:
            ready, handed, _flags, _address = socket.recv_fds(host_end, 64, 2)
        except OSError:
            ready, handed = b"", []
        for fd in handed:
            os.close(fd)
        out, err = process.communicate(timeout=20)
    assert ready == b"ready" and len(handed) == 2, err
    return subprocess.CompletedProcess(plan.argv, process.returncode, out, err)


def leave(cgroup: Cgroup) -> int:
    """Wait (briefly) until the cgroup's processes are gone, remove it; return the most memory it held."""
    for _ in range(1000):  # the sandbox's processes may still be leaving when the launcher has ended
        if not cgroup.procs.read_text(encoding="ascii").strip():
            break
        time.sleep(0.002)
    usage = "memory.max_usage_in_bytes" if cgroup.version == 1 else "memory.peak"
    used = int((cgroup.folder / usage).read_text(encoding="ascii"))
    cgroup.remove()
    return used


def run_plan(
    as_root: bool, memory: str, limits: SandboxLimits, preexec_fn: Callable[[], None] | None = None
) -> tuple[subprocess.CompletedProcess[str], sandbox.LaunchPlan]:
    """Build the plan for a stand-in kernel, run it under the launcher, clean up; skip where it cannot run."""
    if as_root and not runs_as_real_root():
        pytest.skip("only the host's root runs the sandbox as nobody")
    if memory == "cgroup" and not can_limit_memory():
        pytest.skip("no cgroup can be made here")
    if not probe_platform().available:
        pytest.skip(f"no sandbox here: {probe_platform().reason}")
    platform_here = Platform(True, as_root, memory="cgroup" if memory == "cgroup" else "process", bwrap=BWRAP or "")
    private = Path(tempfile.mkdtemp(prefix="hc-py-", dir=short_temp_root()))
    used = -1
    try:
        plan = build_plan(
            platform_here,
            limits,
            private_dir=private,
            kernel_argv_for=lambda connection: [sys.executable, "-I", "-S", "-c", STAND_IN, connection],
            launcher=Path(launcher.__file__),
        )
        try:
            done = launch(plan, private, preexec_fn)
        finally:
            if plan.cgroup is not None:
                used = leave(plan.cgroup)
    finally:
        shutil.rmtree(private, ignore_errors=True)  # the quota's tmpfs was mounted in the launcher's namespace only
    if plan.cgroup is not None:
        assert used > 0  # the sandbox's processes were counted in it
        assert not plan.cgroup.folder.exists()
    return done, plan


def within_hard_limits(limits: SandboxLimits) -> SandboxLimits:
    """``limits`` lowered to what this process's hard limits allow (a test runner such as mutmut sets some)."""

    def hard(which: int, wanted: int, headroom: int = 0) -> int:
        ceiling = resource.getrlimit(which)[1]
        return wanted if ceiling == resource.RLIM_INFINITY else max(1, min(wanted, ceiling - headroom))

    return dataclasses.replace(
        limits,
        cpu_s=hard(resource.RLIMIT_CPU, limits.cpu_s, headroom=5),  # the launcher adds 5 s of grace
        memory_bytes=hard(resource.RLIMIT_AS, limits.memory_bytes),
        process_memory_bytes=hard(resource.RLIMIT_AS, limits.process_memory_bytes),
        processes=hard(resource.RLIMIT_NPROC, limits.processes),
        fallback_processes=hard(resource.RLIMIT_NPROC, limits.fallback_processes),
        file_bytes=hard(resource.RLIMIT_FSIZE, limits.file_bytes),
        open_files=hard(resource.RLIMIT_NOFILE, limits.open_files),
    )


MODES = [
    pytest.param(True, "process", id="root-process"),
    pytest.param(True, "cgroup", id="root-cgroup"),
    pytest.param(False, "process", id="user-process"),
]


@needs_bwrap
@pytest.mark.parametrize(("as_root", "memory"), MODES)
def test_the_plan_runs_under_the_launcher_as_the_docstring_says(as_root: bool, memory: str) -> None:
    """The whole plan, with a stand-in for the kernel: the filter, the limits, the users, the files, the cgroup."""
    limits = within_hard_limits(
        SandboxLimits(cpu_s=77, memory_bytes=3 * 1024**3, processes=99, file_bytes=5 * 1024**2, open_files=55)
    )
    done, plan = run_plan(as_root, memory, limits)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout)
    assert facts["ids"] == [SANDBOX_UID, SANDBOX_UID]
    assert facts["user"] == ["nobody", "/mnt/data/.home", "nogroup"]
    assert facts["etc"] == {  # its own (nss-systemd would name nobody even without them: read the files)
        "passwd": ["root:x:0:0:root:/mnt/data/.home:/bin/sh", "nobody:x:65534:65534:nobody:/mnt/data/.home:/bin/sh"],
        "group": ["root:x:0:", "nogroup:x:65534:"],
        "hosts": ["127.0.0.1 localhost", "::1 localhost"],
    }
    assert facts["localhost"] == ["127.0.0.1", "::1"]
    assert facts["cwd"] == "/mnt/data" and facts["connection"] == "{}"
    assert facts["env"] == plan.env
    assert facts["limits"] == limits.rlimits(cgroup=memory == "cgroup")
    assert facts["seccomp"] == "2" and facts["packet"] == errno.EAFNOSUPPORT


@needs_bwrap
def test_the_plan_runs_under_a_lower_inherited_hard_limit() -> None:
    def lower() -> None:  # 600 s, or lower where the hard limit already is (it cannot be raised)
        ceiling = resource.getrlimit(resource.RLIMIT_CPU)[1]
        seconds = 600 if ceiling == resource.RLIM_INFINITY else min(600, ceiling)
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))

    done, _plan = run_plan(runs_as_real_root(), "process", SandboxLimits(), lower)
    assert done.returncode == 0, done.stderr


FAKE_SYSTEMD_RUN = """#!/bin/sh
# A stand-in for systemd-run --user --scope: record the arguments, then run the command after "--" in place.
printf '%s\\n' "$@" "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR" > "$(dirname "$0")/../systemd-run-args"
[ -e "$(dirname "$0")/../refuse" ] && exit 1
while [ "$1" != "--" ]; do shift; done
shift
exec "$@"
"""
"""No systemd runs here: this checks harmony-chat's side of the scope (the command line, and that the
sandbox starts through a program that execs it in place), not systemd's."""


@pytest.fixture
def fake_systemd_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``systemd-run`` first on PATH; returns the file it writes its arguments to."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "systemd-run"
    script.write_text(FAKE_SYSTEMD_RUN, encoding="utf-8")
    script.chmod(0o755)
    args = tmp_path / "systemd-run-args"
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    return args


def test_an_ordinary_user_without_a_cgroup_of_its_own_gets_a_systemd_scope(
    probe: Callable[[], Platform], monkeypatch: pytest.MonkeyPatch, fake_systemd_run: Path
) -> None:
    found = {"bwrap": "/opt/bwrap", "unshare": "/usr/bin/unshare", "systemd-run": "/usr/bin/systemd-run"}
    monkeypatch.setattr(shutil, "which", lambda name: found.get(name))
    monkeypatch.setattr(sandbox, "runs_as_real_root", lambda: False)
    monkeypatch.setattr(sandbox, "_try_bwrap", lambda bwrap, as_root: "")
    monkeypatch.setattr(sandbox, "can_limit_memory", lambda: False)
    assert probe() == Platform(True, False, "", memory="systemd", bwrap="/opt/bwrap")
    assert fake_systemd_run.read_text(encoding="utf-8").splitlines()[:3] == ["--user", "--scope", "--quiet"]
    (fake_systemd_run.parent / "refuse").touch()  # no user session, or no delegation: per-process bounds
    assert probe() == Platform(True, False, "", memory="process", bwrap="/opt/bwrap")
    monkeypatch.setattr(sandbox, "runs_as_real_root", lambda: True)  # root makes its own cgroup or none
    (fake_systemd_run.parent / "refuse").unlink()
    monkeypatch.setattr(sandbox, "_try_bwrap", lambda bwrap, as_root: "")
    assert probe().memory == "process"


@needs_bwrap
def test_the_kernel_starts_inside_a_systemd_scope_with_the_sandboxs_limits(
    tmp_path: Path, fake_systemd_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan runs the launcher through ``systemd-run --user --scope`` with MemoryMax and TasksMax."""
    from harmony_chat.tools.python import PythonTool

    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/4242")
    limits = SandboxLimits(memory_bytes=1536 * 1024**2, processes=96)
    platform = dataclasses.replace(probe_platform(), memory="systemd")
    tool = PythonTool(workdir=tmp_path / "work", limits=limits, platform=platform)
    try:
        result = tool.run(
            "import os, resource\nprint(resource.getrlimit(resource.RLIMIT_NPROC)[0], 'XDG_RUNTIME_DIR' in os.environ)",
            timeout_s=60,
            should_stop=lambda: False,
        )
    finally:
        tool.close()
    args = fake_systemd_run.read_text(encoding="utf-8").splitlines()
    assert args[: args.index("--")] == systemd_scope_prefix(limits)[1:-1]
    assert args[-1] == "XDG_RUNTIME_DIR=/run/user/4242"  # systemd-run --user reaches the user's manager with it
    assert f"MemoryMax={1536 * 1024**2}" in args and "TasksMax=96" in args and "MemorySwapMax=0" in args
    assert result.status == "done" and result.text.strip() == "96 False", result.text  # whole-sandbox bound, clean env
