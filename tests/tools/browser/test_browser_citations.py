"""Both built-in tools end to end: search → open → python → an answer with citations, in ``ask`` and in exports.

A real web on loopback (a SearXNG-shaped search and HTML pages), the real browser and python
tools, a replayed recording with one completion per generation call, and the config file that
turns the tools on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.approval import ApprovalPolicy
from harmony_chat.chat.builtins import BrowserBuiltin
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.chat.events import ToolFinished
from harmony_chat.chat.tool_calls import ToolRunner
from harmony_chat.chat.toolset import ToolSet
from harmony_chat.cli import main
from harmony_chat.harmony.session import ChatSession
from harmony_chat.history.store import HistoryStore
from tests.helpers import ids
from tests.support.otter_story import ANSWER, COMPUTE, OPEN, QUESTION, SEARCH, SHOWN
from tests.tools.browser.web_server import WebServer


@pytest.fixture(scope="module")
def web() -> Iterator[WebServer]:
    server = WebServer().start()
    yield server
    server.stop()


@pytest.fixture
def setup(tmp_path: Path, web: WebServer, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the config with both tools on for the loopback web, the replayed recording)."""
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path / "data"))
    config = tmp_path / "config.toml"
    config.write_text(
        '[tools]\nbuiltin = ["python", "browser"]\n\n'
        f'[tools.browser]\nprovider = "searxng"\nurl = "{web.url}"\nallow_private = true\n',
        encoding="utf-8",
    )
    recording = tmp_path / "research.txt"
    recording.write_text("\n=====\n".join([SEARCH, OPEN, COMPUTE, ANSWER]) + "\n", encoding="utf-8")
    return config, recording


def test_ask_searches_opens_computes_and_cites(
    capsys: pytest.CaptureFixture[str], setup: tuple[Path, Path], web: WebServer
) -> None:
    config, recording = setup
    code = main(["ask", "--replay", str(recording), "--config", str(config), "--yes", QUESTION])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out == f"{SHOWN}\n\n[1] Sea otter facts <{web.url}/otters>\n[2] Kelp forests <{web.url}/kelp>\n"
    assert "【" not in out and "】" not in out
    assert web.web.search_queries[-1] == "sea otter weight"
    results = [line for line in err.splitlines() if line.startswith("[tool result]")]
    assert len(results) == 3, err
    assert "browser.search (done" in results[0] and "[0] Search results for: sea otter weight" in results[0]
    assert "browser.open (done" in results[1] and f"[1] Sea otter facts ({web.url}/otters)" in results[1]
    assert "python (done" in results[2] and results[2].endswith(": 29.5")


def test_a_continued_conversation_cites_pages_from_its_saved_browser_views(
    capsys: pytest.CaptureFixture[str], setup: tuple[Path, Path], web: WebServer, tmp_path: Path
) -> None:
    config, recording = setup
    saved = tmp_path / "saved.json"
    args = ["--config", str(config), "--yes", "--save-conversation", str(saved)]
    assert main(["ask", "--replay", str(recording), *args, QUESTION]) == 0
    capsys.readouterr()
    follow_up = tmp_path / "follow-up.txt"
    follow_up.write_text(
        "<|channel|>final<|message|>Its fur is the densest【1†L17-L18】.<|return|>\n", encoding="utf-8"
    )
    code = main(["ask", "--replay", str(follow_up), "--conversation", str(saved), "What about its fur?"])
    out, err = capsys.readouterr()
    assert code == 0, err  # no browser now: the page comes back from the saved view
    assert out == f"Its fur is the densest[1].\n\n[1] Sea otter facts <{web.url}/otters>\n"


def test_ask_json_keeps_the_raw_text_and_adds_the_resolved_citations(
    capsys: pytest.CaptureFixture[str], setup: tuple[Path, Path], web: WebServer
) -> None:
    config, recording = setup
    code = main(["ask", "--replay", str(recording), "--config", str(config), "--yes", "--json", QUESTION])
    out, err = capsys.readouterr()
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    search, opened, computed = [e for e in events if e["type"] == "tool_result"]
    assert [search["name"], opened["name"], computed["name"]] == ["browser.search", "browser.open", "python"]
    assert all(e["status"] == "done" for e in (search, opened, computed))
    assert "L3: * 【0†Sea otter facts†127.0.0.1】" in search["text"] and f"L8:   {web.url}/kelp" in search["text"]
    assert "L7: Adult sea otters typically weigh between 14 and 45 kg" in opened["text"]  # the lines cited
    assert computed["text"] == "29.5\n"
    raw = ANSWER.split("<|message|>", 1)[1].removesuffix("<|return|>")
    answer = "".join(e["text"] for e in events if e["type"] == "delta" and e["channel"] == "final")
    assert answer == raw  # the API view: the model's own text
    (finished,) = [e for e in events if e["type"] == "message_finished" and e["channel"] == "final"]
    (cited,) = [e for e in events if e["type"] == "citations"]
    assert finished["text"] == raw and events.index(cited) == events.index(finished) + 1
    assert cited["text"] == SHOWN
    assert cited["sources"] == [
        {"number": 1, "title": "Sea otter facts", "url": f"{web.url}/otters", "lines": [[7, 8], [7, 7]]},
        {"number": 2, "title": "Kelp forests", "url": f"{web.url}/kelp", "lines": []},
    ]
    marks = cited["citations"]
    assert [(m["cursor"], m["number"]) for m in marks] == [(1, 1), (1, 1), (0, 2), (42, None)]
    assert [raw[m["start"] : m["end"]] for m in marks] == ["【1†L7-L8】", "【1†L7】", "【0†L7】", "【42†L1】"]


def test_markdown_export_renders_citations_as_footnotes(
    capsys: pytest.CaptureFixture[str], encoding: HarmonyEncoding, tmp_path: Path, web: WebServer
) -> None:
    """Two saved turns: each answer's citations become footnotes (numbered on), rebuilt from the stored views."""
    follow = '<|channel|>analysis to=browser.open code<|message|>{"cursor": 1, "id": 0}<|call|>'  # the kelp link
    second = "<|channel|>final<|message|>Otters keep urchin numbers down【2†L4】.<|return|>"
    turns = [SEARCH, OPEN, ANSWER.replace("【1†L7】", ""), follow, second]
    backend = ReplayBackend(turns=[ids(encoding, turn) for turn in turns])
    backend.load()
    browser = BrowserBuiltin("searxng", web.url, allow_private=True)
    runner = ToolRunner(ToolSet(builtins=[browser]), ApprovalPolicy("all"))
    path = tmp_path / "history.sqlite3"
    store = HistoryStore(path)
    chat = ChatConversation(ChatSession(encoding, start_date="2026-01-01"), backend, store=store, tools=runner)
    try:
        events = [*chat.send(QUESTION), *chat.send("And why do kelp forests need them?")]
    finally:
        browser.close()
    assert [e.result.status for e in events if isinstance(e, ToolFinished)] == ["done", "done", "done"]
    kelp = next(
        e.result.text
        for e in events
        if isinstance(e, ToolFinished) and e.name == "browser.open" and "[2]" in e.result.text[:4]
    )
    assert "L4: Sea otters keep urchin numbers down" in kelp
    conversation = chat.conversation_id
    assert conversation is not None

    code = main(["history", "export", str(conversation), "--format", "md", "--history-db", str(path)])
    markdown = capsys.readouterr().out
    assert code == 0
    answers = markdown.split("## Assistant\n\n")[1:]
    assert answers[0].startswith(
        "Adult sea otters weigh 14 to 45 kg[^1], so about 29.5 kg on average;"
        " they also keep kelp forests growing[^2] (not from a made-up source).\n\n"
        f"[^1]: [Sea otter facts](<{web.url}/otters>) (lines L7-L8)\n"
        f"[^2]: [Kelp forests](<{web.url}/kelp>)\n"
    )
    assert answers[1].startswith(
        f"Otters keep urchin numbers down[^3].\n\n[^3]: [Kelp forests](<{web.url}/kelp>) (lines L4)\n"
    )
    answer_parts = "".join(part.split("**Tool", 1)[0] for part in answers)
    assert "【" not in answer_parts and "】" not in answer_parts  # tool results keep their own markers

    code = main(["history", "export", str(conversation), "--format", "json", "--history-db", str(path)])
    exported = capsys.readouterr().out
    assert code == 0 and "【1†L7-L8】" in exported and "[^1]" not in exported  # JSON stays raw
    code = main(["history", "export", str(conversation), "--format", "harmony", "--history-db", str(path)])
    assert code == 0 and "Otters keep urchin numbers down【2†L4】." in capsys.readouterr().out
