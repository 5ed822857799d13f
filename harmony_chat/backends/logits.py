"""Logits processors for in-process sampling: a token's log probabilities, and a logit bias.

Both follow llama-cpp-python's ``(input_ids, scores) -> scores`` convention, where ``scores`` holds
one logit per token id of the vocabulary. :class:`LogprobRecorder` changes nothing: it keeps the
log-softmax of the logits it sees, so once the token is sampled its log probability and the most
likely alternatives can be read (:meth:`LogprobRecorder.entry`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harmony_chat.backends.base import TokenLogprob

MAX_TOP_LOGPROBS = 20
"""The most alternatives a token's log probabilities report (OpenAI's bound)."""


class LogprobRecorder:
    """Keeps the log-softmax of the latest logits, to report the sampled token's log probabilities.

    Args:
        top: how many most likely tokens to report beside the sampled one (0 to 20).
    """

    def __init__(self, top: int) -> None:
        self.top = max(0, min(MAX_TOP_LOGPROBS, top))
        self._logprobs: Any = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Record the log-softmax of ``scores``; return them unchanged."""
        logits = np.asarray(scores, dtype=np.float64)
        finite = logits[np.isfinite(logits)]
        peak = finite.max() if finite.size else 0.0
        shifted = logits - peak
        self._logprobs = shifted - np.log(np.exp(shifted).sum())
        return scores

    def entry(self, token_id: int) -> TokenLogprob | None:
        """The log probabilities of ``token_id``, sampled from the logits seen last (None before any)."""
        logprobs = self._logprobs
        if logprobs is None or not 0 <= token_id < len(logprobs):
            return None
        top: tuple[tuple[int, float], ...] = ()
        if self.top:
            best = np.argpartition(logprobs, -self.top)[-self.top :]
            ordered = best[np.argsort(-logprobs[best], kind="stable")]
            top = tuple((int(index), float(logprobs[index])) for index in ordered)
        return TokenLogprob(token_id, float(logprobs[token_id]), top)


class LogitBias:
    """Adds a fixed bias to the logits of some token ids (OpenAI's ``logit_bias``).

    Args:
        bias: the bias by token id; ids beyond the vocabulary are ignored.
    """

    def __init__(self, bias: Mapping[int, float]) -> None:
        self.ids = np.fromiter(bias.keys(), dtype=np.int64, count=len(bias))
        self.values = np.fromiter(bias.values(), dtype=np.float32, count=len(bias))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """``scores`` with the bias added."""
        inside = self.ids < len(scores)
        scores[self.ids[inside]] += self.values[inside]
        return scores
