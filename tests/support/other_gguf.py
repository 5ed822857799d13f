"""A tiny GGUF of another architecture (``llama``) with a byte-level vocabulary: not gpt-oss."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGUFWriter

from harmony_chat.gguf.tokenizer import byte_to_unicode

WIDTH = 32
LAYERS = 1


def write_other_vocab_gguf(path: Path) -> Path:
    """Write a 1-layer llama model whose 259-token vocabulary shares nothing with o200k_harmony."""
    spelled = byte_to_unicode()
    tokens = [*(spelled[byte] for byte in range(256)), "ab", "<s>", "</s>"]
    rng = np.random.default_rng(0)

    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer = GGUFWriter(str(path), "llama")
    writer.add_name("tiny-other-vocab")
    writer.add_context_length(512)
    writer.add_embedding_length(WIDTH)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(WIDTH * 2)
    writer.add_head_count(2)
    writer.add_head_count_kv(2)
    writer.add_rope_dimension_count(WIDTH // 2)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * 257 + [3, 3])
    writer.add_token_merges(["a b"])
    writer.add_bos_token_id(257)
    writer.add_eos_token_id(258)
    writer.add_tensor("token_embd.weight", rand(len(tokens), WIDTH))
    writer.add_tensor("output_norm.weight", np.ones(WIDTH, dtype=np.float32))
    writer.add_tensor("output.weight", rand(len(tokens), WIDTH))
    for layer in range(LAYERS):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(WIDTH, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(prefix + name + ".weight", rand(WIDTH, WIDTH))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(WIDTH, dtype=np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", rand(WIDTH * 2, WIDTH))
        writer.add_tensor(prefix + "ffn_up.weight", rand(WIDTH * 2, WIDTH))
        writer.add_tensor(prefix + "ffn_down.weight", rand(WIDTH, WIDTH * 2))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
