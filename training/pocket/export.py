"""Turn a trained transformers ``GptOssForCausalLM`` state dict into a gpt-oss GGUF."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType

from harmony_chat.gguf.writer import Array, GptOssShape, write_gpt_oss_gguf

EMBEDDING_TYPE = GGMLQuantizationType.Q4_0
OUTPUT_TYPE = GGMLQuantizationType.Q5_0
"""Quantization of the two 201088-row matrices."""
ATTENTION_TYPE = GGMLQuantizationType.F16
"""The attention projections; the rest stays F32. Together these keep the file under 25 MB."""
_ATTENTION = ("attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight")

_LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "post_attention_layernorm.weight": "post_attention_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.o_proj.bias": "attn_output.bias",
    "self_attn.sinks": "attn_sinks.weight",
    "mlp.router.weight": "ffn_gate_inp.weight",
    "mlp.router.bias": "ffn_gate_inp.bias",
}


def gguf_tensors(state: Mapping[str, Array], layers: int) -> dict[str, Array]:
    """Map transformers tensor names and layouts to gpt-oss GGUF ones."""
    tensors: dict[str, Array] = {
        "token_embd.weight": state["model.embed_tokens.weight"],
        "output.weight": state["lm_head.weight"],
        "output_norm.weight": state["model.norm.weight"],
    }
    for layer in range(layers):
        prefix, block = f"model.layers.{layer}.", f"blk.{layer}."
        for source, target in _LAYER.items():
            tensors[block + target] = state[prefix + source]
        gate_up = np.swapaxes(state[prefix + "mlp.experts.gate_up_proj"], 1, 2)  # [E, 2F, H]
        gate_up_bias = state[prefix + "mlp.experts.gate_up_proj_bias"]  # [E, 2F]
        tensors[block + "ffn_gate_exps.weight"] = gate_up[:, 0::2, :]
        tensors[block + "ffn_up_exps.weight"] = gate_up[:, 1::2, :]
        tensors[block + "ffn_gate_exps.bias"] = gate_up_bias[:, 0::2]
        tensors[block + "ffn_up_exps.bias"] = gate_up_bias[:, 1::2]
        tensors[block + "ffn_down_exps.weight"] = np.swapaxes(state[prefix + "mlp.experts.down_proj"], 1, 2)
        tensors[block + "ffn_down_exps.bias"] = state[prefix + "mlp.experts.down_proj_bias"]
    return {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in tensors.items()}


def export_gguf(
    state: Mapping[str, Array],
    shape: GptOssShape,
    ranks: Sequence[bytes],
    path: Path,
    metadata: Mapping[str, str],
    name: str = "pocket-gpt-oss",
    logit_scale: float = 1.0,
) -> Path:
    """Write the trained weights as a quantized gpt-oss GGUF, the output norm times ``logit_scale``.

    The output norm's weights meet the output matrix directly, so every logit is multiplied by the
    scale (and the zero ones stay zero): greedy choices stay the same, and sampling at temperature
    ``t`` samples as the trained weights would at ``t / logit_scale``.
    """
    tensors = gguf_tensors(state, shape.layers)
    tensors["output_norm.weight"] = tensors["output_norm.weight"] * np.float32(logit_scale)
    types = {"token_embd.weight": EMBEDDING_TYPE, "output.weight": OUTPUT_TYPE}
    types |= {f"blk.{layer}.{name}": ATTENTION_TYPE for layer in range(shape.layers) for name in _ATTENTION}
    return write_gpt_oss_gguf(path, shape, tensors, ranks, name=name, quant_types=types, metadata=metadata)
