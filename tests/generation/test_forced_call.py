"""tool_choice ``required`` or a named function: the turn ends with such a call, after any analysis.

On a backend that samples under harmony's grammar the guard allows only those headers; elsewhere
the stream writes the headers itself (these tests drive it with a scripted engine that does not).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Sequence

import pytest
from openai_harmony import HarmonyEncoding, ToolDescription

from harmony_chat.backends.base import SamplingParams
from harmony_chat.generation.turn import TurnOptions, TurnStats, required_calls, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import MessageStarted, StopReason, ToolCall
from harmony_chat.harmony.session import ChatSession
from harmony_chat.harmony.structure import Place, StructureGuard, call_headers
from tests.helpers import StubBackend, ids

SCHEMA: dict[str, object] = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def _guard(encoding: HarmonyEncoding, functions: list[str], completion: str = "") -> StructureGuard:
    prompt = ids(encoding, "<|start|>user<|message|>Hi<|end|><|start|>assistant" + completion)
    return StructureGuard(encoding, prompt, headers=call_headers(encoding, functions))


def _walk(guard: StructureGuard, encoding: HarmonyEncoding, text: str) -> bool:
    """Whether the guard allows every token of ``text`` in turn."""
    for token in ids(encoding, text):
        allowed = guard.allowed()
        words = allowed.words.tolist() if allowed.words is not None else None
        fits = token in allowed.specials if tk.is_special(token) else allowed.text and (words is None or token in words)
        if not fits:
            return False
        guard.advance(token)
    return True


def test_the_guard_allows_an_analysis_then_only_the_forced_call(encoding: HarmonyEncoding) -> None:
    named = ["functions.get_weather"]
    analysis = "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant"
    for refused in ("<|channel|>final<|message|>", "<|channel|>commentary<|message|>", "<|channel|>analysis"):
        guard = _guard(encoding, named)
        assert _walk(guard, encoding, analysis)
        assert not _walk(guard, encoding, refused)  # no answer, no preamble, no second analysis: the call
    guard = _guard(encoding, named)
    call = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
    assert _walk(guard, encoding, analysis + call)
    assert guard.place is Place.CONTENT and guard.content_stops == {tk.CALL}
    guard = _guard(encoding, named)
    assert _walk(guard, encoding, "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>")
    assert not _walk(_guard(encoding, named), encoding, "<|channel|>commentary to=functions.get_time")


def test_required_allows_a_call_to_any_function_and_nothing_else(encoding: HarmonyEncoding) -> None:
    functions = ["functions.get_weather", "functions.get_time"]
    for name in functions:
        header = f"<|channel|>commentary to={name} <|constrain|>json<|message|>"
        assert _walk(_guard(encoding, functions), encoding, header)
    assert not _walk(_guard(encoding, functions), encoding, "<|channel|>final<|message|>")


def test_required_calls_reads_tool_choice() -> None:
    assert required_calls(None, ["a"]) is None and required_calls("auto", ["a"]) is None
    assert required_calls("required", ["a", "b"]) == ["functions.a", "functions.b"]
    assert required_calls("b", ["a", "b"]) == ["functions.b"] == required_calls("functions.b", ["a", "b"])
    with pytest.raises(ValueError, match="not among"):
        required_calls("c", ["a"])
    with pytest.raises(ValueError, match="no function"):
        required_calls("required", [])


class ScriptedEngine(StubBackend):
    """A remote-like backend (no harmony grammar) that writes whatever its script says for each call.

    The script's entries are consumed call by call; it records each call's sampling and prompt.
    """

    name = "scripted"
    model_name = "scripted"
    supports_json_schema = True

    def __init__(self, script: list[list[int]]) -> None:
        super().__init__()
        self.script = script
        self.calls: list[tuple[list[int], SamplingParams]] = []

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        self.calls.append((list(prompt), sampling))
        for token in self.script.pop(0) if self.script else []:
            yield token
            if token in stop_ids:
                return

    def prefill(self, tokens: Sequence[int]) -> int:
        return 0


def _session(encoding: HarmonyEncoding) -> ChatSession:
    session = ChatSession(encoding, functions=[ToolDescription.new(name, "", SCHEMA) for name in ("weather", "time")])
    session.add_user("Weather in Paris?")
    return session


def test_a_named_call_is_written_after_the_analysis_where_the_engine_has_no_harmony_grammar(
    encoding: HarmonyEncoding,
) -> None:
    analysis = ids(encoding, "I should look it up, then answer.<|end|><|start|>assistant<|channel|>final<|message|>No")
    arguments = ids(encoding, '{"city": "Paris"}<|call|>')
    engine = ScriptedEngine([analysis, arguments])
    options = TurnOptions(sampling=SamplingParams(max_tokens=200), tool_schemas={"functions.weather": SCHEMA})
    options.tool_choice = "weather"
    events = list(run_turn(_session(encoding), engine, options))
    (call,) = [event for event in events if isinstance(event, ToolCall)]
    assert call.name == "functions.weather" and call.arguments == '{"city": "Paris"}' and call.runnable
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason is StopReason.CALL
    (first, _), (second, sampling) = engine.calls
    opened = ids(encoding, "<|start|>assistant<|channel|>analysis<|message|>")
    assert first[-len(opened) :] == opened
    header = ids(encoding, "I should look it up, then answer.<|end|><|start|>assistant<|channel|>commentary")
    header += ids(encoding, " to=functions.weather <|constrain|>json<|message|>")
    assert second[-len(header) :] == header  # cut right after the analysis, the call's header written
    assert sampling.json_schema == SCHEMA  # the arguments under the tool's schema
    started = [event for event in events if isinstance(event, MessageStarted)]
    assert [event.channel for event in started] == ["analysis", "commentary"]  # the final the engine began was cut


def test_required_lets_the_engine_choose_the_name_under_its_grammar(encoding: HarmonyEncoding) -> None:
    analysis = ids(encoding, "Look it up.<|end|>")
    name = [*ids(encoding, "time"), tk.RETURN]  # the engine stops once the choice is complete
    arguments = ids(encoding, '{"city": "Paris"}<|call|>')
    engine = ScriptedEngine([analysis, name, arguments])
    schemas = {"functions.weather": SCHEMA, "functions.time": SCHEMA}
    options = TurnOptions(sampling=SamplingParams(max_tokens=200), tool_schemas=schemas, tool_choice="required")
    events = list(run_turn(_session(encoding), engine, options))
    (call,) = [event for event in events if isinstance(event, ToolCall)]
    assert call.name == "functions.time" and call.runnable
    assert engine.calls[1][1].choices == ("weather", "time")
    assert engine.calls[2][1].json_schema == SCHEMA and engine.calls[2][1].choices is None


def test_a_stop_inside_the_forced_analysis_becomes_the_call(encoding: HarmonyEncoding) -> None:
    engine = ScriptedEngine([ids(encoding, "Done.<|return|>"), ids(encoding, '{"city": "Oslo"}<|call|>')])
    options = TurnOptions(sampling=SamplingParams(max_tokens=200), tool_schemas={"functions.weather": SCHEMA})
    options.tool_choice = "weather"
    events = list(run_turn(_session(encoding), engine, options))
    (call,) = [event for event in events if isinstance(event, ToolCall)]
    assert call.name == "functions.weather" and call.arguments == '{"city": "Oslo"}'
