"""The python tool's parts without a kernel: recipients, the declaration, plans, words, output, containers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from openai_harmony import Conversation, HarmonyEncoding, Message, Role, SystemContent, ToolNamespaceConfig

from harmony_chat.tools.python import ContainerRunner, PythonTool, SandboxLimits
from harmony_chat.tools.python.cell_output import CellOutput, strip_ansi
from harmony_chat.tools.python.kernel import connection_info, describe_exit, kernel_argv
from harmony_chat.tools.python.sandbox import (
    ETC_ALLOWED,
    SANDBOX_UID,
    SYSTEM_ROOTS,
    Platform,
    build_plan,
    describe,
    python_folders,
    readonly_and_links,
    runs_as_real_root,
    sandbox_environment,
    visible_paths,
)
from harmony_chat.tools.python.workspace import changed_files, open_folder, scan

ROOT = Path(__file__).resolve().parents[3]
SANDBOX = Platform(True, False, memory="cgroup")
MISSING = Platform(False, False, "bubblewrap (bwrap) is not installed: install bubblewrap (...)")


@pytest.mark.parametrize("recipient", ["python", "python.exec", "python.run", " python ", "python<|constrain|>"])
def test_handles_the_recipients_gpt_oss_uses(recipient: str) -> None:
    assert PythonTool.handles(recipient)


@pytest.mark.parametrize("recipient", ["functions.python", "browser.search", "pythonista", "", "assistant"])
def test_leaves_other_recipients_alone(recipient: str) -> None:
    assert not PythonTool.handles(recipient)


def test_namespace_is_harmonys_python_tool_made_true(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    tool = PythonTool(workdir=tmp_path, timeout_s=30, platform=SANDBOX)
    config = tool.namespace()
    reference = ToolNamespaceConfig.python()
    assert config.name == "python" and config.tools == []
    assert "time out after 30.0 seconds" in config.description
    assert "Internet access for this session is disabled." in config.description
    assert config.description.startswith(reference.description.split("\n", 1)[0])
    system = SystemContent.new().with_tools(config)
    tokens = encoding.render_conversation_for_completion(
        Conversation.from_messages([Message.from_role_and_content(Role.SYSTEM, system)]), Role.ASSISTANT
    )
    text = encoding.decode_utf8(tokens)
    assert "# Tools\n\n## python\n\nUse this tool to execute Python code" in text
    assert "'/mnt/data'" in text


def test_without_bubblewrap_the_tool_fails_closed_in_one_line(tmp_path: Path) -> None:
    tool = PythonTool(workdir=tmp_path / "work", platform=MISSING)
    assert tool.containment() == f"Unavailable: {MISSING.reason}."
    result = tool.run("print(1)", timeout_s=5, should_stop=lambda: False)
    assert result.status == "failed" and result.text == f"[the python tool is unavailable: {MISSING.reason}]"
    assert "\n" not in result.text and not (tmp_path / "work").exists()  # nothing ran, nothing was made
    assert "Internet access for this session is UNKNOWN" in tool.namespace().description


def test_containment_says_how_memory_is_bounded() -> None:
    whole = describe(SANDBOX, SandboxLimits(), "/mnt/data")
    assert whole.startswith("Contained by bubblewrap and a seccomp filter: no network;")
    assert "4096 MiB memory for all its processes, 128 processes" in whole and "per process" not in whole
    each = describe(Platform(True, False, memory="process"), SandboxLimits(), "/mnt/data")
    assert "2048 MiB memory per process and 32 processes (no cgroup here" in each
    assert "256 MiB quota" in each and "no keyring, shared memory" in each


def test_environment_is_an_allow_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/agent")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = sandbox_environment("/mnt/data/.home", "/tmp", None)
    assert env["HOME"] == "/mnt/data/.home" and env["LC_ALL"] == "C.UTF-8"
    assert "OPENAI_API_KEY" not in env and "SSH_AUTH_SOCK" not in env and "PYTHONPATH" not in env


def test_the_allow_list_shows_the_system_and_python_and_nothing_else() -> None:
    readonly, links = readonly_and_links(visible_paths())
    assert "/usr" in readonly and "/etc/ld.so.cache" in readonly
    assert sys.prefix in readonly or any(sys.prefix.startswith(path + "/") for path in readonly)
    allowed = {*SYSTEM_ROOTS, *(f"/etc/{name}" for name in ETC_ALLOWED), *python_folders()}
    assert set(readonly) | set(links) <= allowed and "/etc/passwd" not in readonly
    assert not {"/", "/etc", "/home", "/root", "/tmp", "/var", "/opt", str(Path.home())} & set(readonly)
    assert all(os.path.islink(path) for path in links) and not any(os.path.islink(path) for path in readonly)


@pytest.mark.parametrize("as_root", [True, False])
def test_plan_runs_bubblewrap_with_every_namespace_the_quota_and_the_filter(tmp_path: Path, as_root: bool) -> None:
    private = tmp_path / "private"
    limits = SandboxLimits(disk_bytes=5 * 1024**2, inodes=77)
    platform = Platform(True, as_root, memory="process", bwrap="/usr/bin/bwrap")
    plan = build_plan(platform, limits, private_dir=private, kernel_argv_for=kernel_argv, launcher=Path("l.py"))
    spec = plan.spec
    try:
        assert plan.view and plan.workdir_inside == "/mnt/data" and plan.ipc_inside == "/run/kernel"
        assert plan.argv == [sys.executable, "-I", "-S", "l.py", "enter", str(private / "launch.json")]
        bwrap = spec["bwrap"]
        for option in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session"):
            assert option in bwrap
        assert bwrap[bwrap.index("--cap-drop") + 1] == "ALL" and bwrap[0] == "/usr/bin/bwrap"
        assert spec["seccomp_fd"] == plan.pass_fds[0] and os.read(plan.pass_fds[0], 8)  # a compiled filter
        assert spec["disk_bytes"] == 5 * 1024**2 and spec["inodes"] == 77 and spec["cgroup_procs"] is None
        assert spec["files"]["/etc/passwd"].startswith("root:x:0:0:")
        assert spec["init"]["argv"][-len(kernel_argv("x")) + 4] == "/run/kernel/connection.json"
        assert spec["init"]["limits"]["processes"] == 32 and spec["init"]["limits"]["memory_bytes"] == 2 * 1024**3
        assert plan.env == spec["init"]["env"] and "OPENAI_API_KEY" not in plan.env and plan.env["TMPDIR"] == "/tmp"
        if as_root:  # the host's root hands the sandbox to nobody, outside and inside
            assert spec["become"] == [SANDBOX_UID, SANDBOX_UID] and spec["unshare"][1] == "--mount"
            assert plan.owner == (SANDBOX_UID, SANDBOX_UID) and plan.socket_uid == SANDBOX_UID
        else:  # an ordinary user mounts the quota in a user namespace of its own
            assert spec["become"] is None and spec["unshare"][1:3] == ["--user", "--map-root-user"]
            assert plan.owner is None and plan.socket_uid == os.getuid()
    finally:
        for fd in plan.pass_fds:
            os.close(fd)


@pytest.mark.skipif(shutil.which("unshare") is None, reason="the unshare command is not installed")
def test_root_that_maps_only_itself_is_no_real_root() -> None:
    # as root in a user namespace mapping uid 0 alone (unshare -r, rootless containers) the kernel
    # cannot be handed to nobody: it must be launched as a plain user's
    probe = "from harmony_chat.tools.python.sandbox import runs_as_real_root as r; print(r())"
    command = ["unshare", "--map-root-user", sys.executable, "-c", probe]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
    if done.returncode != 0 and "unshare" in done.stderr:
        pytest.skip(f"user namespaces are not allowed here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]
    assert runs_as_real_root() == (os.geteuid() == 0)


def test_launcher_runs_on_the_standard_library_alone() -> None:
    code = (
        "import runpy, sys\nrunpy.run_path(sys.argv[1], run_name='not_main')\n"
        "assert not [m for m in sys.modules if m.startswith('harmony_chat')]"
    )
    launcher = ROOT / "harmony_chat" / "tools" / "python" / "launcher.py"
    subprocess.run([sys.executable, "-I", "-S", "-c", code, str(launcher)], check=True, cwd="/")


def test_importing_the_tool_loads_neither_zeromq_nor_textual() -> None:
    code = (
        "import sys, harmony_chat.tools.python\n"
        "heavy = [m for m in ('zmq', 'jupyter_client', 'textual') if m in sys.modules]\nassert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_connection_uses_unix_sockets_with_short_paths(tmp_path: Path) -> None:
    info = connection_info("/tmp/hc-py-abcdefgh/sock")
    assert info["transport"] == "ipc" and info["ip"] == "/tmp/hc-py-abcdefgh/sock/k" and len(f"{info['ip']}-5") < 100
    assert info["key"] != connection_info("/tmp/x")["key"]


def test_exit_descriptions() -> None:
    assert describe_exit(3, via_init=True) == "it exited with status 3"
    assert "CPU time" in describe_exit(128 + 24, via_init=True)
    assert "SIGKILL" in describe_exit(-9, via_init=False)
    assert describe_exit(137, via_init=False) == "it exited with status 137"


def test_cell_output_orders_output_and_strips_colours(tmp_path: Path) -> None:
    output = CellOutput(None, "/mnt/data")
    output.add({"msg_type": "stream", "content": {"name": "stdout", "text": "one\n"}})
    output.add({"msg_type": "execute_result", "content": {"data": {"text/plain": "2"}}})
    output.add({"msg_type": "error", "content": {"ename": "KeyboardInterrupt", "traceback": []}}, skip_interrupt=True)
    output.add({"msg_type": "error", "content": {"ename": "E", "traceback": ["\x1b[31mE\x1b[0m: bad"]}})
    text, truncated = output.text(notes=["[note]"], files=["/mnt/data/a.txt"])
    assert text == "one\n2\nE: bad\n[files written: /mnt/data/a.txt]\n[note]"
    assert not truncated and output.error_name == "E"
    assert strip_ansi("\x1b[1;32mok\x1b[0m") == "ok"
    assert CellOutput(None, "/w").text(notes=[], files=[]) == ("[no output]", False)


def test_cell_output_counts_what_it_no_longer_stores(tmp_path: Path) -> None:
    output = CellOutput(None, "/w", limit_bytes=100)
    for _ in range(1000):
        output.add({"msg_type": "stream", "content": {"text": "é" * 50}})
    text, truncated = output.text(notes=[], files=[])
    assert truncated and output.stored_bytes <= 101
    assert "of 100,000 bytes left out" in text and text.startswith("é" * 50)


def test_changed_files_lists_new_and_modified_but_not_the_sandbox_home(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("a")
    (tmp_path / ".home").mkdir()
    folder = open_folder(tmp_path)
    before = scan(folder).files
    (tmp_path / "new.txt").write_text("b")
    (tmp_path / ".home" / "cache").write_text("c")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "deep.csv").write_text("d")
    after = scan(folder).files
    os.close(folder)
    assert changed_files(before, after, "/mnt/data") == ["/mnt/data/new.txt", "/mnt/data/sub/deep.csv"]


def test_container_command_line(tmp_path: Path) -> None:
    runner = ContainerRunner(engine="podman", image="example/py:1")
    limits = SandboxLimits(memory_bytes=2 * 1024**3, processes=50)
    argv = runner.command(limits, workdir=tmp_path, ipc_dir=Path("/tmp/ipc"), kernel_argv=["py", "-m", "k"], name="n")
    assert argv[:3] == ["podman", "run", "--rm"]
    assert argv[argv.index("--network") + 1] == "none" and "--read-only" in argv and "--userns=keep-id" in argv
    assert argv[argv.index("--memory") + 1] == str(2 * 1024**3) and argv[argv.index("--pids-limit") + 1] == "50"
    assert f"{tmp_path.resolve()}:/mnt/data" in argv and "/tmp/ipc:/tmp/ipc" in argv
    assert argv[-4:] == ["example/py:1", "python", "-m", "k"]
    plan = runner.plan(limits, workdir=tmp_path, private_dir=Path("/tmp/ipc"), kernel_argv_for=kernel_argv)
    assert not plan.handshake and not plan.view and plan.ipc_inside == "/tmp/ipc/sock"
    kernel_args = plan.argv[plan.argv.index("example/py:1") + 1 :]
    assert kernel_args[:5] == ["python", "-m", "ipykernel_launcher", "-f", "/tmp/ipc/sock/connection.json"]
    assert plan.argv[plan.argv.index("--tmpfs") + 1] == f"/tmp:rw,size={limits.disk_bytes}"
    assert plan.cleanup_argv is not None and plan.cleanup_argv[:3] == ["podman", "rm", "--force"]
    assert plan.cleanup_argv[3] == plan.argv[plan.argv.index("--name") + 1]
    tool = PythonTool(workdir=tmp_path, container=runner)
    assert "podman container" in tool.containment() and tool.workdir_shown == "/mnt/data"
    assert "disabled" in tool.namespace().description


def _display(data: dict[str, object]) -> dict[str, object]:
    return {"msg_type": "display_data", "content": {"data": data}}


def test_cell_output_saves_svg_as_text_and_base64_images_decoded(tmp_path: Path) -> None:
    folder = open_folder(tmp_path)
    try:
        output = CellOutput(folder, "/mnt/data")
        output.add(_display({"image/svg+xml": "<svg>é</svg>", "text/plain": "<Figure>"}))
        output.add(_display({"image/png": "iVBORw0K\nGgo=\n"}))  # IPython's base64 has newlines
        output.add(_display({"image/png": "not base64!", "text/plain": "<Image>"}))
        text, _ = output.text(notes=[], files=["/mnt/data/output-1.svg", "/mnt/data/a.csv", "/mnt/data/b.csv"])
    finally:
        os.close(folder)
    assert (tmp_path / "output-1.svg").read_bytes() == "<svg>é</svg>".encode()
    assert (tmp_path / "output-2.png").read_bytes() == b"\x89PNG\r\n\x1a\n"
    assert sorted(os.listdir(tmp_path)) == ["output-1.svg", "output-2.png"]  # the broken one is shown as text
    assert text == (
        "<Image>\n[images saved: /mnt/data/output-1.svg, /mnt/data/output-2.png]\n"
        "[files written: /mnt/data/a.csv, /mnt/data/b.csv]"
    )


def test_cell_output_takes_malformed_messages_without_inventing_text() -> None:
    output = CellOutput(None, "/w")
    output.add({"header": {"msg_type": "stream"}, "content": {"text": "from the header\n"}})
    output.add({"content": {"text": "no type at all"}})
    output.add({"msg_type": "display_data", "content": {}})  # no data
    output.add({"msg_type": "stream"})  # no content
    output.add({"msg_type": "stream", "content": {}})  # no text
    output.add(_display({"text/html": "<b>html only</b>"}))
    output.add(_display({"text/plain": ["not", "a", "string"]}))
    output.add(_display({"image/png": "aGk="}))  # no folder: not saved, and no text to show
    output.add({"msg_type": "execute_result", "content": {"data": {"text/plain": "ends with newline\n"}}})
    assert output.text(notes=[], files=[]) == ("from the header\nends with newline\n", False)
    assert output.images == [] and output.error_name is None


def test_cell_output_errors_without_a_traceback_and_interrupts_it_did_not_cause() -> None:
    output = CellOutput(None, "/w")
    output.add({"msg_type": "error", "content": {"ename": "KeyboardInterrupt", "evalue": ""}})
    output.add({"msg_type": "error", "content": {"evalue": "no name"}})
    output.add({"msg_type": "error", "content": {"ename": "NoValue"}})
    output.add({"msg_type": "error", "content": {"ename": "ValueError", "evalue": "bad", "traceback": ["a", "b"]}})
    text, _ = output.text(notes=[], files=[])
    assert text == "KeyboardInterrupt: \nError: no name\nNoValue: \na\nb\n" and output.error_name == "ValueError"


def test_cell_output_keeps_output_whitespace_and_puts_notes_last() -> None:
    output = CellOutput(None, "/w")
    output.add({"msg_type": "stream", "content": {"text": "a  \n\n"}})
    assert output.text(notes=["[note]"], files=[]) == ("a  \n[note]", False)
    quiet = CellOutput(None, "/w")
    quiet.add({"msg_type": "stream", "content": {"text": "\n"}})
    assert quiet.text(notes=["[note]"], files=[]) == ("[note]", False)
    boxed = CellOutput(None, "/w")
    boxed.add({"msg_type": "stream", "content": {"text": "SIZE: XX\n"}})  # only line ends are trimmed before notes
    assert boxed.text(notes=["[note]"], files=["/w/a.csv"]) == ("SIZE: XX\n[files written: /w/a.csv]\n[note]", False)


def test_cell_output_counts_every_byte_past_the_bound() -> None:
    output = CellOutput(None, "/w", limit_bytes=10)
    output.add({"msg_type": "stream", "content": {"text": "0123456789abcdefghij"}})
    output.add({"msg_type": "stream", "content": {"text": "ABCDE"}})
    text, truncated = output.text(notes=[], files=[])
    assert output.stored_bytes == 11 and output.dropped_bytes == 14
    assert truncated and text == "0123456789\n[output cut: 15 of 25 bytes left out; only the first 10 bytes are shown]"
    exact = CellOutput(None, "/w", limit_bytes=10)
    exact.add({"msg_type": "stream", "content": {"text": "0123456789a"}})  # one byte over, nothing dropped
    assert exact.text(notes=[], files=[])[1] and exact.dropped_bytes == 0


def test_cell_output_cuts_between_characters_and_survives_lone_surrogates() -> None:
    output = CellOutput(None, "/w", limit_bytes=4)
    output.add({"msg_type": "stream", "content": {"text": "aéé\ud800"}})  # 1 + 2 + 2 + a lone surrogate
    output.add({"msg_type": "stream", "content": {"text": "more"}})
    text, truncated = output.text(notes=[], files=[])
    assert truncated and text.startswith("aé\n[output cut: ")
    assert "of 10 bytes left out" in text  # the surrogate counted as the "?" it became
