"""Regression tests for the sandbox's escapes through the host (links, disk, leftover processes, the view).

Each one runs hostile code in a real kernel and checks the host: no file created outside the
working folder, no disk used past the quota, no process left when the app dies, nothing outside
the allow-list visible.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmony_chat.tools.python import PythonTool, SandboxLimits
from tests.tools.python.helpers import needs_sandbox, run

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the python tool's kernel needs POSIX"),
    needs_sandbox,
]

ROOT = Path(__file__).resolve().parents[3]
MIB = 1024**2


@pytest.fixture
def tool(tmp_path: Path) -> Iterator[PythonTool]:
    python = PythonTool(workdir=tmp_path / "work", limits=SandboxLimits(disk_bytes=4 * MIB))
    yield python
    python.close()


def test_links_named_like_the_next_image_never_make_the_host_write_outside(tool: PythonTool, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    svg_target, png_target = outside / "authorized_keys", outside / "cron-job"
    code = (
        "import os\nfrom IPython.display import display\n"
        f"os.symlink({str(svg_target)!r}, 'output-1.svg')\n"
        f"os.symlink({str(png_target)!r}, 'output-2.png')\n"
        "display({'image/svg+xml': '<svg>ssh-ed25519 AAAA attacker</svg>'}, raw=True)\n"
        "display({'image/png': 'KiAqICogKiAqIHJvb3QgdG91Y2ggL3B3bmVkCg=='}, raw=True)"
    )
    result = run(tool, code)
    assert result.status == "done", result.text
    assert sorted(os.listdir(outside)) == []  # the host wrote nothing through the links
    assert "[images saved: " in result.text
    saved = result.text.split("[images saved: ", 1)[1].split("]", 1)[0].split(", ")
    assert len(saved) == 2 and not {path.rsplit("/", 1)[1] for path in saved} & {"output-1.svg", "output-2.png"}
    check = run(tool, "import os\n" + "\n".join(f"print(open({path!r}, 'rb').read()[:4])" for path in saved))
    assert check.text.split() == ["b'<svg'", "b'*", "b'*'"] or check.text.splitlines() == ["b'<svg'", "b'* * '"]


@needs_sandbox
def test_the_working_folder_has_a_quota_and_the_model_is_told(tool: PythonTool) -> None:
    code = (
        "written = []\n"
        "for name in ('a.bin', 'b.bin', 'c.bin'):\n"
        "    with open(name, 'wb') as f:\n"
        "        f.write(b'x' * (2 * 1024**2))\n"
        "    written.append(name)\n"
    )
    result = run(tool, code)
    assert result.status == "failed"
    assert "No space left on device" in result.text
    assert "[the working folder is full: " in result.text and "4 MiB" in result.text
    on_disk = sum(path.stat().st_size for path in tool.workdir.rglob("*") if path.is_file())
    assert on_disk <= 4 * MIB
    # /tmp shares the quota: it cannot hold another 4 MiB beside the working folder's files
    spill = run(tool, "with open('/tmp/spill.bin', 'wb') as f:\n    f.write(b'y' * (4 * 1024**2))")
    assert "No space left on device" in spill.text
    freed = run(tool, "import os\nos.remove('a.bin')\nos.remove('/tmp/spill.bin')\nopen('small.txt', 'w').write('ok')")
    assert freed.status == "done" and "working folder is full" not in freed.text
    assert not (tool.workdir / "a.bin").exists() and (tool.workdir / "small.txt").read_text() == "ok"


@needs_sandbox
def test_empty_files_stop_at_the_inode_limit(tmp_path: Path) -> None:
    """Empty files cost no bytes but memory: the quota's tmpfs holds a bounded number of them."""
    tool = PythonTool(workdir=tmp_path / "work", limits=SandboxLimits(inodes=300))
    try:
        code = (
            "import os\nmade = 0\ntry:\n    for n in range(5000):\n        open(f'/tmp/e{n}', 'w').close()\n"
            "        made += 1\nexcept OSError as error:\n    print('stopped', made, error.errno)"
        )
        result = run(tool, code)
    finally:
        tool.close()
    words = result.text.split()
    assert words[0] == "stopped" and int(words[1]) < 300 and words[2] == "28", result.text  # ENOSPC


@needs_sandbox
def test_tmp_is_private_and_writable(tool: PythonTool, tmp_path: Path) -> None:
    planted = Path("/tmp") / f"harmony-chat-host-{uuid.uuid4().hex}"
    planted.write_text("host tmp", encoding="utf-8")
    try:
        code = (
            "import os, tempfile\n"
            "print(os.environ['TMPDIR'])\n"
            "with tempfile.NamedTemporaryFile('w', delete=False) as f:\n    f.write('scratch')\n"
            "print(open(f.name).read(), os.path.dirname(f.name))\n"
            f"print(os.path.exists({str(planted)!r}))\n"
            "import multiprocessing as mp\nlock = mp.get_context('fork').Lock()\nprint('shm ok')"
        )
        result = run(tool, code)
    finally:
        planted.unlink()
    assert result.text.splitlines() == ["/tmp", "scratch /tmp", "False", "shm ok"], result.text


@needs_sandbox
def test_only_allowed_places_are_visible(tool: PythonTool) -> None:
    project = Path(os.environ.get("HARMONY_CHAT_TEST_PROJECT_DIR", ROOT)) / f".sandbox-test-{uuid.uuid4().hex}"
    project.mkdir()
    secret = project / "notes.txt"
    secret.write_text("project secret", encoding="utf-8")
    try:
        code = (
            "import os, json, sqlite3, ssl, pwd, time, subprocess, numpy\n"
            f"parent = {str(project.parent)!r}\nnames = os.listdir(parent) if os.path.isdir(parent) else []\n"
            f"print(os.path.exists({str(secret)!r}), {project.name!r} in names)\n"
            "print(os.path.exists('/etc/shadow'), os.path.exists('/etc/gshadow'), os.path.exists('/var/log'))\n"
            "print(ssl.create_default_context().cert_store_stats()['x509_ca'] > 0)\n"
            "print(pwd.getpwuid(os.getuid()).pw_dir, sqlite3.connect(':memory:').execute('select 1').fetchone())\n"
            "print(numpy.arange(4).sum(), time.localtime().tm_year > 2000)\n"
            "print(subprocess.run(['ls', '/mnt/data'], capture_output=True, text=True).returncode)\n"
            "open('/etc/new', 'w')"
        )
        result = run(tool, code)
    finally:
        secret.unlink()
        project.rmdir()
    lines = result.text.splitlines()
    assert lines[:6] == ["False False", "False False False", "True", "/mnt/data/.home (1,)", "6 True", "0"], result.text
    assert "Read-only file system" in result.text or "Permission denied" in result.text


def _descendants(pid: int) -> dict[int, str]:
    """Every process under ``pid`` (host view), each with its start time to tell it from a reused pid."""
    parents: dict[int, list[int]] = {}
    starts: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
        starts[int(entry)] = fields[19]
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found[child] = starts[child]
            todo.append(child)
    return found


def _living(processes: dict[int, str]) -> list[int]:
    alive = []
    for pid, start in processes.items():
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == start and fields[0] != "Z":
            alive.append(pid)
    return alive


HOLDER = """
import sys
from pathlib import Path
from harmony_chat.tools.python import PythonTool
tool = PythonTool(workdir=Path(sys.argv[1]))
tool.start()
print('started', flush=True)
tool.run('import subprocess\\nsubprocess.Popen(["sleep", "600"])\\nwhile True:\\n    pass', timeout_s=600,
         should_stop=lambda: False)
"""


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds processes through /proc")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_the_sandbox_dies_with_the_app_whatever_the_signal(tmp_path: Path, how: signal.Signals) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path / "work")],
        stdout=subprocess.PIPE,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    processes: dict[int, str] = {}
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # the busy loop and its child have started
            processes = _descendants(holder.pid)
            if any(b"sleep" in Path(f"/proc/{pid}/cmdline").read_bytes() for pid in _living(processes)):
                break
            time.sleep(0.1)
        assert len(_living(processes)) >= 3  # unshare or launcher, the kernel, its sleep
        holder.send_signal(how)
        holder.wait(30)
        deadline = time.monotonic() + 15
        while _living(processes) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _living(processes) == []
    finally:
        holder.kill()
        holder.wait()
        for pid in _living(processes):
            os.kill(pid, signal.SIGKILL)


@needs_sandbox
def test_files_written_just_before_the_kernel_dies_reach_the_host(tool: PythonTool) -> None:
    result = run(tool, "open('last-words.txt', 'w').write('saved')\nimport os\nos._exit(5)")
    assert "kernel died" in result.text and "[files written: /mnt/data/last-words.txt]" in result.text
    assert (tool.workdir / "last-words.txt").read_text() == "saved"
    again = run(tool, "print(open('last-words.txt').read())")  # a fresh kernel gets the host's copy
    assert again.text.startswith("saved\n")


@needs_sandbox
def test_files_kept_on_the_host_past_a_smaller_quota_are_named_not_lost(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for name in ("one.bin", "two.bin", "three.bin"):
        (work / name).write_bytes(b"k" * (1536 * 1024))
    tool = PythonTool(workdir=work, limits=SandboxLimits(disk_bytes=4 * MIB))
    try:
        result = run(tool, "import os\nprint(sorted(n for n in os.listdir() if n.endswith('.bin')))")
    finally:
        tool.close()
    assert "did not fit in its quota; they are kept on the host only]" in result.text
    assert sorted(path.name for path in work.glob("*.bin")) == ["one.bin", "three.bin", "two.bin"]


@needs_sandbox
def test_a_python_installed_under_tmp_is_seen_through_the_sandboxs_own_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A virtual environment made under /tmp (CI's fresh venvs) stays visible, read-only; /tmp stays private."""
    from harmony_chat.tools.python import sandbox

    installed = Path("/tmp") / f"harmony-chat-venv-{uuid.uuid4().hex}"
    (installed / "lib").mkdir(parents=True)
    (installed / "lib" / "marker.txt").write_text("installed", encoding="utf-8")
    beside = installed.with_name(installed.name + "-beside")
    beside.write_text("host tmp", encoding="utf-8")
    folders = sandbox.python_folders()
    monkeypatch.setattr(sandbox, "python_folders", lambda: [*folders, str(installed)])
    python = PythonTool(workdir=tmp_path / "work", limits=SandboxLimits(disk_bytes=4 * MIB))
    try:
        code = (
            "import os\n"
            f"print(open({str(installed / 'lib' / 'marker.txt')!r}).read())\n"
            f"print(os.path.exists({str(beside)!r}))\n"
            "open('/tmp/scratch', 'w').write('x'); print(open('/tmp/scratch').read())\n"
            f"try:\n    open({str(installed / 'new')!r}, 'w')\nexcept OSError as e:\n    print(type(e).__name__)\n"
        )
        result = run(python, code)
    finally:
        python.close()
        beside.unlink()
        (installed / "lib" / "marker.txt").unlink()
        (installed / "lib").rmdir()
        installed.rmdir()
    assert result.text.splitlines() == ["installed", "False", "x", "OSError"], result.text
