"""``harmony-chat ask`` end to end: streams, modes, files, and one-line errors."""

from __future__ import annotations

import io
import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.cli import main

ROOT = Path(__file__).resolve().parents[2]
TURN = (
    "<|channel|>analysis<|message|>Private reasoning about 2+2.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>Let me work it out.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>2 + 2 = **4**.<|return|>"
)


@pytest.fixture
def replay(tmp_path: Path) -> Path:
    path = tmp_path / "turn.txt"
    path.write_text(TURN + "\n", encoding="utf-8")
    return path


def ask(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["ask", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_stdout_has_only_the_final_answer(capsys: pytest.CaptureFixture[str], replay: Path) -> None:
    code, out, err = ask(capsys, "--replay", str(replay), "What is 2 + 2?")
    assert code == 0
    assert out == "2 + 2 = **4**.\n"
    assert "[preamble] Let me work it out." in err
    assert "Private reasoning" not in out + err


def test_show_reasoning_goes_to_stderr_labelled(capsys: pytest.CaptureFixture[str], replay: Path) -> None:
    code, out, err = ask(capsys, "--replay", str(replay), "q", "--show-reasoning")
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert "[reasoning] Private reasoning about 2+2." in err


def test_raw_prints_every_token_with_specials(capsys: pytest.CaptureFixture[str], replay: Path) -> None:
    code, out, _ = ask(capsys, "--replay", str(replay), "q", "--raw")
    assert code == 0 and out == TURN + "\n"


def test_json_lines_end_with_stats(capsys: pytest.CaptureFixture[str], replay: Path) -> None:
    code, out, _ = ask(capsys, "--replay", str(replay), "q", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    stats = lines[-1]
    assert stats["type"] == "stats"
    for key in (
        "prompt_tokens",
        "prompt_tokens_evaluated",
        "generated_tokens",
        "ttft_s",
        "decode_tokens_per_s",
        "stop_reason",
    ):
        assert key in stats
    assert stats["stop_reason"] == "return" and stats["generated_tokens"] > 20
    finals = "".join(line["text"] for line in lines if line["type"] == "delta" and line["channel"] == "final")
    assert finals == "2 + 2 = **4**."
    assert "Private reasoning" not in out


def test_show_prompt_spells_out_special_tokens(capsys: pytest.CaptureFixture[str], replay: Path) -> None:
    _, _, err = ask(capsys, "--replay", str(replay), "Hi there", "--show-prompt", "--effort", "high")
    assert "[prompt] <|start|>system<|message|>" in err
    assert "Reasoning: high" in err and "<|start|>user<|message|>Hi there<|end|><|start|>assistant" in err


def test_prompt_from_stdin(capsys: pytest.CaptureFixture[str], replay: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("piped question"))
    _, _, err = ask(capsys, "--replay", str(replay), "-", "--show-prompt")
    assert "<|start|>user<|message|>piped question<|end|>" in err


def test_record_then_replay_gives_the_same_stream(
    capsys: pytest.CaptureFixture[str], replay: Path, tmp_path: Path
) -> None:
    for suffix in (".json", ".txt"):
        recording = tmp_path / f"rec{suffix}"
        _, first, _ = ask(capsys, "--replay", str(replay), "q", "--record", str(recording), "--raw")
        _, second, _ = ask(capsys, "--replay", str(recording), "q", "--raw")
        assert first == second == TURN + "\n"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_saved_conversations_and_recordings_are_private(
    capsys: pytest.CaptureFixture[str], replay: Path, tmp_path: Path
) -> None:
    """They hold the chat: with the usual umask they came out 0644, readable by everyone."""
    old = os.umask(0o022)
    try:
        saved, recording, existing = tmp_path / "conv.json", tmp_path / "rec.txt", tmp_path / "old.json"
        existing.write_text("{}")
        existing.chmod(0o644)
        code, _, _ = ask(
            capsys, "--replay", str(replay), "q", "--save-conversation", str(saved), "--record", str(recording)
        )
        assert code == 0
        code, _, _ = ask(capsys, "--replay", str(replay), "q", "--save-conversation", str(existing))
        assert code == 0
    finally:
        os.umask(old)
    assert [stat.S_IMODE(path.stat().st_mode) for path in (saved, recording, existing)] == [0o600] * 3


def test_conversation_saved_and_continued(
    capsys: pytest.CaptureFixture[str], replay: Path, tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    saved = tmp_path / "conv.json"
    ask(capsys, "--replay", str(replay), "first question", "--save-conversation", str(saved), "--effort", "low")
    _, _, err = ask(capsys, "--replay", str(replay), "second question", "--conversation", str(saved), "--show-prompt")
    prompt = err.split("[prompt] ", 1)[1].split("\n[preamble]", 1)[0]
    assert "Reasoning: low" in prompt
    assert "first question" in prompt and "2 + 2 = **4**.<|end|>" in prompt
    assert "Private reasoning" not in prompt
    assert prompt.rstrip().endswith("second question<|end|><|start|>assistant")


def test_continue_after_tool_result_without_prompt(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, encoding: HarmonyEncoding
) -> None:
    call = tmp_path / "call.txt"
    call.write_text('<|channel|>commentary to=functions.lookup <|constrain|>json<|message|>{"q": "x"}<|call|>')
    saved = tmp_path / "conv.json"
    code, _, err = ask(capsys, "--replay", str(call), "look it up", "--save-conversation", str(saved))
    assert code == 0 and "[tool call] functions.lookup" in err
    data = json.loads(saved.read_text())
    data["messages"].append(
        {
            "role": "tool",
            "name": "functions.lookup",
            "recipient": "assistant",
            "channel": "commentary",
            "content": [{"type": "text", "text": "found it"}],
        }
    )
    saved.write_text(json.dumps(data))
    answer = tmp_path / "answer.txt"
    answer.write_text("<|channel|>final<|message|>It was found.<|return|>")
    code, out, err = ask(capsys, "--replay", str(answer), "--conversation", str(saved), "--show-prompt")
    assert code == 0 and out == "It was found.\n"
    assert "<|start|>functions.lookup to=assistant<|channel|>commentary<|message|>found it<|end|>" in err


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["hi"], 1, "no model"),
        (["--model", "/nonexistent/model.gguf", "hi"], 1, "model file not found"),
        (["--effort", "extreme", "hi"], 2, "unknown reasoning effort 'extreme'"),
        (["--replay", "/nonexistent.txt", "hi"], 1, "cannot read replay file"),
        (["--model", "a.gguf", "--hf-repo", "r", "--hf-file", "f", "hi"], 1, "not both"),
        (["--hf-repo", "r", "hi"], 1, "go together"),
    ],
)
def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], args: list[str], code: int, message: str) -> None:
    result, out, err = ask(capsys, *args)
    assert result == code
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert "Traceback" not in err and out == ""


def test_not_a_gguf_and_other_architecture(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from gguf import GGUFWriter

    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    assert ask(capsys, "--model", str(text), "hi")[2] == f"error: {text} is not a GGUF file\n"
    other = tmp_path / "llama.gguf"
    writer = GGUFWriter(str(other), "llama")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    code, _, err = ask(capsys, "--model", str(other), "hi")
    assert code == 1 and "architecture 'llama', not gpt-oss" in err


def test_context_overflow(capsys: pytest.CaptureFixture[str], replay: Path) -> None:
    code, _, err = ask(capsys, "--replay", str(replay), "word " * 500, "--ctx", "256", "--max-tokens", "64")
    assert code == 1 and err.startswith("error: the prompt needs") and err.count("\n") == 1


def test_malformed_conversation_file(capsys: pytest.CaptureFixture[str], replay: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope")
    code, _, err = ask(capsys, "--replay", str(replay), "hi", "--conversation", str(bad))
    assert code == 1 and "is not a harmony conversation" in err and err.count("\n") == 1


def test_no_vocabulary_anywhere(
    tmp_path: Path, replay: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harmony_chat.harmony import vocab

    def offline(folder: Path) -> Path:
        raise RuntimeError("failed to download or load vocab file\n(offline)")

    monkeypatch.setattr(vocab, "_encoding", None)  # as in a fresh process
    lost = tmp_path / "pocket-gpt-oss.gguf"  # an install that lost its pocket GGUF
    monkeypatch.setattr("harmony_chat.demo.pocket.pocket_model_path", lambda: lost)
    monkeypatch.setattr(vocab, "_download", offline)
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(tmp_path / "empty"))
    monkeypatch.setenv("HARMONY_CHAT_CACHE_DIR", str(tmp_path))
    code, _, err = ask(capsys, "--replay", str(replay), "hi")
    assert code == 1
    assert err.count("\n") == 1 and "no o200k vocabulary" in err
    assert "TIKTOKEN_ENCODINGS_BASE" in err


def test_a_fresh_install_needs_no_vocabulary_beside_it(tmp_path: Path, replay: Path) -> None:
    """No TIKTOKEN_ENCODINGS_BASE, an empty cache, no network: the shipped pocket GGUF is enough."""
    env = {key: value for key, value in os.environ.items() if key != "TIKTOKEN_ENCODINGS_BASE"}
    env |= {
        "HARMONY_CHAT_CACHE_DIR": str(tmp_path / "cache"),
        "TIKTOKEN_RS_CACHE_DIR": str(tmp_path / "rs"),
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "https_proxy": "http://127.0.0.1:9",
    }
    result = subprocess.run(
        [sys.executable, "-m", "harmony_chat", "ask", "--replay", str(replay), "hi"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2 + 2 = **4**.\n"
    assert (tmp_path / "cache" / "vocab" / "o200k_base.tiktoken").is_file()


def test_console_entry_point(replay: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "harmony_chat", "ask", "--replay", str(replay), "hi"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 0 and result.stdout == "2 + 2 = **4**.\n"


@pytest.mark.llama
def test_ask_with_the_tiny_gguf(capsys: pytest.CaptureFixture[str], tiny_gguf: Path) -> None:
    code, out, _ = ask(
        capsys, "--model", str(tiny_gguf), "Hello", "--max-tokens", "8", "--ctx", "1024", "--json", "--seed", "1"
    )
    stats = json.loads(out.splitlines()[-1])
    assert code == 0
    assert stats["generated_tokens"] == 8 and stats["prompt_tokens"] == stats["prompt_tokens_evaluated"] > 30
    assert stats["stop_reason"] == "length" and stats["decode_tokens_per_s"] > 0


@pytest.mark.parametrize(
    ("piped", "sent"),
    [
        ("What is 2 + 2?\n", "What is 2 + 2?"),
        ("What is 2 + 2?\r\n", "What is 2 + 2?"),
        ("What is 2 + 2?", "What is 2 + 2?"),
        ("Two lines\n\n", "Two lines\n"),
    ],
)
def test_stdin_loses_exactly_one_trailing_newline(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    replay: Path,
    tmp_path: Path,
    piped: str,
    sent: str,
) -> None:
    """``echo "What is 2 + 2?" | harmony-chat ask -`` asks the same question as the argument would."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(piped))
    saved = tmp_path / "conversation.json"
    code, out, _ = ask(capsys, "--replay", str(replay), "-", "--save-conversation", str(saved))
    assert code == 0 and out == "2 + 2 = **4**.\n"
    messages = json.loads(saved.read_text())["messages"]
    user = [m for m in messages if m["role"] == "user"]
    assert [m["content"][0]["text"] for m in user] == [sent]


ASK_SLOWLY = """
import sys
from pathlib import Path
from harmony_chat.chat.options import ChatOptions
from harmony_chat.cli.ask import AskRequest, run_ask
options = ChatOptions(replay=Path(sys.argv[1]), replay_delay=0.01)
sys.exit(run_ask(AskRequest(prompt="q", options=options)))
"""
"""``ask`` on a replay that takes a few seconds, in a process of its own (the one the Ctrl-C goes to)."""


def test_one_ctrl_c_says_interrupted_not_cut_off(tmp_path: Path) -> None:
    """A real SIGINT, sent only to the process under test (never to the test runner) once the answer streams."""
    long_turn = tmp_path / "long.txt"
    long_turn.write_text("<|channel|>final<|message|>" + "word " * 300 + "<|return|>", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-c", ASK_SLOWLY, str(long_turn)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert process.stdout is not None
    first = process.stdout.read(4)  # the answer has started
    process.send_signal(signal.SIGINT)
    rest, err = process.communicate(timeout=60)
    out = (first + rest).decode()
    assert process.returncode == 0, err.decode()
    assert "[stopped] generation was interrupted" in err.decode() and "cut off" not in err.decode()
    assert 0 < out.count("word") < 300


def test_a_small_context_answers_and_says_the_answer_room_is_small(
    capsys: pytest.CaptureFixture[str], replay: Path
) -> None:
    """``ask --ctx 256`` with the default --max-tokens 4096 used to refuse every message."""
    code, out, err = ask(capsys, "--replay", str(replay), "What is 2 + 2?", "--ctx", "256")
    assert code == 0 and out == "2 + 2 = **4**.\n"
    assert err.count("[context] only ") == 1 and "tokens are left for the answer" in err
    assert "error" not in err


def test_ask_follows_the_config_file_and_the_command_line_wins(
    capsys: pytest.CaptureFixture[str], replay: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = '# mine\n[model]\nmax_tokens = 7\n\n[chat]\neffort = "low"\ninstructions = "Answer in French."\n'
    config = tmp_path / "given.toml"
    config.write_text(settings, encoding="utf-8")
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "config.toml").write_text(settings, encoding="utf-8")
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_DIR", str(folder))

    def stats_and_prompt(*args: str) -> tuple[dict[str, object], str]:
        code, out, err = ask(capsys, "--replay", str(replay), "q", "--json", "--show-prompt", *args)
        assert code == 0, err
        return json.loads(out.splitlines()[-1]), err

    for given in ((), ("--config", str(config))):  # the default config file, and one named with --config
        stats, prompt = stats_and_prompt(*given)
        assert (stats["max_tokens"], stats["effort"]) == (7, "low")
        assert "Reasoning: low" in prompt and "Answer in French." in prompt
    stats, prompt = stats_and_prompt("--config", str(config), "--max-tokens", "50", "--effort", "high")
    assert (stats["max_tokens"], stats["effort"]) == (50, "high") and "Reasoning: high" in prompt


def test_a_config_file_named_but_missing_is_one_error_not_the_defaults(
    capsys: pytest.CaptureFixture[str], replay: Path, tmp_path: Path
) -> None:
    missing = str(tmp_path / "typo.toml")
    for args in (["ask", "--replay", str(replay), "--config", missing, "q"], ["--config", missing, "history", "list"]):
        code = main(args)
        out, err = capsys.readouterr()
        assert (code, out) == (2, "")
        assert err == f"error: Invalid value for '--config': file '{missing}' does not exist.\n"
