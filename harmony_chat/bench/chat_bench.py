"""A five-turn chat two ways on one loaded model, for KV-cache reuse and time to first token.

harmony-chat's prompt-prefix policy (with the history prefilled between turns) against
llama-cpp-python's ``create_chat_completion`` with the model's built-in chat template (what other
llama-cpp-python front ends use). Both generate the same number of tokens per turn, greedily.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.chat.conversation import ChatConversation
from harmony_chat.generation.turn import TurnStats
from harmony_chat.harmony.session import ChatSession

USER_TURNS = (
    "Hello! Can you help me plan a small Python project?",
    "It should count the words in a text file.",
    "Add an option to ignore case.",
    "How would I test it?",
    "Summarise the plan in three bullet points.",
)


@dataclass(frozen=True, slots=True)
class TurnFigures:
    """One turn of the chat: prompt size, how much of it was evaluated, and time to first token."""

    turn: int
    prompt_tokens: int
    evaluated: int
    """Prompt tokens evaluated after the message was sent (on the way to the first token)."""
    ttft_s: float
    prefilled: int = 0
    """Tokens evaluated ahead, while the previous answer was read (harmony-chat only)."""

    @property
    def reused_share(self) -> float:
        """Fraction of the prompt taken from the KV cache."""
        return 1 - self.evaluated / self.prompt_tokens if self.prompt_tokens else 0.0


def harmony_chat_turns(backend: LlamaCppBackend, encoding: Any, tokens: int) -> list[TurnFigures]:
    """Five turns through harmony-chat's conversation core (session, backend, decoder, prefill)."""
    backend.llama.reset()
    sampling = SamplingParams(temperature=0.0, max_tokens=tokens)
    chat = ChatConversation(ChatSession(encoding), backend, sampling=sampling, raw_tokens=False)
    figures = []
    prefilled = 0
    for number, text in enumerate(USER_TURNS, start=1):
        stats = [e for e in chat.send(text) if isinstance(e, TurnStats)][-1].stats
        figures.append(TurnFigures(number, stats.prompt_tokens, stats.prompt_tokens_evaluated, stats.ttft_s, prefilled))
        prefilled = chat.prefill()
    return figures


def template_turns(backend: LlamaCppBackend, tokens: int) -> list[TurnFigures] | None:
    """Five turns through ``create_chat_completion`` (None if the model carries no chat template)."""
    llm = backend.llama
    if "tokenizer.chat_template" not in llm.metadata:
        return None
    llm.reset()
    messages: list[dict[str, str]] = []
    figures = []
    for number, text in enumerate(USER_TURNS, start=1):
        messages.append({"role": "user", "content": text})
        llm.evaluated = 0
        started = time.perf_counter()
        ttft, prompt_tokens, evaluated, parts = 0.0, 0, 0, []
        stream = llm.create_chat_completion(messages=messages, max_tokens=tokens, temperature=0.0, stream=True)
        for chunk in stream:
            if not ttft:
                ttft = time.perf_counter() - started
                prompt_tokens, evaluated = llm.n_tokens, llm.evaluated
            parts.append(chunk["choices"][0]["delta"].get("content") or "")
        messages.append({"role": "assistant", "content": "".join(parts)})
        figures.append(TurnFigures(number, prompt_tokens, evaluated, ttft))
    return figures
