"""The python tool's sandbox holds: secrets, the user's files, processes, memory, disk and network.

Each test runs hostile code in a real kernel and checks both that it was contained (the secret
never appears in the output, the limit was hit) and that the tool still works afterwards.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmony_chat.locations import data_dir
from harmony_chat.tools.python import PythonTool, SandboxLimits, probe_platform
from tests.tools.python.helpers import needs_sandbox, run

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the python tool's kernel needs POSIX"),
    needs_sandbox,
]

SECRET = f"sk-harmony-test-{uuid.uuid4().hex}"
LIMITS = SandboxLimits(memory_bytes=1024**3, file_bytes=8 * 1024**2, processes=64)


@pytest.fixture(scope="module")
def tool() -> Iterator[PythonTool]:
    """One kernel, started while secrets sit in the environment as they would in a user's shell."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_API_KEY", "HF_TOKEN", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"):
            patch.setenv(name, SECRET)
        python = PythonTool("containment-tests", limits=LIMITS)
        python.start()
    yield python
    python.close()


def assert_still_works(tool: PythonTool) -> None:
    result = run(tool, "print(sum(range(10)))")
    assert (result.status, result.text) == ("done", "45\n")


def test_environment_has_no_secrets(tool: PythonTool) -> None:
    code = "import os\nfor key, value in sorted(os.environ.items()):\n    print(key, '=', value)"
    result = run(tool, code)
    assert result.status == "done"
    assert "HOME = " in result.text  # the environment really was printed
    assert SECRET not in result.text
    assert "OPENAI_API_KEY" not in result.text


@needs_sandbox
def test_other_processes_environments_are_out_of_reach(tool: PythonTool) -> None:
    victim_env = dict(os.environ, OPENAI_API_KEY=SECRET)
    victim = subprocess.Popen(["sleep", "30"], env=victim_env)
    try:
        code = (
            "import os\nfound = []\n"
            "for pid in [p for p in os.listdir('/proc') if p.isdigit()] + ['self', str(os.getppid())]:\n"
            "    try:\n        found.append(open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace'))\n"
            "    except OSError as error:\n        found.append(f'{pid}: {error.strerror}')\n"
            "print('\\n'.join(found))"
        )
        result = run(tool, code)
    finally:
        victim.kill()
        victim.wait()
    assert result.status == "done"
    assert SECRET not in result.text


@needs_sandbox
def test_files_in_home_and_data_dir_are_hidden(tool: PythonTool) -> None:
    planted = Path.home() / f".harmony-chat-test-{uuid.uuid4().hex}"
    in_data = data_dir() / f"planted-{uuid.uuid4().hex}.txt"
    planted.write_text(SECRET, encoding="utf-8")
    in_data.parent.mkdir(parents=True, exist_ok=True)
    in_data.write_text(SECRET, encoding="utf-8")
    try:
        code = (
            "import os\n"
            f"for path in [{str(planted)!r}, os.path.expanduser('~/{planted.name}'), {str(in_data)!r}]:\n"
            "    try:\n        print(open(path).read())\n"
            "    except OSError as error:\n        print(type(error).__name__, path)\n"
            f"print(sorted(os.listdir({str(Path.home())!r})))"
        )
        result = run(tool, code)
    finally:
        planted.unlink()
        in_data.unlink()
    assert result.status == "done"
    assert result.text.count("FileNotFoundError") == 3
    assert SECRET not in result.text and planted.name not in result.text.splitlines()[-1]
    assert_still_works(tool)


@needs_sandbox
def test_the_working_folder_is_mnt_data_and_hides_stay_in_place(tool: PythonTool) -> None:
    code = (
        "import ctypes, os\n"
        "print(os.getcwd())\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"print('umount', libc.umount2({str(Path.home()).encode()!r}, 2), ctypes.get_errno())"
    )
    result = run(tool, code)
    assert result.text.splitlines()[0] == "/mnt/data"
    assert result.text.splitlines()[1] == "umount -1 1"  # EPERM: the code cannot lift the hiding


@needs_sandbox
def test_loopback_server_is_unreachable(tool: PythonTool) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        try:
            accepted.append(server.accept())
        except OSError:
            pass

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        code = (
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3).sendall(b'leak')\n"
            "    print('connected')\nexcept OSError as error:\n    print('blocked', error.errno)"
        )
        result = run(tool, code)
    finally:
        thread.join(10)
        server.close()
    assert result.text.startswith("blocked")
    assert not accepted
    assert_still_works(tool)


def test_fork_bomb_hits_the_process_limit(tool: PythonTool) -> None:
    code = (
        "import os, time\nn = 0\ntry:\n    for _ in range(1000):\n        pid = os.fork()\n"
        "        if pid == 0:\n            time.sleep(2)\n            os._exit(0)\n        n += 1\n"
        "except OSError as error:\n    print('fork refused after', n, error.errno)\n"
        "else:\n    print('forked', n)"
    )
    result = run(tool, code)
    assert result.text.startswith("fork refused after"), result.text
    assert int(result.text.split()[3]) < LIMITS.processes
    assert_still_works(tool)


def test_allocation_past_the_memory_limit_fails(tool: PythonTool) -> None:
    result = run(tool, "block = bytearray(3 * 1024**3)")
    assert result.status == "failed"
    assert "MemoryError" in result.text
    assert_still_works(tool)


def test_huge_file_stops_at_the_size_limit(tool: PythonTool) -> None:
    code = "with open('huge.bin', 'wb') as f:\n    for _ in range(64):\n        f.write(b'x' * 1024**2)"
    result = run(tool, code)
    assert result.status == "failed"
    assert "File too large" in result.text
    assert (tool.workdir / "huge.bin").stat().st_size <= LIMITS.file_bytes
    assert_still_works(tool)


@needs_sandbox
def test_user_namespace_root_keeps_no_capabilities(tmp_path: Path) -> None:
    """The ordinary user's path (the quota mounted in a user namespace) keeps no capabilities either."""
    tool = PythonTool(workdir=tmp_path / "work", platform=dataclasses.replace(probe_platform(), as_root=False))
    try:
        code = (
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "print([line for line in open('/proc/self/status') if line.startswith('CapEff')][0].split()[1])\n"
            "print(libc.umount2(b'/tmp', 2), ctypes.get_errno())\n"
            "open('/tmp/t', 'w').write('t')\nopen('/mnt/data/d', 'w').write('d')\n"
            f"print(os.path.exists({str(Path.home())!r} + '/.bashrc') or os.path.exists('/etc/shadow'))"
        )
        result = run(tool, code)
    finally:
        tool.close()
    assert result.text.split()[:4] == ["0000000000000000", "-1", "1", "False"], result.text
    assert (tmp_path / "work" / "d").read_text() == "d"
