"""Tool-call arguments that always parse: switch the backend to a JSON-schema grammar mid-turn.

When the model opens a call with ``<|constrain|>json`` to a function whose parameters are known,
the stream is restarted from the tokens generated so far with ``SamplingParams.json_schema`` set,
so a backend with grammar support (llama.cpp, llama-server, vLLM) can only produce arguments of
that schema. A ``final`` message is constrained the same way when the turn has a response
format's schema. The restart costs one re-evaluated token; the KV cache keeps the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from dataclasses import replace

from harmony_chat.backends.base import GenerationStats, ModelBackend, SamplingParams
from harmony_chat.harmony.events import MessageStarted

FUNCTIONS = "functions."


def _function(recipient: str) -> str:
    """``functions.x`` for a call to ``functions.x`` or to a bare ``x``."""
    name = recipient.split("<|", 1)[0].strip()
    return name if name.startswith(FUNCTIONS) else FUNCTIONS + name


class ConstrainedStream:
    """The token ids of one turn, restarted under a grammar when a JSON tool call begins.

    Args:
        backend: the model.
        prompt: the prompt's token ids.
        sampling: sampling parameters (``max_tokens`` counts over the whole turn).
        stop_ids: the generation stop tokens.
        should_stop: polled by the backend.
        schemas: the parameters schema of each function tool, by ``functions.<name>``.
        final_schema: the schema of the final answer (a response format), if any.
    """

    def __init__(
        self,
        backend: ModelBackend,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
        schemas: Mapping[str, Mapping[str, object]],
        final_schema: Mapping[str, object] | None = None,
    ) -> None:
        self.backend = backend
        self.prompt = list(prompt)
        self.sampling = sampling
        self.stop_ids = stop_ids
        self.should_stop = should_stop
        self.schemas = schemas if backend.supports_json_schema else {}
        self.final_schema = final_schema if backend.supports_json_schema else None
        self.generated: list[int] = []
        self.constrained_tokens = 0
        """Tokens generated under a grammar (for ``bench``)."""
        self._switch: Mapping[str, object] | None = None
        self._schema: Mapping[str, object] | None = None
        self._calls: list[GenerationStats] = []
        self._stream: Generator[int, None, None] | None = None

    def on_event(self, event: object) -> None:
        """Watch the decoder: a JSON call to a known function, or a final with a schema, switches the grammar on."""
        if not isinstance(event, MessageStarted) or self._schema is not None:
            return
        if not event.recipient:
            if event.channel == "final" and self.final_schema is not None:
                self._switch = self.final_schema
            return
        if "json" in (event.content_type or ""):
            schema = self.schemas.get(_function(event.recipient))
            if schema is not None and self._schema is None:
                self._switch = schema

    @property
    def stats(self) -> GenerationStats:
        """The turn's figures, over every backend call it took."""
        if len(self._calls) <= 1:
            return self._calls[0] if self._calls else self.backend.last_stats
        first, rest = self._calls[0], self._calls[1:]
        return replace(  # the prompt figures are the first call's; the rest continue the answer
            first,
            generated_tokens=sum(call.generated_tokens for call in self._calls),
            decode_s=first.decode_s + sum(call.ttft_s + call.decode_s for call in rest),
        )

    def __iter__(self) -> Generator[int, None, None]:
        sampling = self.sampling
        while True:
            left = self.sampling.max_tokens - len(self.generated)
            if left <= 0:
                return
            self._stream = self.backend.generate(
                self.prompt + self.generated, replace(sampling, max_tokens=left), self.stop_ids, self.should_stop
            )
            first = True
            try:
                for token in self._stream:
                    if first:  # the backend's figures for this call, which it keeps updating
                        self._calls.append(self.backend.last_stats)
                        first = False
                    self.generated.append(token)
                    if self._schema is not None:
                        self.constrained_tokens += 1
                    yield token
                    if self._switch is not None:
                        break
                else:
                    return
            finally:
                self._stream.close()
            self._schema, self._switch = self._switch, None
            sampling = replace(self.sampling, json_schema=self._schema)

    def close(self) -> None:
        """Stop the backend's current stream."""
        if self._stream is not None:
            self._stream.close()
