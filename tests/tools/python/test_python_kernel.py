"""The python tool against a real kernel: state, timeouts, stopping, death and restart, output, files."""

from __future__ import annotations

import base64
import dataclasses
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES
from harmony_chat.tools.python import KernelStartError, PythonTool, probe_platform
from harmony_chat.tools.python.sandbox import Platform
from tests.tools.python.helpers import needs_sandbox, run

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="the python tool's kernel needs POSIX"),
    needs_sandbox,
]

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture(scope="module")
def tool() -> Iterator[PythonTool]:
    """One kernel for the module (starting one takes a second or two)."""
    python = PythonTool("kernel-tests")
    yield python
    python.close()


def test_state_persists_between_calls(tool: PythonTool) -> None:
    first = run(tool, "answer = 6 * 7\nprint('set')")
    second = run(tool, "print(answer + 1)\nanswer")
    assert (first.status, first.text) == ("done", "set\n")
    assert second.status == "done"
    assert second.text == "43\n42\n"  # printed output, then the last expression's value


def test_error_comes_back_as_a_traceback(tool: PythonTool) -> None:
    result = run(tool, "1 / 0")
    assert result.status == "failed"
    assert "ZeroDivisionError" in result.text
    assert "\x1b[" not in result.text  # no terminal colours for the model


def test_timeout_interrupts_and_the_next_call_works(tool: PythonTool) -> None:
    started = time.monotonic()
    result = run(tool, "kept = 'before the sleep'\nimport time\ntime.sleep(60)\nkept = 'after'", timeout_s=1.0)
    assert time.monotonic() - started < 30  # interrupted, not run to the end
    assert result.status == "timeout"
    assert "timed out after 1 s" in result.text and "KeyboardInterrupt" not in result.text
    after = run(tool, "print(kept)")
    assert (after.status, after.text) == ("done", "before the sleep\n")


def test_should_stop_interrupts_a_running_call(tool: PythonTool) -> None:
    stop = threading.Event()
    timer = threading.Timer(0.5, stop.set)
    timer.start()
    started = time.monotonic()
    try:
        result = tool.run("import time\ntime.sleep(60)", timeout_s=120, should_stop=stop.is_set)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30
    assert result.status == "cancelled"
    assert "stopped by the user" in result.text
    assert run(tool, "print('next')").text == "next\n"


def test_output_is_capped_with_the_marker(tool: PythonTool) -> None:
    result = run(tool, "print('x' * 200_000)")
    assert result.truncated
    assert "[output cut: " in result.text and "200,001 bytes" in result.text
    assert len(result.text.encode("utf-8")) < OUTPUT_LIMIT_BYTES + 300


def test_endless_output_stays_bounded(tool: PythonTool) -> None:
    result = run(tool, "while True:\n    print('y' * 1000)", timeout_s=2.0)
    assert result.status == "timeout"
    assert result.truncated and "[output cut: " in result.text
    assert len(result.text.encode("utf-8")) < OUTPUT_LIMIT_BYTES + 500


def test_files_written_are_listed_by_path(tool: PythonTool) -> None:
    result = run(tool, "with open('table.csv', 'w') as f:\n    f.write('a,b\\n1,2\\n')")
    shown = tool.workdir_shown
    assert f"[files written: {shown}/table.csv]" in result.text
    assert (tool.workdir / "table.csv").read_text() == "a,b\n1,2\n"
    again = run(tool, "print(open('table.csv').read())")
    assert "files written" not in again.text  # only new or changed files are listed


def test_images_are_saved_and_named(tool: PythonTool) -> None:
    code = f"from IPython.display import Image, display\ndisplay(Image(data={PNG!r}))"
    result = run(tool, code)
    assert result.status == "done"
    assert f"[images saved: {tool.workdir_shown}/output-1.png]" in result.text
    assert (tool.workdir / "output-1.png").read_bytes() == PNG


def test_kernel_death_is_reported_and_it_comes_back() -> None:
    tool = PythonTool("kernel-death")
    try:
        assert run(tool, "lost = 1").status == "done"
        died = run(tool, "import os\nos._exit(3)")
        assert died.status == "failed"
        assert "kernel died" in died.text and "status 3" in died.text
        fresh = run(tool, "print('lost' in globals())")
        assert (fresh.status, fresh.text) == ("done", "False\n")
        # A kernel that dies between calls is noticed and replaced on the next call.
        run(tool, "import os, threading\nthreading.Timer(0.2, lambda: os._exit(4)).start()")
        time.sleep(1.5)
        later = run(tool, "print('back')")
        assert later.status == "done"
        assert later.text.startswith("back\n") and "had stopped (it exited with status 4)" in later.text
    finally:
        tool.close()


def test_code_that_swallows_the_interrupt_gets_a_fresh_kernel() -> None:
    tool = PythonTool("kernel-stuck")
    try:
        run(tool, "kept = 1")
        code = (
            "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n    except KeyboardInterrupt:\n        pass"
        )
        result = run(tool, code, timeout_s=1.0)
        assert result.status == "timeout"
        assert "did not stop when interrupted: the kernel was restarted" in result.text
        after = run(tool, "print('kept' in globals())")
        assert (after.status, after.text) == ("done", "False\n")
    finally:
        tool.close()


def test_closing_during_a_call_ends_it() -> None:
    tool = PythonTool("kernel-closed")
    results = []
    running = threading.Event()

    def polled() -> bool:
        running.set()  # polled only while the code runs
        return False

    def call() -> None:
        results.append(run(tool, "import time\ntime.sleep(60)", should_stop=polled))

    worker = threading.Thread(target=call)
    try:
        worker.start()
        assert running.wait(60)
    finally:
        tool.close()
    worker.join(30)
    assert [(r.status, r.text) for r in results] == [("cancelled", "[the python tool was closed while the code ran]")]


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="finds processes through /proc")
def test_restart_clears_variables_and_close_leaves_no_process(tmp_path: Path) -> None:
    tool = PythonTool(workdir=tmp_path / "work")
    marker = "1234.5678"
    try:
        run(tool, "gone = 1")
        tool.restart()
        assert run(tool, "print('gone' in globals())").text == "False\n"
        started = run(tool, f"import subprocess\nsubprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n1")
        assert started.status == "done"
        assert _processes_with(marker), "the test's own child process should be running before close()"
    finally:
        tool.close()
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_with(marker)
    assert tool.run("print(1)", timeout_s=5, should_stop=lambda: False).status == "failed"


def _processes_with(argument: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argument.encode() in cmdline and b"sleep" in cmdline[0]:
            found.append(int(entry))
    return found


@pytest.mark.skipif(not probe_platform().available, reason=f"no sandbox here: {probe_platform().reason}")
def test_the_ordinary_users_path_runs_contains_env_and_leaves_nothing(tmp_path: Path) -> None:
    """The quota mounted in a user namespace of its own (how an ordinary user runs it) works and cleans up."""
    platform = dataclasses.replace(probe_platform(), as_root=False)
    marker = "2345.6789"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-ordinary-user-secret")
        tool = PythonTool(workdir=tmp_path / "work", platform=platform)
        try:
            code = (
                "import os, subprocess\n"
                f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
                "print(os.getcwd())\nprint(os.environ['HOME'])\nprint(sorted(os.environ))"
            )
            result = run(tool, code)
        finally:
            tool.close()
    lines = result.text.splitlines()
    assert lines[0] == "/mnt/data" == tool.workdir_shown
    assert lines[1] == "/mnt/data/.home"
    assert "OPENAI_API_KEY" not in lines[2]
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _processes_with(marker)  # the abandoned process went with the kernel


def test_a_kernel_that_cannot_start_gives_one_line(tmp_path: Path) -> None:
    broken = Platform(True, probe_platform().as_root, bwrap=str(tmp_path / "no-such-bwrap"))
    tool = PythonTool(workdir=tmp_path / "work", platform=broken)
    try:
        result = run(tool, "print(1)")
        with pytest.raises(KernelStartError):
            tool.start()
    finally:
        tool.close()
    assert result.status == "failed"
    assert result.text.startswith("[the Python kernel could not start: ") and "no-such-bwrap" in result.text
    assert "\n" not in result.text
