"""vLLM driven with token ids through ``POST /v1/completions`` (never its chat or Responses parsers).

Written against vllm-project/vllm main as of Nov 2026 (PyPI 0.33.0): ``vllm/entrypoints/openai/
completion/protocol.py`` (commit 002032ee) and ``completion/serving.py`` (commit 030ea52e):

- ``prompt`` may be a list of ids; ``return_token_ids: true`` (since 0.10.2, PR #22587) puts
  ``prompt_token_ids`` in the first streamed chunk only and the new ids in each chunk's
  ``choices[0].token_ids``; ``skip_special_tokens: false``; ``stop_token_ids``; the finishing
  chunk has ``finish_reason`` (``stop``/``length``/``abort``) and ``stop_reason`` (the stop token
  id, or null when the model's EOS ``<|return|>`` stopped it).
- With ``stream_options.include_usage`` a last chunk with ``choices: []`` carries ``usage``; its
  ``prompt_tokens_details.cached_tokens`` is there only when the server runs with
  ``--enable-prompt-tokens-details``. The stream ends with ``data: [DONE]``; an error mid-stream
  is a ``data: {"error": {"message", "type", "param", "code"}}`` chunk.
- Servers older than 0.10.2 ignore ``return_token_ids``; there the ids come through
  ``logprobs: 0`` with ``return_tokens_as_token_ids: true`` as ``"token_id:N"`` strings.
- ``--api-key`` guards the ``/v1`` paths (401 ``{"error": "Unauthorized"}``); ``/health``,
  ``/version`` and ``/tokenize`` stay open. ``/tokenize`` takes ``prompt`` and
  ``add_special_tokens`` and answers ``{"count", "max_model_len", "tokens"}``.
- With ``--skip-tokenizer-init`` (checked on vLLM 0.32.0, CPU) ``/tokenize`` answers 400 "Tokenizer
  not available when `skip_tokenizer_init=True`" and structured outputs are refused ("Structured
  outputs requires a tokenizer"), while completions on token ids work. A prompt id outside the
  served model's vocabulary is not refused there: it kills the engine (``IndexError`` in the
  embedding, then 500 ``EngineDeadError`` to every request), so the vocabulary is never probed
  with ids; see :meth:`VllmBackend._check_vocabulary`.
- Grammar: ``structured_outputs: {"json": schema}`` or ``{"choice": [...]}`` (older servers:
  ``guided_json``, ``guided_choice``); ``logit_bias`` (-100 .. 100 by token id) keeps special
  tokens out of JSON; ``ignore_eos`` keeps a benchmark's stream going.
- ``presence_penalty``, ``frequency_penalty`` and ``logit_bias`` (OpenAI's map of id strings) are
  the OpenAI completion parameters of the same names.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote.engine import RemoteBackend, StreamState, constraint, require_int
from harmony_chat.backends.remote.transport import EngineClient, error_message
from harmony_chat.errors import EngineError, ModelError
from harmony_chat.harmony import tokens as tk

TOKEN_IDS_SINCE = (0, 10, 2)
"""First vLLM release whose completions return ``token_ids``."""
_TOKEN_ID = re.compile(r"token_id:(\d+)")
TOKENIZER_SKIPPED = "Tokenizer not available"
"""How vLLM's ``/tokenize`` begins its 400 answer when the server runs with ``--skip-tokenizer-init``."""
log = logging.getLogger("harmony_chat.backends")


def parse_version(text: str) -> tuple[int, ...]:
    """Return the leading numbers of a version string (``0.10.2rc1`` -> ``(0, 10, 2)``)."""
    numbers = re.findall(r"\d+", text.split("+")[0])[:3]
    return tuple(int(n) for n in numbers)


class VllmBackend(RemoteBackend):
    """gpt-oss on a vLLM server, token ids in and out."""

    name = "vllm"
    supports_logit_bias = True

    def __init__(self, client: EngineClient, *, model_name: str | None = None) -> None:
        super().__init__(client, model_name=model_name)
        self.ids_via_logprobs = False
        """True on servers older than 0.10.2: ids are read from ``logprobs.tokens``."""
        self.version = ""
        self.card: Mapping[str, Any] = {}
        """The served model's entry in ``/v1/models``."""
        self.vocabulary_note: str | None = None
        """Set when the vocabulary could not be checked (``--skip-tokenizer-init``): what was trusted instead."""

    def _describe(self) -> tuple[str, int]:
        self.client.call("GET", "/health", doing="checking the server is ready")
        version = self.client.call("GET", "/version", doing="reading the version")
        self.version = str(version.get("version", "")) if isinstance(version, Mapping) else ""
        self.ids_via_logprobs = bool(self.version) and parse_version(self.version) < TOKEN_IDS_SINCE
        models = self.client.call("GET", "/v1/models", doing="listing the served models")
        cards = models.get("data") if isinstance(models, Mapping) else None
        if not isinstance(cards, list) or not cards or not all(isinstance(c, Mapping) for c in cards):
            raise EngineError(f"{self.client.label} serves no model (empty /v1/models)")
        names = [str(card.get("id")) for card in cards]
        if self.model_name is None:
            card = cards[0]
            self.model_name = names[0]
        elif self.model_name in names:
            card = cards[names.index(self.model_name)]
        else:
            raise EngineError(f"{self.client.label} does not serve {self.model_name!r}; it serves {', '.join(names)}")
        self.card = card
        context = card.get("max_model_len")
        return self.model_name, context if isinstance(context, int) else 0

    def _check_vocabulary(self, model: str) -> None:
        """Check the tokenizer, or, when vLLM runs without one, trust a model whose name says gpt-oss.

        Under ``--skip-tokenizer-init`` nothing on the server tells the vocabulary, and a probe with
        harmony's ids would kill an engine serving a smaller vocabulary; so the model is taken for
        gpt-oss only when its name or path says so, with :attr:`vocabulary_note` saying what was
        trusted. Such a server also refuses grammars, so JSON schemas are left to the model.
        """
        try:
            super()._check_vocabulary(model)
            return
        except EngineError as error:
            if TOKENIZER_SKIPPED not in str(error):
                raise
        label = self.client.label
        names = " ".join(str(self.card.get(key) or "") for key in ("id", "root")) + " " + model
        if "gpt-oss" not in names.lower().replace("_", "-"):
            raise ModelError(
                f"{label} runs without a tokenizer (--skip-tokenizer-init), so harmony-chat cannot check that "
                f"{model!r} uses harmony's o200k_harmony token ids, and neither its name nor its path says "
                "gpt-oss; restart vLLM without --skip-tokenizer-init"
            )
        self.vocabulary_note = (
            f"{label} runs without a tokenizer (--skip-tokenizer-init): the vocabulary was not checked; "
            f"{model!r} is taken for gpt-oss (o200k_harmony) by its name, and JSON schemas are not enforced "
            "(vLLM needs its tokenizer for grammars)"
        )
        self.supports_json_schema = False
        log.warning("%s", self.vocabulary_note)

    def _tokenize(self, text: str) -> list[int]:
        return self._tokenize_with({"model": self.model_name, "prompt": text, "add_special_tokens": False})

    def _request(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        schema: Mapping[str, Any] | None,
    ) -> tuple[str, dict[str, Any]]:
        body: dict[str, Any] = {
            "model": self.model_name,
            "prompt": list(prompt),
            "max_tokens": sampling.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
            "skip_special_tokens": False,
            "stop_token_ids": sorted(stop_ids),
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "min_p": sampling.min_p,
            "repetition_penalty": 1.0,
            "presence_penalty": sampling.presence_penalty,
            "frequency_penalty": sampling.frequency_penalty,
        }
        if sampling.logit_bias:
            body["logit_bias"] = {str(token): bias for token, bias in sampling.logit_bias.items()}
        if sampling.top_k > 0:
            body["top_k"] = sampling.top_k
        if sampling.seed is not None:
            body["seed"] = sampling.seed
        if self.ids_via_logprobs:
            body.update(logprobs=0, return_tokens_as_token_ids=True)
        else:
            body["return_token_ids"] = True
        held = constraint(prompt, sampling, schema)
        if held.schema is not None:
            if self.ids_via_logprobs:
                body["guided_json"] = dict(held.schema)
            else:
                body["structured_outputs"] = {"json": dict(held.schema)}
        elif held.choices:
            if self.ids_via_logprobs:
                body["guided_choice"] = list(held.choices)
            else:
                body["structured_outputs"] = {"choice": list(held.choices)}
        if held.refused:  # merged with the request's own bias; refused stays refused
            body["logit_bias"] = {**body.get("logit_bias", {}), **{str(token): -100 for token in held.refused}}
        if held.ignore_eos:
            body["ignore_eos"] = True
            body["stop_token_ids"] = []
        return "/v1/completions", body

    def _read(self, event: Mapping[str, Any], state: StreamState) -> list[int]:
        if "error" in event:
            raise EngineError(f"{self.client.label} reported an error: {self.client.scrub(error_message(event))}")
        usage = event.get("usage")
        if isinstance(usage, Mapping):
            details = usage.get("prompt_tokens_details")
            cached = details.get("cached_tokens") if isinstance(details, Mapping) else None
            if isinstance(cached, int):
                state.cached = cached
        choices = event.get("choices") or []
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            return []
        choice = choices[0]
        new = self._ids(choice)
        state.received.extend(new)
        finish = choice.get("finish_reason")
        if finish == "abort":
            raise EngineError(f"{self.client.label} aborted the request")
        if finish is not None:
            state.done = True
            reason = choice.get("stop_reason")
            if finish == "stop":
                state.stop_token = reason if isinstance(reason, int) else tk.RETURN
        return new

    def _ids(self, choice: Mapping[str, Any]) -> list[int]:
        label = self.client.label
        if not self.ids_via_logprobs:
            ids = choice.get("token_ids")
            if ids is None:
                if choice.get("text"):
                    raise EngineError(f"{label} sent text without token ids; it is older than vLLM 0.10.2")
                return []
            if not isinstance(ids, list):
                raise EngineError(f"{label} sent token_ids that are not a list")
            return [require_int(t, "a token id", label) for t in ids]
        logprobs = choice.get("logprobs")
        names = logprobs.get("tokens") if isinstance(logprobs, Mapping) else None
        if names is None:
            return []
        new: list[int] = []
        for name in names:
            match = _TOKEN_ID.fullmatch(str(name))
            if match is None:
                raise EngineError(f"{label} sent a logprob token {str(name)[:30]!r} that is not 'token_id:N'")
            new.append(int(match.group(1)))
        return new
