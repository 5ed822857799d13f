"""The attack suite of issue 56: hostile code, as a model would send it, against the python tool's sandbox.

Each attack goes the way a malicious model's would: a replayed completion calling ``python`` through
``harmony-chat ask --tool python --yes``, so what contains it is the whole real path (the launcher,
bubblewrap, the seccomp filter, the cgroup, the host's side of the kernel). Each test fails on a
sandbox that lacks the protection it names, and checks the host, not only what the code printed.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import json
import os
import re
import secrets
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmony_chat.cli import main
from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES
from harmony_chat.tools.python import PythonTool, SandboxLimits, probe_platform
from tests.tools.python.helpers import run

pytestmark = pytest.mark.skipif(not probe_platform().available, reason=probe_platform().reason)

MIB = 1024**2
SYS_ADD_KEY = 248
SYS_KEYCTL = 250
SYS_SHMGET = 29
SYS_SHMCTL = 31
IPC_CREAT = 0o1000
IPC_EXCL = 0o2000
IPC_RMID = 0
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_INVALIDATE = 21
x86_64 = pytest.mark.skipif(os.uname().machine != "x86_64", reason="the system call numbers are x86_64's")
CALL_TIMEOUT_S = 30
"""``[tools] python_timeout`` for every attack: none may hold the suite longer."""
LIBC_SYSCALL = """\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def syscall(number, *args):
    ctypes.set_errno(0)
    done = libc.syscall(ctypes.c_long(number), *args)
    return done, ctypes.get_errno()
"""
"""What each attack starts with: ``syscall(number, *ctypes_args) -> (result, errno)``."""

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def host_syscall(number: int, *args: object) -> tuple[int, int]:
    """A system call of this (the host's) process: its result and errno."""
    ctypes.set_errno(0)
    done = int(_libc.syscall(ctypes.c_long(number), *args))
    return done, ctypes.get_errno()


def attack(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> str:
    """Run ``code`` as a model's ``python`` call through ``ask``; return the tool result the model reads."""
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    config = tmp_path / "config.toml"
    config.write_text(f"[tools]\npython_timeout = {CALL_TIMEOUT_S}\n", encoding="utf-8")
    replay = tmp_path / "replay.txt"
    call = f"<|channel|>analysis to=python<|message|>{code}<|call|>"
    replay.write_text(call + "\n=====\n<|channel|>final<|message|>ok<|return|>\n", encoding="utf-8")
    exit_code = main(
        ["ask", "--config", str(config), "--replay", str(replay), "--tool", "python", "--yes", "--json", "q"]
    )
    out, _err = capsys.readouterr()
    events = [json.loads(line) for line in out.splitlines()]
    (result,) = [event for event in events if event["type"] == "tool_result"]
    assert exit_code == 0, events
    return str(result["text"])


def values(text: str) -> dict[str, str]:
    """The ``name=value`` words the attack printed."""
    return dict(re.findall(r"(\w+)=(\S+)", text))


@x86_64
def test_the_hosts_keyring_is_out_of_reach(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key in the host's session keyring can be neither described nor read, and no key can be added."""
    secret = f"hc-secret-{secrets.token_hex(8)}".encode()
    description = f"hc-attack-{secrets.token_hex(4)}".encode()
    key, failed = host_syscall(
        SYS_ADD_KEY, b"user", description, secret, ctypes.c_size_t(len(secret)), ctypes.c_long(KEY_SPEC_SESSION_KEYRING)
    )
    if key < 0:
        pytest.skip(f"no key can be added on this host: {os.strerror(failed)}")
    try:
        text = attack(
            capsys,
            tmp_path,
            monkeypatch,
            LIBC_SYSCALL
            + f"""
long = ctypes.c_long
buffer = ctypes.create_string_buffer(4096)
ring, e = syscall({SYS_KEYCTL}, long(0), long(-3), long(0))
print(f"ring={{ring}} ring_errno={{e}}")
for name, target in (("session", ring), ("host", {key})):
    got, e = syscall({SYS_KEYCTL}, long(6), long(target), buffer, long(4096))
    print(f"describe_{{name}}={{got}} describe_{{name}}_errno={{e}}", buffer.value[:200])
    got, e = syscall({SYS_KEYCTL}, long(11), long(target), buffer, long(4096))
    print(f"read_{{name}}={{got}} read_{{name}}_errno={{e}}", buffer.raw[:32])
added, e = syscall({SYS_ADD_KEY}, b"user", b"planted", b"payload", long(7), long(-3))
print(f"add={{added}} add_errno={{e}}")
""",
        )
    finally:
        host_syscall(SYS_KEYCTL, ctypes.c_long(KEYCTL_INVALIDATE), ctypes.c_long(key))
    found = values(text)
    assert secret.decode() not in text and description.decode() not in text
    for call in ("ring", "describe_session", "read_session", "describe_host", "read_host", "add"):
        assert found.get(call) == "-1" and found.get(f"{call}_errno") == str(errno.EPERM), text


def _host_segments() -> dict[int, int]:
    """The host's SysV shared memory segments: key -> id (``/proc/sysvipc/shm`` of this IPC namespace)."""
    lines = Path("/proc/sysvipc/shm").read_text(encoding="ascii").splitlines()[1:]
    return {int(fields[0]): int(fields[1]) for fields in (line.split() for line in lines) if fields}


@x86_64
def test_shared_memory_made_inside_does_not_outlive_the_sandbox(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SysV segment made inside works there, and is gone from the host once the sandbox is."""
    key = 0x48430000 + secrets.randbelow(0xFFFF)
    text = attack(
        capsys,
        tmp_path,
        monkeypatch,
        LIBC_SYSCALL + f"shm, e = syscall({SYS_SHMGET}, ctypes.c_long({key}), ctypes.c_size_t({MIB}),"
        f" ctypes.c_long({IPC_CREAT | 0o666}))\nprint(f'shm={{shm}} shm_errno={{e}}')\n",
    )
    leaked = _host_segments().get(key)
    if leaked is not None:
        host_syscall(SYS_SHMCTL, ctypes.c_long(leaked), ctypes.c_long(IPC_RMID), None)
    assert int(values(text)["shm"]) >= 0, text  # the sandbox's own IPC namespace works
    assert leaked is None, f"the segment {key:#x} made inside is on the host"


@x86_64
def test_a_hosts_segment_cannot_be_reached_by_its_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0600 SysV segment of the host does not exist inside, whatever key the code tries."""
    key = 0x48440000 + secrets.randbelow(0xFFFF)
    segment, failed = host_syscall(
        SYS_SHMGET, ctypes.c_long(key), ctypes.c_size_t(4096), ctypes.c_long(IPC_CREAT | IPC_EXCL | 0o600)
    )
    if segment < 0:
        pytest.skip(f"no SysV segment can be made on this host: {os.strerror(failed)}")
    try:
        text = attack(
            capsys,
            tmp_path,
            monkeypatch,
            LIBC_SYSCALL
            + f"shm, e = syscall({SYS_SHMGET}, ctypes.c_long({key}), ctypes.c_size_t(0), ctypes.c_long(0))\n"
            "print(f'shm={shm} shm_errno={e}')\n",
        )
    finally:
        host_syscall(SYS_SHMCTL, ctypes.c_long(segment), ctypes.c_long(IPC_RMID), None)
    found = values(text)
    assert found.get("shm") == "-1" and found.get("shm_errno") == str(errno.ENOENT), text


@pytest.fixture
def listener() -> Iterator[tuple[str, list[int], threading.Event]]:
    """A Unix socket on the host that anyone may connect to: its path, the connections it took, a stop."""
    folder = tempfile.mkdtemp(prefix="hc-lure-", dir="/tmp")
    os.chmod(folder, 0o755)
    path = f"{folder}/lure"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o777)
    server.listen(64)
    server.settimeout(0.1)
    accepted: list[int] = []
    stop = threading.Event()

    def take() -> None:
        while not stop.is_set():
            try:
                connection, _address = server.accept()
            except TimeoutError:
                continue
            accepted.append(1)
            connection.close()

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    yield path, accepted, stop
    stop.set()
    thread.join(5)
    server.close()
    shutil.rmtree(folder, ignore_errors=True)


def test_kernel_sockets_swapped_for_links_never_lead_the_host_elsewhere(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listener: tuple[str, list[int], threading.Event],
) -> None:
    """Sockets renamed aside and replaced by links to a host socket: the host never connects to it."""
    path, accepted, stop = listener
    code = (
        "import os\n"
        "for n in range(1, 6):\n"
        "    os.rename(f'/run/kernel/k-{n}', f'/run/kernel/old-{n}')\n"
        f"    os.symlink({path!r}, f'/run/kernel/k-{{n}}')\n"
        "os.execv('/bin/sleep', ['sleep', '3'])\n"
    )
    text = attack(capsys, tmp_path, monkeypatch, code)
    time.sleep(3)  # reconnects that might still come
    stop.set()
    assert accepted == [], text
    assert "[the Python kernel died" in text, text


@x86_64
def test_no_nested_user_namespace_and_no_mount(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """unshare(2) of a user and mount namespace, a tmpfs mount and ``unshare -r`` all fail."""
    code = LIBC_SYSCALL + (
        "import os, subprocess\n"
        "CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000\n"
        "got, e = syscall(272, ctypes.c_long(CLONE_NEWUSER | CLONE_NEWNS))\n"
        "print(f'unshare={got} unshare_errno={e}')\n"
        "os.makedirs('/tmp/mnt', exist_ok=True)\n"
        "ctypes.set_errno(0)\n"
        "got = libc.mount(b'tmpfs', b'/tmp/mnt', b'tmpfs', ctypes.c_ulong(0), None)\n"
        "print(f'mount={got} mount_errno={ctypes.get_errno()}')\n"
        "done = subprocess.run(['unshare', '-r', 'true'], capture_output=True, timeout=20)\n"
        "print(f'command={done.returncode}')\n"
    )
    found = values(attack(capsys, tmp_path, monkeypatch, code))
    assert found.get("unshare") == "-1" and found.get("unshare_errno") == str(errno.EPERM), found
    assert found.get("mount") == "-1" and found.get("mount_errno") == str(errno.EPERM), found
    assert found.get("command") not in (None, "0"), found


@pytest.mark.skipif(probe_platform().memory != "cgroup", reason="no cgroup bounds the sandbox's memory here")
def test_memory_is_bounded_across_processes(tmp_path: Path) -> None:
    """Three processes of 400 MiB each cannot all live under a 768 MiB sandbox (its cgroup kills one).

    ``ask`` gives no way to lower the memory limit (4 GiB), so this one builds the tool the way
    ``ask`` does, with a smaller limit: the same launcher, sandbox and cgroup.
    """
    child = (
        "import sys, time\n"
        "block = bytearray(b'1') * (400 * 2**20)\n"  # every page touched
        "time.sleep(4)\n"
        "print('alive', flush=True)\n"
    )
    code = (
        "import subprocess, sys\n"
        f"children = [subprocess.Popen([sys.executable, '-c', {child!r}], stdout=subprocess.PIPE) for _ in range(3)]\n"
        "outputs = [c.communicate(timeout=30)[0] for c in children]\n"
        "print(f'survived={sum(out.strip() == b\"alive\" for out in outputs)}')\n"
    )
    tool = PythonTool(workdir=tmp_path / "work", limits=SandboxLimits(memory_bytes=768 * MIB))
    try:
        result = run(tool, code, timeout_s=CALL_TIMEOUT_S)
    finally:
        tool.close()
    survived = values(result.text).get("survived")
    assert (survived is not None and int(survived) < 3) or "[the Python kernel died" in result.text, result.text


def test_without_a_cgroup_each_process_gets_the_lower_limits(tmp_path: Path) -> None:
    """The no-cgroup fallback: each process has the lower address space and process limits."""
    limits = SandboxLimits()
    platform = dataclasses.replace(probe_platform(), memory="process")
    tool = PythonTool(workdir=tmp_path / "work", limits=limits, platform=platform)
    try:
        result = run(
            tool,
            "import resource\nprint(resource.getrlimit(resource.RLIMIT_AS), resource.getrlimit(resource.RLIMIT_NPROC))",
        )
    finally:
        tool.close()
    memory, processes = limits.process_memory_bytes, limits.fallback_processes
    assert result.text.strip() == f"({memory}, {memory}) ({processes}, {processes})", result.text


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
"""A valid 1x1 PNG, base64."""


def test_an_image_flood_stays_bounded(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """30,000 images: the model's text stays within the output limit, and so do the files saved."""
    code = (
        "from IPython.display import publish_display_data\n"
        "for _ in range(30000):\n"
        f"    publish_display_data({{'image/png': {PNG!r}}})\n"
    )
    started = time.monotonic()
    text = attack(capsys, tmp_path, monkeypatch, code)
    elapsed = time.monotonic() - started
    (workdir,) = (tmp_path / "data" / "python").iterdir()
    saved = [name for name in os.listdir(workdir) if name.endswith(".png")]
    assert len(text.encode("utf-8")) <= OUTPUT_LIMIT_BYTES + 2048, len(text.encode("utf-8"))
    assert len(saved) <= OUTPUT_LIMIT_BYTES // len("/mnt/data/output-1.png, "), len(saved)  # each listed in budget
    assert "were left out, neither saved nor shown" in text, text[-500:]
    assert elapsed < CALL_TIMEOUT_S + 30


def test_a_huge_message_from_the_kernel_is_refused_and_the_model_is_told(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """64 MiB in one stream message (over the host's 16 MiB bound): the call ends, bounded, saying so."""
    code = "import sys\nsys.stdout.write('x' * (64 * 2**20))\nsys.stdout.flush()\n"
    started = time.monotonic()
    text = attack(capsys, tmp_path, monkeypatch, code)
    assert time.monotonic() - started < 60
    assert len(text.encode("utf-8")) < 70 * 1024, len(text.encode("utf-8"))
    assert "[some output was lost: a message from the kernel over 16 MiB is refused]" in text, text[-500:]


def test_the_python_folders_are_private_whatever_the_umask(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The data dir's ``python/`` folder and the conversation's working folder are 0700 under umask 022."""
    old = os.umask(0o022)
    try:
        text = attack(capsys, tmp_path, monkeypatch, "open('note.txt', 'w').write('hi')")
    finally:
        os.umask(old)
    top = tmp_path / "data" / "python"
    (workdir,) = top.iterdir()
    assert "note.txt" in text
    assert stat.S_IMODE((tmp_path / "data").stat().st_mode) == 0o700
    assert stat.S_IMODE(top.stat().st_mode) == 0o700
    assert stat.S_IMODE(workdir.stat().st_mode) == 0o700


ORDINARY_USER_CHECKS = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "cap = [line.split()[1] for line in open('/proc/self/status') if line.startswith('CapEff')][0]\n"
    "keyctl = libc.syscall(250, 0, -3, 0)\n"
    "keyctl_errno = ctypes.get_errno()\n"
    "unshare = libc.syscall(272, 0x10000000)\n"
    "print(f'uid={os.getuid()} cap={cap} keyctl={keyctl}/{keyctl_errno} unshare={unshare}/{ctypes.get_errno()}')\n"
)
"""What must hold for an ordinary user as for root: nobody inside, no capabilities, no keyring, no namespaces."""


def _as_ordinary_user(how: str) -> list[str]:
    """The command prefix that runs harmony-chat as an ordinary user, or skips when this machine has none."""
    if how == "user namespace":
        prefix = ["unshare", "--user", "--map-root-user"]
    else:
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            pytest.skip("needs root (to become nobody) and setpriv")
        prefix = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]
    again = "import os, sys, harmony_chat; os.execv(sys.executable, [sys.executable, '-c', ''])"  # it starts Pythons
    probe = subprocess.run([*prefix, sys.executable, "-c", again], capture_output=True, check=False)
    if probe.returncode != 0:
        why = (probe.stderr.decode().strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"cannot run this Python as an ordinary user here ({how}): {why}")
    return prefix


@x86_64
@pytest.mark.parametrize("how", ["user namespace", "nobody"])
def test_an_ordinary_user_gets_the_same_sandbox(tmp_path: Path, how: str) -> None:
    """The whole ``ask`` path as a user who is not root (root of a user namespace of its own, or ``nobody``)."""
    prefix = _as_ordinary_user(how)
    data = tmp_path / "data"
    data.mkdir()
    replay = tmp_path / "replay.txt"
    call = f"<|channel|>analysis to=python<|message|>{ORDINARY_USER_CHECKS}<|call|>"
    replay.write_text(call + "\n=====\n<|channel|>final<|message|>ok<|return|>\n", encoding="utf-8")
    os.chmod(tmp_path, 0o755)
    if how == "nobody":
        for path in (data, replay, tmp_path):
            os.chown(path, 65534, 65534)
    command = [*prefix, sys.executable, "-m", "harmony_chat", "ask", "--replay", str(replay)]
    command += ["--tool", "python", "--yes", "--json", "q"]
    env = dict(os.environ, HARMONY_CHAT_DATA_DIR=str(data), HOME=str(tmp_path))
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=env)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    (result,) = [event for event in events if event["type"] == "tool_result"]
    text = str(result["text"])
    assert f"uid=65534 cap=0000000000000000 keyctl=-1/{errno.EPERM} unshare=-1/{errno.EPERM}" in text, (
        text + done.stderr
    )
