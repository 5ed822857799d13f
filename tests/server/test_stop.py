"""Chat Completions ``stop``: the answer is cut before the first stop sequence and the turn ends there.

Over replayed turns (the answer's text is known token by token) and over the pocket model, through
the official ``openai`` client, streamed and not. The reasoning, preambles and tool calls are never cut.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.demo.pocket import POCKET_NAME
from tests.helpers import ids
from tests.server.conftest import RunningServer, replay_server
from tests.server.test_chat_completions import AFTER_TOOL, CALL, WEATHER
from training.pocket.data import FACTS

REST = " ".join(f"Line {number}." for number in range(200))
"""What the model would say after the stop sequence: long enough that the turn is seen to end early."""
ANSWER = (
    "<|channel|>analysis<|message|>Count to three, then say Observation: and stop.<|end|>"
    f"<|start|>assistant<|channel|>final<|message|>One, two, three.\nObservation: {REST}<|return|>"
)
REASONING = "Count to three, then say Observation: and stop."
CUT = "One, two, three.\n"
USER: Any = [{"role": "user", "content": "Count to three."}]
DELAY_S = 0.005
"""Per replayed token, so the answer streams in many pieces and a turn that is not cancelled takes seconds."""


def _content(chunks: list[Any]) -> str:
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


def _finish_reasons(chunks: list[Any]) -> list[str]:
    return [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices and chunk.choices[0].finish_reason]


def test_the_answer_is_cut_before_a_stop_string_and_the_turn_cancelled(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER, delay_s=DELAY_S)
    with server as running:
        completion = running.client().chat.completions.create(model="replay-model", messages=USER, stop="Observation:")
    choice = completion.choices[0]
    assert choice.message.content == CUT and choice.finish_reason == "stop"
    assert (choice.message.model_extra or {}).get("reasoning") == REASONING  # the reasoning is never cut
    assert backend.stopped.wait(5)  # the engine was told to stop
    usage = completion.usage
    assert usage is not None and usage.prompt_tokens == len(backend.prompts[0])
    assert 0 < usage.completion_tokens < len(ids(encoding, ANSWER)) // 2  # it stopped soon after the stop sequence
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_streamed_the_stop_sequence_never_leaks_and_the_turn_ends(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER, delay_s=DELAY_S)
    with server as running:
        chunks = list(
            running.client().chat.completions.create(
                model="replay-model",
                messages=USER,
                stop=["\n\n", "Observation:", "Calling tools:"],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    pieces = [chunk.choices[0].delta.content for chunk in chunks if chunk.choices and chunk.choices[0].delta.content]
    assert "".join(pieces) == CUT  # nothing of the stop sequence, nor of what came after it
    reasoning = "".join(getattr(chunk.choices[0].delta, "reasoning", None) or "" for chunk in chunks if chunk.choices)
    assert reasoning == REASONING
    assert _finish_reasons(chunks) == ["stop"]
    usage = chunks[-1].usage
    assert usage is not None and 0 < usage.completion_tokens < len(ids(encoding, ANSWER)) // 2
    assert backend.stopped.wait(5)


def test_a_possible_start_that_is_not_a_stop_sequence_is_sent_in_the_end(encoding: HarmonyEncoding) -> None:
    """``Observation`` without the colon is held back while it could become the stop sequence, then sent."""
    turn = "<|channel|>final<|message|>Observation is key. The end: Observ<|return|>"
    text = "Observation is key. The end: Observ"
    _, server = replay_server(encoding, turn, turn, delay_s=DELAY_S)
    with server as running:
        client = running.client()
        whole = client.chat.completions.create(model="replay-model", messages=USER, stop=["Observation:"])
        chunks = list(
            client.chat.completions.create(model="replay-model", messages=USER, stop=["Observation:"], stream=True)
        )
    assert whole.choices[0].message.content == text and whole.choices[0].finish_reason == "stop"
    assert _content(chunks) == text and _finish_reasons(chunks) == ["stop"]


def test_with_no_stop_sequence_in_the_answer_it_runs_to_its_end(encoding: HarmonyEncoding) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running:
        completion = running.client().chat.completions.create(
            model="replay-model", messages=USER, stop=["Line 200.", "STOP", "x", "Five."]
        )
    assert completion.choices[0].message.content == f"{CUT}Observation: {REST}"
    assert completion.usage is not None and completion.usage.completion_tokens == len(ids(encoding, ANSWER))
    assert not backend.stopped.is_set()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_tool_call_and_its_preamble_are_never_cut(encoding: HarmonyEncoding, stream: bool) -> None:
    """``CALL``'s preamble says "Let me check." and its arguments name Oslo: both stop sequences here.

    The answer after it ("It is snowing in Oslo.") is cut.
    """
    _, server = replay_server(encoding, CALL, AFTER_TOOL)
    request: Any = {"model": "replay-model", "messages": USER, "tools": [WEATHER], "stop": ["Oslo", "check"]}
    with server as running:
        client = running.client()
        if stream:
            chunks = list(client.chat.completions.create(**request, stream=True))
            calls = [call for chunk in chunks if chunk.choices for call in chunk.choices[0].delta.tool_calls or []]
            arguments, content, finish = calls[0].function.arguments, _content(chunks), _finish_reasons(chunks)
        else:
            choice = client.chat.completions.create(**request).choices[0]
            assert choice.message.tool_calls is not None
            call: Any = choice.message.tool_calls[0]
            arguments, content, finish = call.function.arguments, choice.message.content, [choice.finish_reason]
        assert json.loads(arguments) == {"location": "Oslo"}
        assert content == "Let me check." and finish == ["tool_calls"]
        answer = client.chat.completions.create(**request).choices[0]  # the replay's next turn: the answer
    assert answer.message.content == "It is snowing in " and answer.finish_reason == "stop"


@pytest.mark.parametrize(
    "stop",
    [["a", "b", "c", "d", "e"], "", ["ok", ""], [1], 7, {"text": "x"}, [["x"]], True],
    ids=["five", "empty", "empty-in-list", "number-in-list", "number", "object", "nested", "bool"],
)
def test_a_stop_that_is_not_up_to_four_strings_is_a_400_naming_it(encoding: HarmonyEncoding, stop: Any) -> None:
    backend, server = replay_server(encoding, ANSWER)
    with server as running, pytest.raises(openai.BadRequestError) as refused:
        running.client().chat.completions.create(model="replay-model", messages=USER, extra_body={"stop": stop})
    assert refused.value.param == "stop"
    assert "up to 4 non-empty strings" in refused.value.message
    assert backend.prompts == []  # refused before the model ran


def test_null_an_empty_list_and_four_stop_sequences_are_taken(encoding: HarmonyEncoding) -> None:
    _, server = replay_server(encoding, ANSWER)
    contents: list[str | None] = []
    with server as running:
        for stop in (None, [], ["a", "b", "c", "Observation:"]):
            completion = running.client().chat.completions.create(
                model="replay-model", messages=USER, extra_body={"stop": stop}
            )
            contents.append(completion.choices[0].message.content)
    assert contents == [f"{CUT}Observation: {REST}", f"{CUT}Observation: {REST}", CUT]


@pytest.mark.llama
def test_the_pocket_models_answer_is_cut_streamed_or_not(pocket_server: RunningServer) -> None:
    question, answer, *_ = FACTS[0]  # "What is 2 + 2?": "2 + 2 = 4."
    client = pocket_server.client()
    messages: Any = [{"role": "user", "content": question}]
    whole = client.chat.completions.create(model=POCKET_NAME, messages=messages, stop=[" = "])
    chunks = list(client.chat.completions.create(model=POCKET_NAME, messages=messages, stop=" = ", stream=True))
    assert answer.startswith("2 + 2 = ")
    assert whole.choices[0].message.content == "2 + 2" and whole.choices[0].finish_reason == "stop"
    assert _content(chunks) == "2 + 2" and _finish_reasons(chunks) == ["stop"]
