"""Write a gpt-oss GGUF that llama.cpp loads like the real models: tiny test models, pocket models.

The file carries the full o200k_harmony vocabulary (tokens, types and BPE merges derived from the
tiktoken ranks, pre-tokenizer ``gpt-4o``) and the ``gpt-oss`` architecture's hyper-parameters,
including its YaRN rope scaling. Tensors are given under their GGUF names as numpy arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from gguf import GGMLQuantizationType, GGUFWriter, RopeScalingType
from gguf.quants import quantize

from harmony_chat.gguf.tokenizer import derive_merges, harmony_vocabulary
from harmony_chat.harmony import tokens as tk

ARCHITECTURE = "gpt-oss"
Array = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class GptOssShape:
    """Hyper-parameters of a gpt-oss model (defaults: the tiny test and pocket models)."""

    vocab_size: int = tk.VOCAB_SIZE
    hidden_size: int = 64
    layers: int = 2
    heads: int = 4
    kv_heads: int = 1
    head_dim: int = 16
    intermediate_size: int = 64
    experts: int = 4
    experts_per_token: int = 2
    sliding_window: int = 128
    context_length: int = 131072
    rope_theta: float = 150000.0
    rope_factor: float = 32.0
    rope_original_context: int = 4096
    rms_norm_eps: float = 1e-5


def random_tensors(shape: GptOssShape, seed: int = 0, scale: float = 0.02) -> dict[str, Array]:
    """Return random weights for every tensor a gpt-oss GGUF needs, under GGUF names."""
    rng = np.random.default_rng(seed)

    def rand(*dims: int) -> Array:
        return (rng.standard_normal(dims) * scale).astype(np.float32)

    h, e, f = shape.hidden_size, shape.experts, shape.intermediate_size
    q, kv = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
    tensors: dict[str, Array] = {
        "token_embd.weight": rand(shape.vocab_size, h),
        "output.weight": rand(shape.vocab_size, h),
        "output_norm.weight": np.ones(h, dtype=np.float32),
    }
    for layer in range(shape.layers):
        block = {
            "attn_norm.weight": np.ones(h, dtype=np.float32),
            "post_attention_norm.weight": np.ones(h, dtype=np.float32),
            "attn_q.weight": rand(q, h),
            "attn_q.bias": rand(q),
            "attn_k.weight": rand(kv, h),
            "attn_k.bias": rand(kv),
            "attn_v.weight": rand(kv, h),
            "attn_v.bias": rand(kv),
            "attn_output.weight": rand(h, q),
            "attn_output.bias": rand(h),
            "attn_sinks.weight": rand(shape.heads),
            "ffn_gate_inp.weight": rand(e, h),
            "ffn_gate_inp.bias": rand(e),
            "ffn_gate_exps.weight": rand(e, f, h),
            "ffn_gate_exps.bias": rand(e, f),
            "ffn_up_exps.weight": rand(e, f, h),
            "ffn_up_exps.bias": rand(e, f),
            "ffn_down_exps.weight": rand(e, h, f),
            "ffn_down_exps.bias": rand(e, h),
        }
        tensors.update({f"blk.{layer}.{name}": value for name, value in block.items()})
    return tensors


_DEFAULT_TYPES = {"token_embd.weight": GGMLQuantizationType.Q8_0, "output.weight": GGMLQuantizationType.Q8_0}


def write_gpt_oss_gguf(
    path: Path,
    shape: GptOssShape,
    tensors: Mapping[str, Array],
    ranks: Sequence[bytes],
    *,
    name: str = "tiny-gpt-oss",
    quant_types: Mapping[str, GGMLQuantizationType] | None = None,
    chat_template: str | None = None,
    merges: Sequence[str] | None = None,
    metadata: Mapping[str, str] | None = None,
) -> Path:
    """Write a gpt-oss GGUF file.

    Args:
        path: where to write.
        shape: the hyper-parameters.
        tensors: every tensor under its GGUF name (see :func:`random_tensors`).
        ranks: the o200k_base token bytes in rank order (199,998 of them).
        name: ``general.name``.
        quant_types: quantization per tensor name (default: Q8_0 for the embedding and output
            matrices; ``{}`` keeps everything F32). Other tensors stay F32.
        chat_template: an optional Jinja chat template (``tokenizer.chat_template``).
        merges: precomputed BPE merges (derived from ``ranks`` when None).
        metadata: extra string keys, e.g. what the model was trained on.
    """
    writer = GGUFWriter(str(path), ARCHITECTURE)
    writer.add_name(name)
    writer.add_context_length(shape.context_length)
    writer.add_embedding_length(shape.hidden_size)
    writer.add_block_count(shape.layers)
    writer.add_feed_forward_length(shape.intermediate_size)
    writer.add_head_count(shape.heads)
    writer.add_head_count_kv(shape.kv_heads)
    writer.add_key_length(shape.head_dim)
    writer.add_value_length(shape.head_dim)
    writer.add_rope_dimension_count(shape.head_dim)
    writer.add_rope_freq_base(shape.rope_theta)
    writer.add_rope_scaling_type(RopeScalingType.YARN)
    writer.add_rope_scaling_factor(shape.rope_factor)
    writer.add_rope_scaling_orig_ctx_len(shape.rope_original_context)
    writer.add_layer_norm_rms_eps(shape.rms_norm_eps)
    writer.add_expert_count(shape.experts)
    writer.add_expert_used_count(shape.experts_per_token)
    writer.add_expert_feed_forward_length(shape.intermediate_size)
    writer.add_sliding_window(shape.sliding_window)

    strings, types = harmony_vocabulary(ranks)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-4o")
    writer.add_token_list(strings)
    writer.add_token_types(types)
    writer.add_token_merges(list(merges) if merges is not None else derive_merges(ranks))
    writer.add_bos_token_id(tk.STARTOFTEXT)
    writer.add_eos_token_id(tk.RETURN)
    writer.add_pad_token_id(tk.ENDOFTEXT)
    if chat_template is not None:
        writer.add_chat_template(chat_template)
    for key, text in (metadata or {}).items():
        writer.add_string(key, text)

    kinds = _DEFAULT_TYPES if quant_types is None else quant_types
    for tensor_name, value in tensors.items():
        if (kind := kinds.get(tensor_name)) is not None:
            writer.add_tensor(tensor_name, quantize(value, kind), raw_dtype=kind)
        else:
            writer.add_tensor(tensor_name, np.ascontiguousarray(value, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
