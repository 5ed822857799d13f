"""SGLang driven with token ids through its native ``POST /generate``.

Written against sgl-project/sglang main as of Nov 2026 (PyPI 0.5.23): ``python/sglang/srt/
entrypoints/http_server.py`` (commit 0025436e), ``managers/tokenizer_manager.py``,
``managers/schedule_batch.py`` and ``docs/basic_usage/sampling_params.md`` (commit 0a0dd359):

- Request: ``input_ids``, ``stream``, ``sampling_params`` with ``max_new_tokens``,
  ``stop_token_ids``, ``skip_special_tokens``, ``no_stop_trim`` (keep the stop token in the
  output), ``temperature``/``top_p``/``top_k`` (-1: off)/``min_p``, ``json_schema`` (a JSON
  string) or ``regex`` for constrained decoding, ``frequency_penalty``/``presence_penalty``,
  ``logit_bias`` (by token id; harmony-chat uses it only to refuse special tokens inside JSON, and
  refuses requests that ask for their own) and ``ignore_eos``. There is no per-request seed in the
  documented parameters (the server's ``--random-seed`` applies), so none is sent.
- Stream: ``data: {"text", "output_ids", "meta_info"}`` lines, then ``data: [DONE]``;
  ``output_ids`` is cumulative unless the server runs ``--incremental-streaming-output`` (older:
  ``--stream-output``), so harmony-chat compares its length with ``meta_info.completion_tokens``
  to tell which. ``meta_info`` has ``prompt_tokens``, ``cached_tokens`` (the prefix-cache hit),
  and ``finish_reason``: null, ``{"type": "stop", "matched": id}``, ``{"type": "length"}`` or
  ``{"type": "abort", "message"}``. An error mid-stream is ``data: {"error": {"message"}}``.
- ``GET /health`` runs a one-token generation (503 while starting); ``GET /get_model_info``
  names the model; ``GET /v1/models`` gives ``max_model_len``; ``POST /tokenize`` takes
  ``prompt`` and ``add_special_tokens``. ``--api-key`` guards all but ``/health`` (401
  ``{"error": "Unauthorized"}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote.engine import RemoteBackend, StreamState, constraint, require_int
from harmony_chat.backends.remote.transport import error_message
from harmony_chat.errors import EngineError


class SglangBackend(RemoteBackend):
    """gpt-oss on an SGLang server, token ids in and out."""

    name = "sglang"

    def _describe(self) -> tuple[str, int]:
        self.client.call("GET", "/health", doing="checking the server is ready")
        info = self.client.call("GET", "/get_model_info", doing="reading the model's information")
        path = info.get("model_path") if isinstance(info, Mapping) else None
        models = self.client.call("GET", "/v1/models", doing="listing the served models")
        cards = models.get("data") if isinstance(models, Mapping) else None
        card = cards[0] if isinstance(cards, list) and cards and isinstance(cards[0], Mapping) else {}
        name = self.model_name or card.get("id") or path or "sglang"
        context = card.get("max_model_len")
        return str(name), context if isinstance(context, int) else 0

    def _tokenize(self, text: str) -> list[int]:
        return self._tokenize_with({"prompt": text, "add_special_tokens": False})

    def _request(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        schema: Mapping[str, Any] | None,
    ) -> tuple[str, dict[str, Any]]:
        params: dict[str, Any] = {
            "max_new_tokens": sampling.max_tokens,
            "stop_token_ids": sorted(stop_ids),
            "skip_special_tokens": False,
            "no_stop_trim": True,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k if sampling.top_k > 0 else -1,
            "min_p": sampling.min_p,
            "frequency_penalty": sampling.frequency_penalty,
            "presence_penalty": sampling.presence_penalty,
        }
        held = constraint(prompt, sampling, schema)
        if held.schema is not None:
            params["json_schema"] = json.dumps(dict(held.schema))
        elif held.choices:
            params["regex"] = "(" + "|".join(re.escape(choice) for choice in held.choices) + ")"
        if held.refused:
            params["logit_bias"] = {str(token): -100.0 for token in held.refused}
        if held.ignore_eos:
            params["ignore_eos"] = True
            params["stop_token_ids"] = []
        return "/generate", {"input_ids": list(prompt), "sampling_params": params, "stream": True}

    def _read(self, event: Mapping[str, Any], state: StreamState) -> list[int]:
        label = self.client.label
        if "error" in event:
            raise EngineError(f"{label} reported an error: {self.client.scrub(error_message(event))}")
        meta = event.get("meta_info")
        meta = meta if isinstance(meta, Mapping) else {}
        raw = event.get("output_ids") or []
        if not isinstance(raw, list):
            raise EngineError(f"{label} sent output_ids that are not a list")
        ids = [require_int(t, "a token id", label) for t in raw]
        finish = meta.get("finish_reason")
        if state.cumulative is None and state.received:
            total = meta.get("completion_tokens")
            if isinstance(total, int) and finish is None:  # exact until the last event (which may trim the stop)
                state.cumulative = len(ids) == total
            else:
                state.cumulative = ids[: len(state.received)] == state.received
        new = ids[len(state.received) :] if state.cumulative else ids
        state.received.extend(new)
        cached = meta.get("cached_tokens")
        if isinstance(cached, int):
            state.cached = cached
        if isinstance(finish, Mapping):
            kind = finish.get("type")
            if kind == "abort":
                raise EngineError(f"{label} aborted the request: {self.client.scrub(str(finish.get('message', '')))}")
            state.done = True
            matched = finish.get("matched")
            if kind == "stop" and isinstance(matched, int):
                state.stop_token = matched
        return new
