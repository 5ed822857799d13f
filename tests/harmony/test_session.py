"""The session manager: system/developer messages, effort, CoT policy, prefix sharing, budget, files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openai_harmony import Author, HarmonyEncoding, Message, Role, ToolDescription

from harmony_chat.errors import ContextOverflowError, ConversationFileError
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.effort import next_effort, parse_effort
from harmony_chat.harmony.session import ChatSession, ResponseFormat, TurnRecord, visible_history
from tests.helpers import decode, ids

WEATHER = ToolDescription.new(
    "get_current_weather",
    "Gets the current weather in the provided location.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)


def assistant(text: str, channel: str) -> Message:
    return Message.from_role_and_content(Role.ASSISTANT, text).with_channel(channel)


def tool_call(arguments: str) -> Message:
    return (
        Message.from_role_and_content(Role.ASSISTANT, arguments)
        .with_channel("commentary")
        .with_recipient("functions.get_current_weather")
        .with_content_type("<|constrain|>json")
    )


def record(session: ChatSession, *messages: Message) -> None:
    session.add_assistant_turn(messages, TurnRecord(session.effort, "return"))


def test_system_message_carries_identity_date_effort_and_channels(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, effort="high", start_date="2026-11-21")
    session.add_user("Hi")
    text = encoding.decode(session.render().tokens)
    assert text.startswith("<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n")
    assert "Knowledge cutoff: 2024-06\nCurrent date: 2026-11-21\n\nReasoning: high\n\n" in text
    assert "# Valid channels: analysis, commentary, final. Channel must be included for every message." in text
    assert text.endswith("<|start|>user<|message|>Hi<|end|><|start|>assistant")
    assert "<|start|>developer" not in text


def test_date_is_pinned_when_the_session_starts(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_user("a")
    first = session.render().tokens
    record(session, assistant("b", "final"))
    session.add_user("c")
    assert session.render().tokens[: len(first) - 2] == first[:-2]
    assert len(session.start_date) == 10


def test_effort_changes_on_any_turn_and_is_recorded(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, effort="low")
    session.add_user("q")
    assert "Reasoning: low" in encoding.decode(session.render().tokens)
    assert "Reasoning: high" in encoding.decode(session.render("high").tokens)
    session.effort = next_effort(session.effort)
    assert session.effort == "medium"
    assert "Reasoning: medium" in encoding.decode(session.render().tokens)
    record(session, assistant("a", "final"))
    assert session.turns[-1].effort == "medium"
    assert parse_effort(" HIGH ") == "high"
    with pytest.raises(ValueError, match="low, medium or high"):
        parse_effort("extreme")


def test_developer_message_has_instructions_tools_and_formats(encoding: HarmonyEncoding) -> None:
    shopping = ResponseFormat(
        "shopping_list",
        {
            "properties": {
                "items": {"type": "array", "description": "entries on the shopping list", "items": {"type": "string"}}
            },
            "type": "object",
        },
        "a list of things to buy",
    )
    session = ChatSession(
        encoding, instructions="You are a helpful shopping assistant", functions=[WEATHER], response_formats=[shopping]
    )
    session.add_user("I need to buy coffee, soda and eggs")
    text = encoding.decode(session.render().tokens)
    assert "Calls to these tools must go to the commentary channel: 'functions'." in text
    assert "<|start|>developer<|message|># Instructions\n\nYou are a helpful shopping assistant\n\n" in text
    assert (
        '# Response Formats\n\n## shopping_list\n\n// a list of things to buy\n{"properties":{"items":{"type":"array"'
    ) in text
    assert "namespace functions {" in text and "type get_current_weather = (_: {" in text


def test_analysis_of_a_finished_turn_is_dropped(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_user("What is 2 + 2?")
    record(session, assistant("User asks 2+2.", "analysis"), assistant("4", "final"))
    session.add_user("And 3 + 3?")
    text = encoding.decode(session.render().tokens)
    assert "User asks 2+2." not in text
    assert "<|start|>assistant<|channel|>final<|message|>4<|end|><|start|>user<|message|>And 3 + 3?" in text


def test_tool_loop_keeps_analysis_calls_and_results_until_final(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, functions=[WEATHER])
    session.add_user("Weather in SF?")
    record(session, assistant("Need the weather tool.", "analysis"), tool_call('{"location": "SF"}'))
    assert session.pending_tool_call() is not None
    session.add_tool_result("functions.get_current_weather", '{"temp": 20}')
    text = encoding.decode(session.render().tokens)
    assert "Need the weather tool." in text
    assert (
        '<|start|>functions.get_current_weather to=assistant<|channel|>commentary<|message|>{"temp": 20}<|end|>' in text
    )
    record(session, assistant("Got 20 degrees.", "analysis"), assistant("It is 20 °C.", "final"))
    session.add_user("Thanks")
    later = encoding.decode(session.render().tokens)
    assert "Need the weather tool." not in later and "Got 20 degrees." not in later
    assert '{"location": "SF"}<|call|>' in later and '{"temp": 20}' in later


def test_policy_differs_from_harmony_first_final_rule() -> None:
    history = [
        Message.from_role_and_content(Role.USER, "2+2?"),
        assistant("thinking 2+2", "analysis"),
        assistant("4", "final"),
        Message.from_role_and_content(Role.USER, "3+5?"),
        assistant("thinking 3+5", "analysis"),
        assistant("8", "final"),
    ]
    assert visible_history(history) == [0, 2, 3, 5]


def test_stored_history_never_ends_with_return(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_user("hi")
    generated = ids(encoding, "<|channel|>final<|message|>hello<|return|>")
    record(session, *decode(encoding, generated).messages)
    session.add_user("again")
    tokens = session.render().tokens
    assert tk.RETURN not in tokens
    assert encoding.decode(tokens).count("hello<|end|>") == 1


def test_second_turn_shares_prefix_up_to_the_dropped_analysis(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_user("What is 2 + 2?")
    first = session.render().tokens
    generated = ids(
        encoding,
        "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>4.<|return|>",
    )
    record(session, *decode(encoding, generated).messages)
    session.add_user("And 3 + 3?")
    second = session.render().tokens
    assert second[: len(first)] == first
    assert second[len(first)] == tk.CHANNEL
    assert second[len(first) + 1] == encoding.encode("final")[0] != generated[1]


def test_tool_loop_prompt_extends_the_previous_one(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, functions=[WEATHER])
    session.add_user("Weather?")
    first = session.render().tokens
    generated = ids(encoding, "<|channel|>analysis<|message|>Use the tool.<|end|>")
    record(session, *decode(encoding, generated, stop_on_final=False).messages, tool_call('{"location": "x"}'))
    session.add_tool_result("functions.get_current_weather", "sunny")
    second = session.render().tokens
    assert second[: len(first) + len(generated)] == first + generated


def _chat(session: ChatSession, turns: int, words: int = 40) -> None:
    for n in range(turns):
        session.add_user(f"question {n} " + "word " * words)
        record(session, assistant(f"answer {n} " + "word " * words, "final"))


def test_context_budget_evicts_oldest_whole_turns(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, instructions="Be brief.", context_size=600)
    _chat(session, 6)
    session.add_user("latest question")
    prompt = session.render(max_new_tokens=100)
    text = encoding.decode(prompt.tokens)
    assert prompt.evicted_turns > 0
    assert len(prompt.tokens) + 100 <= 600
    assert text.startswith("<|start|>system<|message|>") and "Be brief." in text
    assert "latest question" in text and "question 0 " not in text
    kept = text.split("<|start|>user<|message|>")[1]
    assert kept.startswith("question ")
    again = session.render(max_new_tokens=100)
    assert again.tokens == prompt.tokens


def test_context_budget_refuses_when_configured(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, context_size=600, overflow="refuse")
    _chat(session, 6)
    session.add_user("latest")
    with pytest.raises(ContextOverflowError, match="context holds 600"):
        session.render(max_new_tokens=100)


def test_context_overflow_when_newest_message_alone_is_too_long(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, context_size=300)
    session.add_user("word " * 400)
    with pytest.raises(ContextOverflowError, match="shorten the message"):
        session.render(max_new_tokens=50)


def test_conversation_json_round_trip(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    session = ChatSession(
        encoding, effort="high", instructions="Be terse.", functions=[WEATHER], start_date="2026-01-02"
    )
    session.add_user("Weather?")
    record(session, assistant("thinking", "analysis"), tool_call('{"location": "Oslo"}'))
    session.add_tool_result("functions.get_current_weather", "cold")
    path = tmp_path / "conv.json"
    session.save(path)
    data = json.loads(path.read_text())
    assert [m["role"] for m in data["messages"]] == ["system", "developer", "user", "assistant", "assistant", "tool"]
    loaded = ChatSession.load(encoding, path)
    assert (loaded.effort, loaded.instructions, loaded.start_date) == ("high", "Be terse.", "2026-01-02")
    assert loaded.function_names == ["get_current_weather"]
    assert loaded.render().tokens == session.render().tokens
    overridden = ChatSession.load(encoding, path, effort="low")
    assert overridden.effort == "low"


def test_saved_conversation_leaves_out_dropped_analysis(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    session = ChatSession(encoding)
    session.add_user("q")
    record(session, assistant("private chain of thought", "analysis"), assistant("a", "final"))
    path = tmp_path / "c.json"
    session.save(path)
    assert "private chain of thought" not in path.read_text()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not a harmony conversation"),
        ('{"messages": [{"role": "wizard"}]}', "is not a harmony"),
        ("[1, 2]", "is not a harmony conversation"),
    ],
)
def test_malformed_conversation_file(encoding: HarmonyEncoding, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ConversationFileError, match=message):
        ChatSession.load(encoding, path)


def test_missing_conversation_file(encoding: HarmonyEncoding, tmp_path: Path) -> None:
    with pytest.raises(ConversationFileError, match="cannot read"):
        ChatSession.load(encoding, tmp_path / "nope.json")


def test_tool_result_author_and_channel(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_tool_result("browser.search", '{"result": "https://openai.com/"}')
    message = session.history[-1]
    assert message.author == Author.new(Role.TOOL, "browser.search")
    assert (message.recipient, message.channel) == ("assistant", "commentary")


def test_builtin_tools_are_declared_in_the_system_message_and_survive_a_round_trip(
    encoding: HarmonyEncoding, tmp_path: Path
) -> None:
    session = ChatSession(encoding, builtin=["python", "browser"], start_date="2025-01-01")
    session.add_user("hi")
    text = encoding.decode(session.render().tokens)
    system = text.split("<|end|>", 1)[0]
    assert "## browser" in system and "## python" in system and "namespace browser" in system
    assert "## python" not in encoding.decode(ChatSession(encoding).render_messages([]))
    path = tmp_path / "c.json"
    session.save(path)
    assert ChatSession.load(encoding, path).builtin == ["browser", "python"]
