"""llama.cpp's ``llama-server`` driven with token ids through its native ``POST /completion``.

Targets the llama.cpp vendored in llama-cpp-python 0.3.36 (llama.cpp commit 0c1e570, Oct 2026),
whose ``tools/server/README.md`` and ``server-task.cpp`` / ``server-context.cpp`` this follows:

- ``POST /completion`` takes ``prompt`` as a list of ids (no BOS is added to an id list),
  ``n_predict``, ``stream``, ``return_tokens``, ``cache_prompt`` (default true), ``id_slot``
  (-1: any idle slot, preferring the one whose cache shares the longest prefix), the samplers,
  ``seed``, ``presence_penalty``/``frequency_penalty``, ``logit_bias`` (``[[id, bias], ...]``) and
  ``json_schema`` / ``grammar``. Streamed chunks are ``data: {...}`` lines whose
  ``tokens`` hold the new ids (the end-of-generation token included); the last one has
  ``"stop": true``, ``stop_type`` (``eos``/``limit``/``word``), ``tokens_cached`` (the slot's
  whole cache after the answer) and ``timings.cache_n`` (the prompt tokens reused from the cache,
  which is what harmony-chat reports). The stream of ``/completion`` has no ``[DONE]`` line.
- It stops by itself on the gpt-oss end-of-generation tokens ``<|return|>`` and ``<|call|>``;
  there is no ``stop_token_ids``. Its text fields drop control tokens, so only ids are read.
- ``GET /health`` answers 503 while the model loads; ``GET /props`` gives ``model_path``,
  ``default_generation_settings.n_ctx`` (a slot's context), ``total_slots`` (``--parallel``:
  generations it runs at once, batched) and ``build_info``; ``POST /tokenize`` takes
  ``content``/``add_special``/``parse_special``. ``--api-key`` guards everything but ``/health``
  with ``Authorization: Bearer`` (401 ``{"error": {"code": 401, "type": "authentication_error"}}``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path, PurePath
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote.engine import RemoteBackend, StreamState, constraint, require_int
from harmony_chat.backends.remote.transport import EngineClient, error_message
from harmony_chat.errors import EngineError, EngineStreamError

_vocabulary_lock = threading.Lock()
_token_ids: dict[bytes, int] = {}
_token_texts: list[bytes] = []


def held_tokens(content: str, sent: list[int], held: int) -> list[int]:
    """The ids llama-server generated but did not stream, before the ``sent`` ones of one event.

    A streamed chunk of ``/completion`` carries only its last token's id, but all the text since
    the last chunk: a character split over several tokens arrives as its last token and the whole
    character. The text before the last token's own bytes is the held tokens' bytes; split into
    ``held`` tokens of the vocabulary, those are the ids (a byte's token each where no split
    fits; ``�`` where the bytes are not there, as when the answer stops inside a character).
    """
    ids, texts = _vocabulary()
    data = content.encode("utf-8")
    last = b"".join(texts[token] if 0 <= token < len(texts) else b"" for token in sent)
    before = data[: len(data) - len(last)] if last and data.endswith(last) else b""
    split = _split(before, held, ids)
    if split is not None:
        return split
    return [ids.get("\ufffd".encode(), 0)] * held


def _split(data: bytes, parts: int, ids: dict[bytes, int]) -> list[int] | None:
    """``data`` as exactly ``parts`` tokens of the vocabulary (the longest first token that fits), or None."""
    if parts == 0:
        return [] if not data else None
    for end in range(min(len(data), 64), 0, -1):
        token = ids.get(data[:end])
        if token is not None and (rest := _split(data[end:], parts - 1, ids)) is not None:
            return [token, *rest]
    return None


def _vocabulary() -> tuple[dict[bytes, int], list[bytes]]:
    """Token id by bytes and bytes by id, for the ordinary tokens (read once from the vocabulary file)."""
    with _vocabulary_lock:
        if not _token_texts:
            from harmony_chat.gguf.tokenizer import read_tiktoken
            from harmony_chat.harmony.vocab import ENV_BASE, VOCAB_FILE, load_encoding

            load_encoding()  # resolves the vocabulary folder
            _token_texts.extend(read_tiktoken(Path(os.environ[ENV_BASE]) / VOCAB_FILE))
            _token_ids.update((data, token) for token, data in enumerate(_token_texts))
        return _token_ids, _token_texts


class LlamaServerBackend(RemoteBackend):
    """gpt-oss on a llama-server, token ids in and out.

    Args:
        client: the HTTP client for the server.
        model_name: shown instead of the GGUF's file name when given.
        slot: ``id_slot`` to pin the conversation to (-1 lets the server pick by shared prefix).
    """

    name = "llama-server"
    supports_logit_bias = True

    def __init__(self, client: EngineClient, *, model_name: str | None = None, slot: int = -1) -> None:
        super().__init__(client, model_name=model_name)
        self.slot = slot
        self.total_slots: int | None = None
        """The server's slots (``--parallel``), from ``/props`` (None: it does not say)."""

    def _describe(self) -> tuple[str, int]:
        self.client.call("GET", "/health", doing="checking the server is ready")
        props = self.client.call("GET", "/props", doing="reading the model's properties")
        if not isinstance(props, Mapping):
            raise EngineError(f"{self.client.label} answered /props with something that is not JSON")
        slots = props.get("total_slots")
        self.total_slots = slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None
        settings = props.get("default_generation_settings")
        context = settings.get("n_ctx") if isinstance(settings, Mapping) else None
        path = props.get("model_path")
        name = self.model_name or (PurePath(str(path)).stem if path else props.get("model_alias") or "llama-server")
        return str(name), context if isinstance(context, int) and context > 0 else 0

    def _tokenize(self, text: str) -> list[int]:
        return self._tokenize_with({"content": text, "add_special": False, "parse_special": True})

    @property
    def parallel_slots(self) -> int | None:
        """The server's slots: each runs one generation, all of them batched together (1 when it does not say)."""
        return self.total_slots or 1

    def handles(self, count: int) -> list[RemoteBackend]:
        """``count`` backends, each pinned to a slot of its own (slot ``i`` for the ``i``-th), so each keeps its cache.

        One handle is this backend as it is (``id_slot`` -1 lets the server pick the slot by shared
        prefix); several are copies, this one left as it is.

        Raises:
            EngineError: when the server has fewer slots than ``count``.
        """
        if self.total_slots is not None and count > self.total_slots:
            raise EngineError(
                f"{count} generations at once need {count} slots, and {self.client.label} has "
                f"{self.total_slots}; start it with --parallel {count}, or ask for {self.total_slots} or fewer"
            )
        if count == 1 or self.total_slots is None:
            return super().handles(count)
        handles: list[RemoteBackend] = []
        for slot in range(count):
            twin = self._twin()
            assert isinstance(twin, LlamaServerBackend)
            twin.slot = slot
            handles.append(twin)
        return handles

    def _request(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        schema: Mapping[str, Any] | None,
    ) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "prompt": list(prompt),
            "n_predict": sampling.max_tokens,
            "stream": True,
            "return_tokens": True,
            "cache_prompt": True,
            "id_slot": self.slot,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "top_k": sampling.top_k,
            "min_p": sampling.min_p,
            "typical_p": 1.0,
            "repeat_penalty": 1.0,
            "presence_penalty": sampling.presence_penalty,
            "frequency_penalty": sampling.frequency_penalty,
            "dry_multiplier": 0.0,
            "xtc_probability": 0.0,
        }
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        held = constraint(prompt, sampling, schema)
        if held.grammar is not None:
            body["grammar"] = held.grammar  # the schema's grammar as harmony-chat checked it, not the server's own
        biases: list[list[object]] = [[token, bias] for token, bias in (sampling.logit_bias or {}).items()]
        biases += [[token, False] for token in held.refused]  # later entries win: refused stays refused
        if biases:
            body["logit_bias"] = biases
        if held.ignore_eos:
            body["ignore_eos"] = True
        return "/completion", body

    def prefill(self, tokens: Sequence[int]) -> int:
        """Evaluate ``tokens`` into the server's slot cache now (``n_predict: 0``); return how many were new."""
        if not tokens:
            return 0
        body = {"prompt": list(tokens), "n_predict": 0, "cache_prompt": True, "id_slot": self.slot}
        try:
            answer = self.client.call("POST", "/completion", body, doing="prefilling the cache")
        except EngineError:
            return 0  # a failed warm-up only costs time on the next turn
        timings = answer.get("timings") if isinstance(answer, Mapping) else None
        evaluated = timings.get("prompt_n") if isinstance(timings, Mapping) else None
        return evaluated if isinstance(evaluated, int) else 0

    def _read(self, event: Mapping[str, Any], state: StreamState) -> list[int]:
        if "error" in event:
            raise EngineError(f"{self.client.label} reported an error: {self.client.scrub(error_message(event))}")
        raw = event.get("tokens") or []
        if not isinstance(raw, list):
            raise EngineStreamError(f"{self.client.label} sent tokens that are not a list")
        new = [require_int(t, "a token id", self.client.label) for t in raw]
        predicted = event.get("tokens_predicted")
        if isinstance(predicted, int) and not isinstance(predicted, bool):
            held = predicted - state.predicted - len(new)
            if held > 0:  # tokens of an unfinished UTF-8 character, which the stream never sends
                content = event.get("content")
                new = held_tokens(content if isinstance(content, str) else "", new, held) + new
            state.predicted = max(state.predicted, predicted)
        state.received.extend(new)
        if event.get("stop") is True:
            state.done = True
            timings = event.get("timings")
            cached = timings.get("cache_n") if isinstance(timings, Mapping) else None
            if isinstance(cached, int):
                state.cached = cached
        return new
