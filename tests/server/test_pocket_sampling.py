"""Sampler parameters llama.cpp in process honours, over the pocket model: log probabilities, logit bias, penalties."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.demo.pocket import POCKET_NAME
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.session import ChatSession
from tests.server.conftest import RunningServer

pytestmark = pytest.mark.llama
MESSAGES: Any = [{"role": "user", "content": "What is 2 + 2?"}]


def _tokens(entries: Any) -> list[tuple[str, float]]:
    return [(entry.token, entry.logprob) for entry in entries]


def test_chat_logprobs_cover_the_answer_streamed_or_not(pocket_server: RunningServer) -> None:
    client = pocket_server.client()
    completion = client.chat.completions.create(model=POCKET_NAME, messages=MESSAGES, logprobs=True, top_logprobs=3)
    choice = completion.choices[0]
    assert choice.message.content == "2 + 2 = 4."
    assert choice.logprobs is not None and choice.logprobs.content
    content = choice.logprobs.content
    assert "".join(entry.token for entry in content) == "2 + 2 = 4."  # the answer's tokens, no reasoning
    for entry in content:
        assert entry.logprob <= 0 and bytes(entry.bytes or []) == entry.token.encode()
        assert len(entry.top_logprobs) == 3
        assert [top.logprob for top in entry.top_logprobs] == sorted(
            (t.logprob for t in entry.top_logprobs), reverse=True
        )
        assert entry.top_logprobs[0].token == entry.token  # greedy: the sampled token is the likeliest
        assert math.isclose(entry.top_logprobs[0].logprob, entry.logprob, abs_tol=1e-6)
        assert sum(math.exp(top.logprob) for top in entry.top_logprobs) <= 1 + 1e-6
    chunks = list(
        client.chat.completions.create(model=POCKET_NAME, messages=MESSAGES, logprobs=True, top_logprobs=3, stream=True)
    )
    streamed = [
        entry
        for chunk in chunks
        if chunk.choices and chunk.choices[0].logprobs
        for entry in chunk.choices[0].logprobs.content or []
    ]
    assert [token for token, _ in _tokens(streamed)] == [token for token, _ in _tokens(content)]
    assert [value for _, value in _tokens(streamed)] == pytest.approx([value for _, value in _tokens(content)])
    for chunk in chunks:  # each chunk carries the log probabilities of the text it brings
        if chunk.choices and chunk.choices[0].logprobs and chunk.choices[0].logprobs.content:
            text = "".join(entry.token for entry in chunk.choices[0].logprobs.content)
            assert chunk.choices[0].delta.content == text
    plain = client.chat.completions.create(model=POCKET_NAME, messages=MESSAGES)
    assert plain.choices[0].logprobs is None


def test_responses_logprobs_when_included(pocket_server: RunningServer) -> None:
    client = pocket_server.client()
    response = client.responses.create(
        model=POCKET_NAME, input="What is 2 + 2?", include=["message.output_text.logprobs"], top_logprobs=2
    )
    message = next(item for item in response.output if item.type == "message")
    part = message.content[0]
    assert part.type == "output_text" and part.text == "2 + 2 = 4."
    assert part.logprobs and "".join(entry.token for entry in part.logprobs) == "2 + 2 = 4."
    assert all(len(entry.top_logprobs) == 2 and entry.logprob <= 0 for entry in part.logprobs)
    events = list(
        client.responses.create(
            model=POCKET_NAME, input="What is 2 + 2?", include=["message.output_text.logprobs"], stream=True
        )
    )
    deltas = [event for event in events if event.type == "response.output_text.delta"]
    assert "".join(entry.token for event in deltas for entry in event.logprobs) == "2 + 2 = 4."


def test_logit_bias_changes_what_is_sampled(pocket_server: RunningServer, encoding: HarmonyEncoding) -> None:
    """The pocket model is sure of its words (the runner-up trails by dozens of logits): -100 still moves it."""
    client = pocket_server.client()
    plain = client.chat.completions.create(model=POCKET_NAME, messages=MESSAGES, logprobs=True)
    assert plain.choices[0].logprobs is not None and plain.choices[0].logprobs.content
    first = plain.choices[0].logprobs.content[0].token  # the answer's first token ("2")
    (token,) = encoding.encode(first)
    biased = client.chat.completions.create(
        model=POCKET_NAME, messages=MESSAGES, logprobs=True, logit_bias={str(token): -100}
    )
    assert biased.choices[0].logprobs is not None
    assert first not in [entry.token for entry in biased.choices[0].logprobs.content or []]
    assert biased.choices[0].message.content != plain.choices[0].message.content


def test_penalties_change_what_llama_cpp_samples(tiny_gguf: Path, encoding: HarmonyEncoding) -> None:
    """Random weights (flat logits, where a penalty of 2 shows): greedy repeats itself, penalised it cannot."""
    backend = LlamaCppBackend(tiny_gguf, context_size=1024)
    backend.load()
    session = ChatSession(encoding)
    session.add_user("What is 2 + 2?")
    prompt = session.render().tokens

    def generate(**options: Any) -> list[int]:
        sampling = SamplingParams(temperature=0.0, max_tokens=30, harmony_structure=False, **options)
        return list(backend.generate(prompt, sampling, tk.GENERATION_STOPS, lambda: False))

    try:
        plain = generate()
        frequency, presence = generate(frequency_penalty=2.0), generate(presence_penalty=2.0)
    finally:
        backend.close()
    assert len(set(plain)) < len(plain) / 2  # greedy on random weights loops over a few tokens
    assert len(set(frequency)) == len(frequency) and len(set(presence)) == len(presence)


def test_with_a_response_format_a_preamble_is_neither_content_nor_its_logprobs(pocket_server: RunningServer) -> None:
    tool: Any = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Gets the current weather in a city.",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
        },
    }
    client = pocket_server.client()
    messages: Any = [{"role": "user", "content": "What's the weather in Oslo?"}]
    plain = client.chat.completions.create(model=POCKET_NAME, messages=messages, tools=[tool], logprobs=True)
    formatted = client.chat.completions.create(
        model=POCKET_NAME, messages=messages, tools=[tool], logprobs=True, response_format={"type": "json_object"}
    )
    assert plain.choices[0].message.content == "Let me check the weather in Oslo."  # the preamble, then the call
    assert plain.choices[0].logprobs is not None and plain.choices[0].logprobs.content
    choice = formatted.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    assert choice.logprobs is not None and choice.logprobs.content == []
