"""The llama.cpp backend: a local gpt-oss GGUF run in-process by llama-cpp-python.

Token ids go in and come out directly: llama.cpp's chat template and its tokenizer are never
used for user text (harmony renders the prompt). ``llama_cpp`` is imported only in :meth:`load`.
"""

from __future__ import annotations

import ctypes
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from harmony_chat.backends.base import GenerationStats, ModelBackend, ModelInfo, SamplingParams
from harmony_chat.backends.logits import LogitBias, LogprobRecorder
from harmony_chat.errors import ModelError
from harmony_chat.gguf.inspect import check_gguf_file
from harmony_chat.harmony.header_mask import header_masks
from harmony_chat.harmony.structure import Allowed, StructureGuard

if TYPE_CHECKING:
    from openai_harmony import HarmonyEncoding

GPT_OSS_ARCHITECTURE = "gpt-oss"
FIRST_SPECIAL_ID = 199998
"""Every id from here on is a special or reserved token (see ``harmony_chat.harmony.tokens``)."""
SPECIAL_CHECK_IDS = [200006, 200008, 200012, 200002, 200005, 200007]
SPECIAL_CHECK_TEXT = b"<|start|><|message|><|call|><|return|><|channel|><|end|>"
TOKENIZER_SAMPLE = "Harmony check: the quick brown fox, 2 + 2 = 4; naïve café 東京 🙂"

LogitsProcessor = Callable[[Any, Any], Any]
"""``(input_ids, scores) -> scores``, as llama-cpp-python calls it."""


LLAMA_LOG: deque[str] = deque(maxlen=200)
"""The latest lines llama.cpp logged; shown in debug views and used to explain load failures."""
_log_callback: Any = None


def _capture_llama_log(llama_cpp: Any) -> None:
    """Route llama.cpp's log into :data:`LLAMA_LOG` instead of the terminal (installed once)."""
    global _log_callback
    if _log_callback is not None:
        return

    @llama_cpp.llama_log_callback
    def callback(level: int, text: bytes, user_data: Any) -> None:
        LLAMA_LOG.append(text.decode("utf-8", errors="replace"))

    _log_callback = callback
    llama_cpp.llama_log_set(callback, ctypes.c_void_p(0))


def _last_error_line() -> str:
    lines = [line.strip() for line in LLAMA_LOG if line.strip()]
    return lines[-1] if lines else "no details"


def _counting_llama(llama_class: type) -> type:
    """Subclass ``Llama`` so the backend can see how many prompt tokens each call evaluates."""

    class CountingLlama(llama_class):
        evaluated = 0
        """Tokens evaluated since the counter was last reset (the first call of a generation is the prompt)."""

        def eval(self, tokens: Sequence[int]) -> None:
            self.evaluated += len(tokens)
            super().eval(tokens)

    return CountingLlama


class JsonSpecialGuard:
    """Keeps special tokens out of grammar-constrained JSON until the JSON is complete.

    llama.cpp's grammar accepts a special token whose text fits a JSON string (``<|end|>`` inside
    ``"…"``), which would end the message mid-value. This logits processor masks every special
    token while the text generated so far is not yet a whole JSON value; once it is, the grammar
    itself only lets end-of-generation tokens through.
    """

    def __init__(self, llm: Any, prompt_length: int) -> None:
        self.llm = llm
        self.prompt_length = prompt_length

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Mask the special tokens unless the JSON generated so far is complete."""
        generated = [int(token) for token in input_ids[self.prompt_length :]]
        text = self.llm.detokenize(generated, special=False) if generated else b""
        try:
            json.loads(text)
        except ValueError:
            scores[FIRST_SPECIAL_ID:] = -np.inf
        return scores


class StructureMask:
    """Masks the tokens harmony's grammar does not allow next, special or header words (a :class:`StructureGuard`)."""

    def __init__(self, guard: StructureGuard, prompt_length: int) -> None:
        self.guard = guard
        self.seen = prompt_length
        self._kept: dict[tuple[frozenset[int], int | None], tuple[Any, Any]] = {}
        """Kept ids per allowed set; each entry holds the words array its key's id names."""

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """Follow the tokens generated since the last call, then mask what may not come next."""
        for token in input_ids[self.seen :]:
            self.guard.advance(int(token))
        self.seen = len(input_ids)
        allowed = self.guard.allowed()
        if allowed.refused is not None:  # most words may come: mask the others
            for refused in allowed.refused:
                scores[refused] = -np.inf
            kept = self._kept_ids(Allowed(allowed.specials, text=True))
            values = scores[kept]
            scores[FIRST_SPECIAL_ID:] = -np.inf
            scores[kept] = values
            return scores
        kept = self._kept_ids(allowed)
        values = scores[kept]
        if allowed.text and allowed.words is None:
            scores[FIRST_SPECIAL_ID:] = -np.inf
        else:
            scores[:] = -np.inf
        scores[kept] = values
        return scores

    def _kept_ids(self, allowed: Allowed) -> Any:
        """The ids that keep their logits: the allowed specials, and a header's allowed words."""
        key = (allowed.specials, None if allowed.words is None else id(allowed.words))
        found = self._kept.get(key)
        if found is None:
            ids = sorted(allowed.specials)
            words = allowed.words if allowed.words is not None and allowed.text else np.empty(0, dtype=np.intp)
            found = self._kept[key] = (np.concatenate([np.array(ids, dtype=np.intp), words]), allowed.words)
        return found[0]


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
        self._grammars: dict[str, Any] = {}
        self._encoding: HarmonyEncoding | None = None

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
        _capture_llama_log(llama_cpp)
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
                f"llama.cpp could not load {self.model_path.name}: {error} ({_last_error_line()})"
            ) from error
        self._check_vocabulary()
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
        processors: list[LogitsProcessor] = [recorder] if recorder is not None else []  # the model's own
        if sampling.logit_bias:
            processors.append(LogitBias(sampling.logit_bias))
        if self.logits_processor is not None:
            processors.append(self.logits_processor)
        if sampling.harmony_structure and self._encoding is not None:
            processors.append(StructureMask(StructureGuard(self._encoding, prompt), len(prompt)))
        if sampling.json_schema is not None:
            processors.append(JsonSpecialGuard(llm, len(prompt)))
        stream = llm.generate(
            list(prompt),
            temp=sampling.temperature,
            top_p=sampling.top_p,
            top_k=sampling.top_k,
            min_p=sampling.min_p,
            repeat_penalty=1.0,
            frequency_penalty=sampling.frequency_penalty,
            presence_penalty=sampling.presence_penalty,
            logits_processor=processors or None,
            grammar=self._grammar(sampling.json_schema),
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
                self.last_token_logprob = recorder.entry(token) if recorder is not None else None
                yield token
                if token in stop_ids:
                    break
        finally:
            stream.close()

    def _grammar(self, schema: Mapping[str, object] | None) -> Any:
        """llama.cpp's grammar for JSON of ``schema`` (built once per schema), or None.

        A schema llama.cpp cannot express leaves the tokens unconstrained; the decoder still
        checks the arguments and a malformed call is never run.
        """
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar  # type: ignore[attr-defined]

            try:
                self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
            except Exception:  # llama-cpp-python raises several kinds for schemas it cannot convert
                self._grammars[key] = None
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
        """Free the llama.cpp model and context."""
        if self._llm is not None:
            self._llm.close()
            self._llm = None
