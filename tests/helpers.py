"""Helpers shared by the tests: harmony text to ids, forcing tokens, running the decoder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from openai_harmony import HarmonyEncoding, Message

from harmony_chat.backends.base import ModelBackend, ModelInfo
from harmony_chat.harmony.decoder import StreamDecoder
from harmony_chat.harmony.events import (
    ContentDelta,
    DecoderEvent,
    MessageFinished,
    Recovery,
    StopReason,
    ToolCall,
    TurnFinished,
)


class StubBackend(ModelBackend):
    """A model for tests: its name and loading; a subclass writes ``generate``."""

    model_name = "stub"

    @property
    def info(self) -> ModelInfo:
        return ModelInfo(self.model_name, "test", 4096)

    def load(self) -> ModelInfo:
        return self.info


def ids(encoding: HarmonyEncoding, text: str) -> list[int]:
    """Encode harmony text with special tokens written literally."""
    return list(encoding.encode(text, allowed_special="all"))


@dataclass
class Decoded:
    """What a decoder run produced, grouped for assertions."""

    events: list[DecoderEvent] = field(default_factory=list)

    def text(self, channel: str) -> str:
        return "".join(e.text for e in self.events if isinstance(e, ContentDelta) and e.channel == channel)

    @property
    def recoveries(self) -> list[str]:
        return [e.kind for e in self.events if isinstance(e, Recovery)]

    @property
    def finished(self) -> TurnFinished:
        ends = [e for e in self.events if isinstance(e, TurnFinished)]
        assert len(ends) == 1, f"expected one TurnFinished, got {len(ends)}"
        return ends[0]

    @property
    def messages(self) -> tuple[Message, ...]:
        return self.finished.messages

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [e for e in self.events if isinstance(e, ToolCall)]

    @property
    def finished_messages(self) -> list[MessageFinished]:
        return [e for e in self.events if isinstance(e, MessageFinished)]


def decode(
    encoding: HarmonyEncoding,
    tokens: Sequence[int],
    end: StopReason = StopReason.RETURN,
    **options: Any,
) -> Decoded:
    """Feed ``tokens`` to a fresh decoder; end with ``end`` if the stream did not end the turn."""
    decoder = StreamDecoder(encoding, raw_tokens=False, **options)
    result = Decoded()
    for token in tokens:
        result.events.extend(decoder.feed(token))
    result.events.extend(decoder.finish(end))
    return result


class ForceTokens:
    """A llama-cpp-python logits processor that makes the model emit ``sequence`` exactly."""

    def __init__(self, sequence: Sequence[int]) -> None:
        self.sequence = list(sequence)
        self.position = 0

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        forced = np.full_like(scores, -np.inf)
        token = self.sequence[min(self.position, len(self.sequence) - 1)]
        forced[token] = 0.0
        self.position += 1
        return forced
