"""What a request asks of the sampler, as :class:`SamplingParams` fields, checked against what the engine can do.

Each request model's ``sampling_overrides()`` maps the fields it sets (``max_tokens``,
``temperature``, ``top_p``...) to their values; the turn's sampling is the server's with them
merged in (``dataclasses.replace``). ``frequency_penalty`` and ``presence_penalty`` (llama.cpp in
process and every remote engine), ``logit_bias`` (llama.cpp in process, llama-server, vLLM) and
``logprobs`` with ``top_logprobs`` (llama.cpp in process) are honoured where the backend says it
can (``supports_*`` in :mod:`harmony_chat.backends.base`); elsewhere the request gets a 400 naming
the parameter rather than an answer that silently ignored it. A penalty of 0 asks for nothing and
is always accepted. ``top_k`` and ``min_p`` need no check: every model backend samples with them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harmony_chat.backends.base import ModelBackend
from harmony_chat.backends.logits import MAX_TOP_LOGPROBS
from harmony_chat.harmony import tokens as tk
from harmony_chat.server.errors import ApiError

SamplingOverrides = Mapping[str, Any]
""":class:`~harmony_chat.backends.base.SamplingParams` field name to the value a request set for it."""

MAX_LOGIT_BIAS_ENTRIES = 1024
"""The most token ids one ``logit_bias`` may bias."""


def given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The overrides among ``values``: those the request set (not None)."""
    return {name: value for name, value in values.items() if value is not None}


def parse_logit_bias(value: Mapping[str, float] | None, param: str = "logit_bias") -> dict[int, float] | None:
    """``logit_bias`` as token ids: ordinary text tokens only, biases from -100 to 100.

    Raises:
        ApiError: 400 for a key that is not a token id, a harmony special token (biasing one
            would break the format the server parses), a bias out of range, or too many entries.
    """
    if not value:
        return None
    if len(value) > MAX_LOGIT_BIAS_ENTRIES:
        raise ApiError(400, f"{param} may bias at most {MAX_LOGIT_BIAS_ENTRIES} tokens", param=param)
    bias: dict[int, float] = {}
    for key, amount in value.items():
        if not key.isdigit() or int(key) >= tk.FIRST_SPECIAL:
            raise ApiError(400, f"{param}: {key[:20]!r} is not the id of an ordinary (non-special) token", param=param)
        if not -100 <= amount <= 100:
            raise ApiError(400, f"{param}: the bias of {key} must be between -100 and 100", param=param)
        bias[int(key)] = float(amount)
    return bias


def parse_logprobs(logprobs: bool | None, top_logprobs: int | None) -> int | None:
    """The top alternatives asked for with ``logprobs: true`` (0 by default), or None when not asked.

    Raises:
        ApiError: 400 for ``top_logprobs`` without ``logprobs: true`` or out of 0 to 20.
    """
    if top_logprobs is not None and not 0 <= top_logprobs <= MAX_TOP_LOGPROBS:
        raise ApiError(400, f"top_logprobs must be between 0 and {MAX_TOP_LOGPROBS}", param="top_logprobs")
    if not logprobs:
        if top_logprobs:
            raise ApiError(400, "top_logprobs needs logprobs: true", param="top_logprobs")
        return None
    return top_logprobs or 0


def check_sampling(overrides: SamplingOverrides, backend: ModelBackend) -> None:
    """Refuse what the backend cannot honour among a request's sampling overrides.

    Raises:
        ApiError: 400 naming the first parameter the backend cannot honour.
    """
    engine = backend.name
    for param in ("frequency_penalty", "presence_penalty"):
        if overrides.get(param) and not backend.supports_penalties:
            raise ApiError(400, f"{param} is not supported by the {engine} backend", param=param)
    if overrides.get("logit_bias") and not backend.supports_logit_bias:
        raise ApiError(400, f"logit_bias is not supported by the {engine} backend", param="logit_bias")
    if overrides.get("logprobs") is not None and not backend.supports_logprobs:
        raise ApiError(400, f"logprobs are not available from the {engine} backend", param="logprobs")
