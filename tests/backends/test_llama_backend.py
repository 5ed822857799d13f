"""The real llama.cpp path on a tiny random-weight gpt-oss GGUF; tokens are forced where structure matters."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.errors import ModelError
from harmony_chat.generation.turn import TurnOptions, TurnStats, run_turn
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import ContentDelta, StopReason, ToolCall
from harmony_chat.harmony.session import ChatSession
from tests.helpers import ForceTokens, ids

pytestmark = pytest.mark.llama
GREEDY = SamplingParams(temperature=0.0, max_tokens=64)


@pytest.fixture(scope="module")
def backend(tiny_gguf: Path) -> LlamaCppBackend:
    model = LlamaCppBackend(tiny_gguf, context_size=1024)
    model.load()
    return model


def _force(backend: LlamaCppBackend, encoding: HarmonyEncoding, text: str) -> list[int]:
    sequence = ids(encoding, text)
    backend.logits_processor = ForceTokens(sequence)
    return sequence


def _run(session: ChatSession, backend: LlamaCppBackend, **options: object) -> list[object]:
    return list(run_turn(session, backend, TurnOptions(**options)))  # type: ignore[arg-type]


def test_model_info(backend: LlamaCppBackend) -> None:
    info = backend.info
    assert (info.name, info.backend, info.context_size, info.device) == ("tiny-gpt-oss", "llama.cpp", 1024, "CPU")


def test_unforced_generation_streams_token_ids(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    backend.logits_processor = None
    prompt = ChatSession(encoding)
    prompt.add_user("Hello")
    tokens = list(backend.generate(prompt.render().tokens, SamplingParams(max_tokens=12, seed=3), set(), lambda: False))
    assert len(tokens) == 12 and all(tk.is_valid(t) for t in tokens)
    again = list(backend.generate(prompt.render().tokens, SamplingParams(max_tokens=12, seed=3), set(), lambda: False))
    assert again == tokens
    stats = backend.last_stats
    assert stats.generated_tokens == 12 and stats.ttft_s > 0 and stats.decode_tokens_per_s > 0


def test_forced_turn_streams_final_answer(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    forced = _force(
        backend,
        encoding,
        "<|channel|>analysis<|message|>Greet back.<|end|><|start|>assistant"
        "<|channel|>final<|message|>Hello there!<|return|>",
    )
    session = ChatSession(encoding)
    session.add_user("Hi")
    events = _run(session, backend, sampling=GREEDY)
    final = "".join(e.text for e in events if isinstance(e, ContentDelta) and e.channel == "final")
    assert final == "Hello there!"
    stats = events[-1]
    assert isinstance(stats, TurnStats)
    assert stats.reason is StopReason.RETURN
    assert stats.stats.generated_tokens == len(forced)
    assert [m.channel for m in session.history[1:]] == ["analysis", "final"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("<|channel|>final<|message|>Done<|return|>", StopReason.RETURN),
        ('<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>', StopReason.CALL),
        ("<|channel|>final<|message|>Done<|endoftext|>", StopReason.RETURN),
    ],
)
def test_every_stop_token_ends_generation(
    backend: LlamaCppBackend, encoding: HarmonyEncoding, text: str, reason: StopReason
) -> None:
    forced = _force(backend, encoding, text + "<|start|>assistant<|channel|>final<|message|>never")
    session = ChatSession(encoding)
    session.add_user("Go")
    events = _run(session, backend, sampling=replace(GREEDY, harmony_structure=False))  # <|endoftext|> is never guided
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason is reason
    assert stats.stats.generated_tokens == len(ids(encoding, text)) < len(forced)
    if reason is StopReason.CALL:
        assert [e.name for e in events if isinstance(e, ToolCall)] == ["functions.f"]


def test_cancellation_within_one_token(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    _force(backend, encoding, "<|channel|>final<|message|>" + " one two three four five six seven" * 4 + "<|return|>")
    session = ChatSession(encoding)
    session.add_user("Count")
    seen = 0
    requested_at: list[int] = []
    """How many tokens the backend had generated when the stop was first asked for."""

    def should_stop() -> bool:
        if seen >= 7 and not requested_at:
            requested_at.append(backend.last_stats.generated_tokens)
        return seen >= 7

    for event in run_turn(session, backend, TurnOptions(sampling=GREEDY), should_stop):
        if isinstance(event, ContentDelta) or getattr(event, "token_id", None) is not None:
            seen = backend.last_stats.generated_tokens
        if isinstance(event, TurnStats):
            assert event.reason is StopReason.CANCELLED
            # the turn decodes tokens in groups of at most 30 ms, so the consumer asks to stop a few
            # tokens after the 7th was generated; the backend stops at its very next token
            assert event.stats.generated_tokens == requested_at[0] >= 7
            assert event.truncated
    assert session.history[-1].channel == "final"


def test_max_tokens_keeps_partial_final(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    _force(backend, encoding, "<|channel|>final<|message|>A long answer that goes on and on<|return|>")
    session = ChatSession(encoding)
    session.add_user("Talk")
    events = _run(session, backend, sampling=SamplingParams(temperature=0.0, max_tokens=6))
    stats = events[-1]
    assert isinstance(stats, TurnStats) and stats.reason is StopReason.LENGTH and stats.truncated
    partial = session.history[-1]
    assert partial.channel == "final" and partial.content[0].text == "A long answer"


def test_second_turn_evaluates_only_new_tokens(backend: LlamaCppBackend, encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_user("What is 2 + 2?")
    first_prompt = session.render().tokens
    generated = _force(
        backend,
        encoding,
        "<|channel|>analysis<|message|>Add.<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>",
    )
    _run(session, backend, sampling=GREEDY)
    session.add_user("And 3 + 3?")
    second_prompt = session.render().tokens
    _force(backend, encoding, "<|channel|>final<|message|>6<|return|>")
    events = _run(session, backend, sampling=GREEDY)
    stats = events[-1]
    assert isinstance(stats, TurnStats)
    cached = first_prompt + generated[:-1]
    shared = next(i for i, (a, b) in enumerate(zip(cached, second_prompt, strict=False)) if a != b)
    assert shared == len(first_prompt) + 1
    assert stats.stats.prompt_tokens == len(second_prompt)
    assert stats.stats.prompt_tokens_evaluated == len(second_prompt) - shared
    assert stats.stats.prompt_tokens_reused == shared


def test_refuses_a_model_whose_special_tokens_disagree(
    tmp_path: Path, ranks: list[bytes], merges: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harmony_chat.gguf import writer

    shape = writer.GptOssShape(hidden_size=32, intermediate_size=32, head_dim=8)
    from harmony_chat.gguf.tokenizer import harmony_vocabulary as original

    def swapped(ranks_: list[bytes]) -> tuple[list[str], list[int]]:
        strings, types = original(ranks_)
        strings[tk.START], strings[tk.END] = strings[tk.END], strings[tk.START]
        return strings, types

    monkeypatch.setattr(writer, "harmony_vocabulary", swapped)
    path = writer.write_gpt_oss_gguf(
        tmp_path / "swapped.gguf",
        shape,
        writer.random_tensors(shape),
        ranks,
        merges=merges,
        quant_types={},
    )
    with pytest.raises(ModelError, match="does not use harmony's o200k_harmony token ids"):
        LlamaCppBackend(path, context_size=256).load()


def test_refuses_another_architecture(tmp_path: Path) -> None:
    from gguf import GGUFWriter

    path = tmp_path / "llama.gguf"
    gguf_writer = GGUFWriter(str(path), "llama")
    gguf_writer.write_header_to_file()
    gguf_writer.write_kv_data_to_file()
    gguf_writer.close()
    with pytest.raises(ModelError, match="architecture 'llama', not gpt-oss"):
        LlamaCppBackend(path).load()
