"""The python tool's seccomp filter: a denylist in the spirit of Flatpak's, compiled by libseccomp.

bubblewrap loads it (``--seccomp FD``) just before it starts the sandbox's first program, so it
holds for the launcher, the kernel and everything the model's code starts. Every other system call
is allowed: the kernel is a normal Python process. :data:`DENIED` says what is refused and why;
docs/security.md repeats it for users. A refused call fails with ``EPERM`` (``ENOSYS`` for
``clone3``, so that the C library falls back to ``clone``, whose flags the filter can read).
System calls of other ABIs (32-bit ``int 0x80``, x32) kill the process: libseccomp's default.
"""

from __future__ import annotations

import errno
import os
import socket
from typing import Any

NAMESPACE_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x00000080)
"""``CLONE_NEWNS``, ``NEWCGROUP``, ``NEWUTS``, ``NEWIPC``, ``NEWUSER``, ``NEWPID``, ``NEWNET``, ``NEWTIME``."""
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
NETLINK_ROUTE = 0
ALLOWED_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK)
"""Socket families the code may create. AF_UNIX: ZeroMQ's sockets to the host and Python's own
``socketpair``/``multiprocessing`` (inside the sandbox they reach only the sandbox's own sockets:
no host socket is mounted and abstract names belong to the sandbox's network namespace); AF_INET
and AF_INET6: the sandbox's own loopback only (it has no other interface); AF_NETLINK: only
``NETLINK_ROUTE``, which the C library uses to list the sandbox's interfaces."""
MAX_FAMILY = 45
"""The highest address family Linux knows (AF_MCTP); every other family up to it is refused."""

DENIED: dict[str, str] = {
    "keyctl": "the kernel keyrings: the host's session keyring (Kerberos tickets, filesystem keys) must stay unread",
    "add_key": "the kernel keyrings",
    "request_key": "the kernel keyrings",
    "unshare": "new namespaces: a nested user namespace could mount its own tmpfs past the disk quota",
    "setns": "joining namespaces",
    "mount": "mounting (a file system past the quota, or over the sandbox's own view)",
    "umount2": "unmounting what hides the host",
    "pivot_root": "changing the root",
    "chroot": "changing the root",
    "open_tree": "the new mount API",
    "move_mount": "the new mount API",
    "fsopen": "the new mount API",
    "fsconfig": "the new mount API",
    "fsmount": "the new mount API",
    "fspick": "the new mount API",
    "mount_setattr": "the new mount API",
    "ptrace": "tracing other processes (the launcher holds the host's channel)",
    "process_vm_readv": "reading another process's memory",
    "process_vm_writev": "writing another process's memory",
    "perf_event_open": "performance counters: a side channel and a long history of kernel bugs",
    "bpf": "loading programs into the kernel",
    "userfaultfd": "a primitive of kernel exploits (it stalls the kernel at a chosen page fault)",
    "io_uring_setup": "io_uring runs operations (sockets included) that no seccomp filter sees",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    "kexec_load": "loading a kernel",
    "init_module": "loading kernel modules",
    "finit_module": "loading kernel modules",
    "delete_module": "removing kernel modules",
    "syslog": "the kernel's log",
    "acct": "process accounting",
    "quotactl": "file system quotas",
    "swapon": "swap",
    "swapoff": "swap",
    "reboot": "rebooting",
    "uselib": "an obsolete loader call",
}
"""System calls refused outright, each with why."""
DENIED_WITH_ARGUMENTS: dict[str, str] = {
    "clone": "with any namespace flag (a new user, mount, network, PID, IPC, UTS, cgroup or time namespace)",
    "clone3": "always, with ENOSYS: its flags lie in memory a filter cannot read, so the C library falls back to clone",
    "personality": "any persona but the default (one would turn off address randomisation)",
    "ioctl": "TIOCSTI and TIOCLINUX: typing into a terminal, or reading its screen",
    "socket": "families other than unix, IPv4, IPv6 and netlink routing (the sandbox has only loopback)",
}
"""System calls refused only for some arguments, with which."""


class SeccompUnavailable(RuntimeError):
    """libseccomp (or its Python binding) cannot be loaded here; the message says why."""


def _binding() -> Any:
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as error:  # the binding raises RuntimeError without libseccomp
        raise SeccompUnavailable(f"libseccomp cannot be loaded ({error})") from error
    return pyseccomp


def build_filter() -> Any:
    """The filter as a libseccomp context (``pyseccomp.SyscallFilter``); raise ``SeccompUnavailable``."""
    sc = _binding()
    refuse = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    native = sc.system_arch()
    try:
        rules.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)  # libseccomp's default ends only the thread
        for name in DENIED:
            if sc.resolve_syscall(native, name) < 0:  # not a call of this architecture: nothing to refuse
                continue
            rules.add_rule(refuse, name)
        for flag in NAMESPACE_FLAGS:  # one rule per flag: a filter compares masked bits for equality only
            rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
        rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        rules.add_rule(refuse, "personality", sc.Arg(0, sc.NE, 0))
        for request in (TIOCSTI, TIOCLINUX):
            rules.add_rule(refuse, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
        for family in range(MAX_FAMILY + 1):
            if family not in ALLOWED_FAMILIES:
                rules.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, family))
        rules.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.GT, MAX_FAMILY))
        rules.add_rule(refuse, "socket", sc.Arg(0, sc.EQ, socket.AF_NETLINK), sc.Arg(2, sc.NE, NETLINK_ROUTE))
    except OSError as error:
        raise SeccompUnavailable(f"libseccomp refused a rule ({error})") from error
    return rules


def compiled_filter() -> int:
    """The filter compiled to BPF in an anonymous file, rewound; the caller owns the descriptor."""
    rules = build_filter()
    fd = os.memfd_create("harmony-chat-seccomp", 0)  # not close-on-exec: bubblewrap reads it
    try:
        with os.fdopen(os.dup(fd), "wb", closefd=True) as stream:
            rules.export_bpf(stream)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
