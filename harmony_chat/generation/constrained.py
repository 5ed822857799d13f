"""Tool-call arguments that always parse, and tool calls that always come: grammars switched on mid-turn.

When the model opens a call with ``<|constrain|>json`` to a function whose parameters are known,
the stream is restarted from the tokens generated so far with ``SamplingParams.json_schema`` set,
so a backend with grammar support (llama.cpp, llama-server, vLLM, SGLang) can only produce
arguments of that schema. A ``final`` message is constrained the same way when the turn has a
response format's schema. The restart costs one re-evaluated token; the KV cache keeps the rest.

A forced call (``tool_choice`` ``required`` or a named function) ends the turn with a call to one
of the given functions, after any analysis. A backend that samples under harmony's grammar
(llama.cpp in process) is handed the allowed headers and writes them itself; elsewhere the stream
writes them: it opens the analysis, and when the analysis ends it writes the call's header (for
one function), or writes ``to=functions.`` and lets the engine choose among the names under its
grammar (``SamplingParams.choices``) before writing the rest; the arguments follow under the
function's schema either way.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Collection, Generator, Mapping, Sequence
from dataclasses import replace

from harmony_chat.backends.base import GenerationStats, ModelBackend, SamplingParams
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.events import MessageFinished, MessageStarted

FUNCTIONS = "functions."
ANY_ARGUMENTS: Mapping[str, object] = {"type": "object"}
"""The arguments' schema of a forced call to a function that declares none."""


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
        required_calls: the turn must end with a call to one of these (``functions.<name>``).
        encoding: the harmony encoding (to write a forced call's header where the backend does not).
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
        required_calls: Sequence[str] | None = None,
        encoding: object | None = None,
    ) -> None:
        self.backend = backend
        self.prompt = list(prompt)
        self.sampling = sampling
        self.stop_ids = stop_ids
        self.should_stop = should_stop
        self.schemas = dict(schemas) if backend.supports_json_schema else {}
        self.final_schema = final_schema if backend.supports_json_schema else None
        self.generated: list[int] = []
        self.constrained_tokens = 0
        """Tokens generated under a grammar (for ``bench``)."""
        self._switch: Mapping[str, object] | None = None
        self._schema: Mapping[str, object] | None = None
        self._calls: list[GenerationStats] = []
        self._stream: Generator[int, None, None] | None = None
        self._forced = _ForcedCall(self, list(required_calls), encoding) if required_calls else None
        if self._forced is not None and backend.supports_json_schema:
            for name in required_calls or ():
                self.schemas.setdefault(name, ANY_ARGUMENTS)

    def on_event(self, event: object) -> None:
        """Watch the decoder: a JSON call to a known function, or a final with a schema, switches the grammar on."""
        if self._forced is not None:
            self._forced.on_event(event)
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
            bursts=None
            if any(call.bursts is None for call in self._calls)
            else sum(call.bursts or 0 for call in self._calls),
        )

    def __iter__(self) -> Generator[int, None, None]:
        sampling = self.sampling
        forced = self._forced
        if forced is not None:
            sampling = forced.sampling(sampling)
        while True:
            if forced is not None:
                for token in forced.take_written():
                    self.generated.append(token)
                    yield token
                if self._switch is not None:  # the header just written opened a call under a grammar
                    self._schema, self._switch = self._switch, None
                    sampling = replace(self.sampling, json_schema=self._schema)
                sampling = forced.sampling(sampling)
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
                    if forced is not None and not forced.take(token):
                        break  # the forced call writes what comes next
                    self.generated.append(token)
                    if self._schema is not None:
                        self.constrained_tokens += 1
                    yield token
                    if self._switch is not None or (forced is not None and forced.pending):
                        break
                else:
                    if forced is None or not forced.stream_ended():
                        return
            finally:
                self._stream.close()
            if self._switch is not None:
                self._schema, self._switch = self._switch, None
            sampling = replace(self.sampling, json_schema=self._schema)

    async def groups(self) -> AsyncGenerator[list[int], None]:
        """The turn's ids on the event loop (backends with ``streams_on_event_loop``), in groups.

        The same stream as iterating this object gives, a network read at a time: a group ends at
        each special token, so the consumer has acted on it (:meth:`on_event`) before this
        generator goes on, and a grammar switched on by it applies to what follows, exactly as
        token by token.
        """
        sampling = self.sampling
        forced = self._forced
        if forced is not None:
            sampling = forced.sampling(sampling)
        while True:
            if forced is not None:
                for written in _split_at_specials(forced.take_written()):
                    self.generated.extend(written)
                    yield written
                if self._switch is not None:
                    self._schema, self._switch = self._switch, None
                    sampling = replace(self.sampling, json_schema=self._schema)
                sampling = forced.sampling(sampling)
            left = self.sampling.max_tokens - len(self.generated)
            if left <= 0:
                return
            reads = self.backend.agenerate(
                self.prompt + self.generated, replace(sampling, max_tokens=left), self.stop_ids, self.should_stop
            )
            first = True
            interrupted = False
            try:
                async for read in reads:
                    if first:
                        self._calls.append(self.backend.last_stats)
                        first = False
                    group: list[int] = []
                    for token in read:
                        if forced is not None and not forced.take(token):
                            interrupted = True
                            break
                        group.append(token)
                        if self._schema is not None:
                            self.constrained_tokens += 1
                        if token >= tk.FIRST_SPECIAL:
                            self.generated.extend(group)
                            yield group
                            group = []
                            if self._switch is not None or (forced is not None and forced.pending):
                                interrupted = True
                                break
                    if group:
                        self.generated.extend(group)
                        yield group
                    if interrupted:
                        break
                else:
                    if forced is None or not forced.stream_ended():
                        return
            finally:
                await reads.aclose()
            if self._switch is not None:
                self._schema, self._switch = self._switch, None
            sampling = replace(self.sampling, json_schema=self._schema)

    def close(self) -> None:
        """Stop the backend's current stream."""
        if self._stream is not None:
            self._stream.close()


def _split_at_specials(tokens: list[int]) -> list[list[int]]:
    """``tokens`` in groups that each end at a special token (the last one may not)."""
    groups: list[list[int]] = []
    group: list[int] = []
    for token in tokens:
        group.append(token)
        if token >= tk.FIRST_SPECIAL:
            groups.append(group)
            group = []
    if group:
        groups.append(group)
    return groups


class _ForcedCall:
    """Writes a forced call's header for a backend that does not sample under harmony's grammar."""

    def __init__(self, stream: ConstrainedStream, functions: list[str], encoding: object | None) -> None:
        self.stream = stream
        self.functions = functions
        self.guided = bool(getattr(stream.backend, "guards_structure", False))
        self._encode = getattr(encoding, "encode", None)
        self._written: list[int] = []
        self._phase = "done" if self.guided else "start"
        """start -> analysis -> (naming ->) call -> done."""
        self._name: list[int] = []
        if not self.guided and self._encode is not None and stream.prompt[-2:] == [tk.START, tk.ASSISTANT]:
            self._written = self._tokens("<|channel|>analysis<|message|>")
            self._phase = "analysis"

    @property
    def pending(self) -> bool:
        """Whether tokens are waiting to be written (the backend's stream must stop)."""
        return bool(self._written)

    def sampling(self, sampling: SamplingParams) -> SamplingParams:
        """The sampling of the next backend call."""
        if self.guided:
            return replace(sampling, required_calls=tuple(self.functions))
        if self._phase == "naming":
            names = tuple(name.removeprefix(FUNCTIONS) for name in self.functions)
            return replace(sampling, choices=names, json_schema=None)
        return replace(sampling, choices=None)

    def take_written(self) -> list[int]:
        """The tokens to hand on as generated before the next backend call."""
        written, self._written = self._written, []
        return written

    def take(self, token: int) -> bool:
        """Whether the backend's token goes on (a stop while the call is still due is replaced by the call)."""
        if self._phase == "analysis" and token in self.stream.stop_ids:
            self._written = [tk.END, tk.START, *self._call_header()]
            return False
        if self._phase == "naming":
            if token in self.stream.stop_ids or tk.is_special(token):
                self._written = self._tokens(" <|constrain|>json<|message|>")
                self._phase = "call"
                return False
            self._name.append(token)
        return True

    def stream_ended(self) -> bool:
        """The backend's stream ended on its own; whether the forced call still has something to write."""
        if self._phase == "naming":
            self._written = self._tokens(" <|constrain|>json<|message|>")
            self._phase = "call"
        return bool(self._written)

    def on_event(self, event: object) -> None:
        """The analysis ended: the call's header comes next."""
        if self._phase == "analysis" and isinstance(event, MessageFinished) and event.channel == "analysis":
            self._written = [tk.START, *self._call_header()]

    def _call_header(self) -> list[int]:
        if len(self.functions) == 1:
            self._phase = "call"
            return self._tokens(f"assistant<|channel|>commentary to={self.functions[0]} <|constrain|>json<|message|>")
        self._phase = "naming"
        return self._tokens("assistant<|channel|>commentary to=functions.")

    def _tokens(self, text: str) -> list[int]:
        assert self._encode is not None
        return list(self._encode(text, allowed_special="all"))
