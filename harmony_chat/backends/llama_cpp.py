"""The llama.cpp backend: a local gpt-oss GGUF run in-process by llama-cpp-python.

Token ids go in and come out directly: llama.cpp's chat template and its tokenizer are never
used for user text (harmony renders the prompt). ``llama_cpp`` is imported only in :meth:`load`.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams, TokenLogprob
from harmony_chat.backends.grammar_check import GrammarCheck
from harmony_chat.backends.llama_log import capture_llama_log, last_error_line
from harmony_chat.backends.llama_sampler import (
    JSON_STOPS,
    GuardedSampler,
    HarmonyStage,
    LogitsProcessor,
    SamplerCosts,
    StructureMask,
)
from harmony_chat.backends.logits import LogitBias, LogprobRecorder
from harmony_chat.backends.schema_errors import UnenforceableSchema
from harmony_chat.backends.schema_grammar import schema_grammar
from harmony_chat.errors import ModelError
from harmony_chat.gguf.inspect import check_gguf_file
from harmony_chat.harmony.header_mask import header_masks
from harmony_chat.harmony.structure import StructureGuard, call_headers

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

GPT_OSS_ARCHITECTURE = "gpt-oss"
SPECIAL_CHECK_IDS = [200006, 200008, 200012, 200002, 200005, 200007]
SPECIAL_CHECK_TEXT = b"<|start|><|message|><|call|><|return|><|channel|><|end|>"
TOKENIZER_SAMPLE = "Harmony check: the quick brown fox, 2 + 2 = 4; naïve café 東京 🙂"


def _counting_llama(llama_class: type) -> type:
    """Subclass ``Llama`` to count the prompt tokens each call evaluates, and to sample under harmony's grammar."""
    import llama_cpp

    class CountingLlama(llama_class):
        evaluated = 0
        """Tokens evaluated since the counter was last reset (the first call of a generation is the prompt)."""
        harmony_stage: HarmonyStage | None = None
        """What the next ``generate`` samples under (None: llama-cpp-python's own sampler)."""

        def eval(self, tokens: Sequence[int]) -> None:
            self.evaluated += len(tokens)
            super().eval(tokens)

        def _init_sampler(self, **kwargs: Any) -> Any:
            stage = self.harmony_stage
            if stage is None:
                return super()._init_sampler(**kwargs)

            def build(processors: list[LogitsProcessor] | None) -> Any:
                return super(CountingLlama, self)._init_sampler(
                    **{**kwargs, "logits_processor": processors, "grammar": None}
                )

            penalized = kwargs.get("frequency_penalty") or kwargs.get("presence_penalty")
            penalized = penalized or kwargs.get("repeat_penalty", 1.0) != 1.0
            window = self.last_n_tokens_size if penalized else 0
            guarded = GuardedSampler.create(llama_cpp, build, stage, window)
            if guarded is not None:
                return guarded
            from llama_cpp import LlamaGrammar  # type: ignore[attr-defined]

            grammar = LlamaGrammar.from_string(stage.grammar.grammar) if stage.grammar is not None else None
            return super()._init_sampler(**{**kwargs, "logits_processor": [stage.process], "grammar": grammar})

    return CountingLlama


def _chained(processors: list[LogitsProcessor]) -> LogitsProcessor:
    """One logits processor running ``processors`` in order."""
    if len(processors) == 1:
        return processors[0]

    def run(input_ids: Any, scores: Any) -> Any:
        for processor in processors:
            scores = processor(input_ids, scores)
        return scores

    return run


class LlamaCppBackend(ModelBackend):
    """Runs a gpt-oss GGUF with llama-cpp-python.

    Args:
        model_path: the GGUF file.
        context_size: ``n_ctx``.
        gpu_layers: layers to offload (-1 for all).
        threads: CPU threads (None: llama.cpp's default).
        flash_attn: use flash attention.
        logits_processor: optional ``(input_ids, scores) -> scores`` hook (constrained decoding,
            tests that force tokens).
    """

    name = "llama.cpp"
    supports_json_schema = True
    guards_structure = True
    native_generation = True
    supports_penalties = True
    supports_logit_bias = True
    supports_logprobs = True

    def __init__(
        self,
        model_path: Path,
        *,
        context_size: int = 16384,
        gpu_layers: int = 0,
        threads: int | None = None,
        flash_attn: bool = False,
        logits_processor: LogitsProcessor | None = None,
    ) -> None:
        super().__init__()
        self.model_path = Path(model_path)
        self.context_size = context_size
        self.gpu_layers = gpu_layers
        self.threads = threads
        self.flash_attn = flash_attn
        self.logits_processor = logits_processor
        self._llm: Any = None
        self._info: ModelInfo | None = None
        self._lock = threading.Lock()
        """llama.cpp's context serves one call at a time (a prefill and a turn never overlap)."""
        self._grammars: dict[str, GrammarCheck | None] = {}
        self._encoding: HarmonyEncoding | None = None
        self._eog: frozenset[int] = frozenset()
        """The JSON stops the model treats as end of generation (a grammar lets only those end it)."""
        self.sampler_costs: SamplerCosts | None = None
        """When set (by a benchmark), the sampler adds up where its time goes here."""

    @property
    def info(self) -> ModelInfo:
        """What the loaded model is."""
        if self._info is None:
            raise RuntimeError("the model is not loaded")
        return self._info

    @property
    def llama(self) -> Any:
        """The underlying ``llama_cpp.Llama`` (for benchmarks and checks)."""
        return self._llm

    def load(self) -> ModelInfo:
        """Load the GGUF after checking it is a gpt-oss model whose tokens agree with harmony's."""
        architecture = check_gguf_file(self.model_path)
        if architecture != GPT_OSS_ARCHITECTURE:
            raise ModelError(
                f"{self.model_path} is a GGUF of architecture {architecture!r}, not gpt-oss; "
                "harmony-chat runs gpt-oss-20b and gpt-oss-120b"
            )
        try:
            import llama_cpp
        except ImportError as error:
            raise ModelError(f"llama-cpp-python is not installed ({error})") from error
        capture_llama_log(llama_cpp)
        try:
            self._llm = _counting_llama(llama_cpp.Llama)(
                model_path=str(self.model_path),
                n_ctx=self.context_size,
                n_gpu_layers=self.gpu_layers,
                n_threads=self.threads,
                flash_attn=self.flash_attn,
                verbose=False,
            )
        except (ValueError, RuntimeError, OSError) as error:
            raise ModelError(
                f"llama.cpp could not load {self.model_path.name}: {error} ({last_error_line()})"
            ) from error
        self._check_vocabulary()
        vocab = self._llm._model.vocab
        self._eog = frozenset(token for token in JSON_STOPS if llama_cpp.llama_vocab_is_eog(vocab, token))
        self.supports_json_schema = self._eog == JSON_STOPS  # else a grammar could not end the message
        if self._encoding is not None:
            header_masks(self._encoding)  # the header grammar's vocabulary, read now rather than in the first turn
        offload = bool(llama_cpp.llama_supports_gpu_offload()) and self.gpu_layers != 0
        self._info = ModelInfo(
            name=self._llm.metadata.get("general.name") or self.model_path.stem,
            backend=self.name,
            context_size=self._llm.n_ctx(),
            gpu_layers=self.gpu_layers,
            gpu_offload=offload,
            path=str(self.model_path),
        )
        return self._info

    def _check_vocabulary(self) -> None:
        """Refuse a model whose special tokens or tokenizer disagree with harmony's."""
        from harmony_chat.harmony.vocab import load_encoding

        specials = self._llm.detokenize(SPECIAL_CHECK_IDS, special=True)
        self._encoding = load_encoding(self.model_path)
        expected = self._encoding.encode(TOKENIZER_SAMPLE)
        actual = self._llm.tokenize(TOKENIZER_SAMPLE.encode(), add_bos=False, special=False)
        if specials != SPECIAL_CHECK_TEXT or list(actual) != list(expected):
            self.close()
            raise ModelError(
                f"{self.model_path.name} does not use harmony's o200k_harmony token ids; "
                "it is not a gpt-oss model harmony-chat can drive"
            )

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Yield token ids from llama.cpp, reusing the KV cache for the shared prompt prefix."""
        llm = self._llm
        if llm is None:
            raise RuntimeError("the model is not loaded")
        with self._lock:
            yield from self._generate(llm, prompt, sampling, stop_ids, should_stop)

    def _generate(
        self,
        llm: Any,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        if sampling.seed is not None:
            llm.set_seed(sampling.seed)
        stats = self.last_stats = GenerationStats(prompt_tokens=len(prompt))
        llm.evaluated = 0
        recorder = LogprobRecorder(sampling.logprobs) if sampling.logprobs is not None else None
        logprobs: deque[TokenLogprob] = deque()
        self.token_logprobs = logprobs if recorder is not None else None
        stage = self._stage(llm, prompt, sampling, recorder)
        llm.harmony_stage = stage
        stream = llm.generate(
            list(prompt),
            temp=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            min_p=sampling.min_p,
            repeat_penalty=1.0,
            frequency_penalty=sampling.frequency_penalty,
            presence_penalty=sampling.presence_penalty,
        )
        started = time.perf_counter()
        first = last = started
        try:
            while stats.generated_tokens < sampling.max_tokens and not should_stop():
                token = next(stream)
                last = time.perf_counter()
                if stats.generated_tokens == 0:
                    first = last
                    stats.prompt_tokens_evaluated = llm.evaluated
                    stats.ttft_s = first - started
                stats.generated_tokens += 1
                stats.decode_s = last - first
                if stage is not None:
                    stage.follow(token)
                if recorder is not None:
                    scored = recorder.entry(token)
                    if scored is not None:
                        logprobs.append(scored)
                yield token
                if token in stop_ids:
                    break
        finally:
            stream.close()
            llm.harmony_stage = None

    def _stage(
        self, llm: Any, prompt: Sequence[int], sampling: SamplingParams, recorder: LogprobRecorder | None
    ) -> HarmonyStage | None:
        """The sampler's first stage for this generation (None: nothing to mask).

        Log probabilities, a logit bias and a test's processor need every token's logits in Python, so
        a generation that asks for one samples each token through the Python stage.
        """
        mask = None
        if sampling.harmony_structure and self._encoding is not None:
            headers = call_headers(self._encoding, sampling.required_calls) if sampling.required_calls else None
            mask = StructureMask(StructureGuard(self._encoding, prompt, headers=headers), len(prompt))
        grammar = self._grammar(sampling.json_schema)
        processors: list[LogitsProcessor] = [recorder] if recorder is not None else []  # the model's own logits
        if sampling.logit_bias:
            processors.append(LogitBias(sampling.logit_bias))
        if self.logits_processor is not None:
            processors.append(self.logits_processor)
        extra = (_chained(processors), lambda: llm._input_ids) if processors else None
        if mask is None and grammar is None and extra is None:
            return None
        if grammar is not None:
            grammar.reset()
        stage = HarmonyStage(mask, grammar, self._eog, extra)
        stage.costs = self.sampler_costs
        return stage

    def _grammar(self, schema: Mapping[str, object] | None) -> GrammarCheck | None:
        """llama.cpp's grammar for JSON of ``schema`` (built once per schema), or None.

        A schema the grammar cannot enforce (:func:`~harmony_chat.backends.schema_grammar.check_enforceable`
        refuses it; the server does so before a turn starts) leaves the tokens unconstrained: the
        decoder still checks the arguments and a malformed call is never run.
        """
        if schema is None or not self.supports_json_schema:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            import llama_cpp

            try:
                grammar = schema_grammar(schema)
            except UnenforceableSchema:
                self._grammars[key] = None
            else:
                self._grammars[key] = GrammarCheck.build(llama_cpp, self._llm._model.vocab, grammar)
        return self._grammars[key]

    def prefill(self, tokens: Sequence[int]) -> int:
        """Evaluate ``tokens`` into the KV cache, reusing the cached prefix; return how many were new.

        It runs ``generate`` up to its first sampled token and stops there, so only the prompt is
        evaluated (the sampled token never is).
        """
        llm = self._llm
        if llm is None or not tokens:
            return 0
        with self._lock:
            llm.evaluated = 0
            stream = llm.generate(list(tokens), temp=0.0)
            try:
                next(stream)
            finally:
                stream.close()
            return int(llm.evaluated)

    def close(self) -> None:
        """Free the llama.cpp model, context and grammars."""
        for grammar in self._grammars.values():
            if grammar is not None:
                grammar.close()
        self._grammars.clear()
        if self._llm is not None:
            self._llm.close()
            self._llm = None
