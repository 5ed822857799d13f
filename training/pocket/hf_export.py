"""The pocket GGUF as a Hugging Face checkpoint: what vLLM (or transformers) loads.

The inverse of :mod:`training.pocket.export`: every tensor of the GGUF dequantized to float32 and
mapped back to transformers' ``GptOssForCausalLM`` layout (gate and up re-interleaved into
``gate_up_proj``, the expert matrices' axes swapped back), written as

- ``config.json``: the GGUF's hyper-parameters as a ``GptOssConfig``, unquantized (float32);
- ``model.safetensors``: the weights (the output norm keeps the GGUF's logit scale, so the logits
  are llama.cpp's);
- ``tokenizer.json`` and ``tokenizer_config.json``: o200k_harmony, built from the tiktoken
  vocabulary by transformers' ``TikTokenConverter`` plus the special tokens 199998-201087;
- ``generation_config.json``: ``eos_token_id`` [200002, 199999, 200012] as the official checkpoints
  ship it (without ``<|call|>`` an engine's own chat endpoint runs past a tool call);
- ``chat_template.jinja``: gpt-oss's template, where the repository has it.

Run it from the repository root with the ``train`` extra (transformers)::

    python -m training.pocket.hf_export OUT_DIR [--gguf PATH]

``tests/training/test_pocket_hf_export.py`` checks the export against the GGUF (the same logits
through transformers as through llama.cpp, the same token ids as tiktoken).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harmony_chat.gguf.tokenizer import BASE_VOCAB_SIZE, read_tiktoken
from harmony_chat.harmony import tokens as tk

ROOT = Path(__file__).resolve().parents[2]
CHAT_TEMPLATE = ROOT / "tests" / "data" / "chat-template" / "gpt-oss-chat-template.jinja"
EOS_TOKEN_IDS = [tk.RETURN, tk.ENDOFTEXT, tk.CALL]
"""``generation_config.json``'s ``eos_token_id``: [200002, 199999, 200012], as gpt-oss ships."""
SOURCE_FILE = "harmony-chat-export.json"
"""Written last into the export: the GGUF's name and sha256 (a cached export is reused only if they match)."""
O200K_PATTERN = "|".join(
    [
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        r"\p{N}{1,3}",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        r"\s*[\r\n]+",
        r"\s+(?!\S)",
        r"\s+",
    ]
)
"""tiktoken's ``o200k_base`` split pattern (``pat_str``)."""

_LAYER = {  # GGUF name -> transformers name, the same tensor (export.py's table, reversed)
    "attn_norm.weight": "input_layernorm.weight",
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_output.bias": "self_attn.o_proj.bias",
    "attn_sinks.weight": "self_attn.sinks",
    "ffn_gate_inp.weight": "mlp.router.weight",
    "ffn_gate_inp.bias": "mlp.router.bias",
}


def read_gguf(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Every tensor of a gpt-oss GGUF, dequantized to float32 (numpy's axis order), and its scalar metadata.

    The header is walked here rather than by ``gguf.GGUFReader``, which parses the 200k-token
    vocabulary and its merges into Python objects first (seconds); arrays are skipped.
    """
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    from harmony_chat.gguf.inspect import _read, _read_string, _skip_value

    scalars = {4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d", 0: "<B", 1: "<b", 2: "<H", 3: "<h"}
    metadata: dict[str, Any] = {}
    infos: list[tuple[str, tuple[int, ...], GGMLQuantizationType, int]] = []
    with path.open("rb") as stream:
        if stream.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        _version, tensor_count, entries = struct.unpack("<IQQ", _read(stream, 20))
        for _ in range(entries):
            key = _read_string(stream)
            (value_type,) = struct.unpack("<I", _read(stream, 4))
            if value_type == 8:
                metadata[key] = _read_string(stream)
            elif value_type in scalars:
                fmt = scalars[value_type]
                (metadata[key],) = struct.unpack(fmt, _read(stream, struct.calcsize(fmt)))
            else:
                _skip_value(stream, value_type)
        for _ in range(tensor_count):
            name = _read_string(stream)
            (dims,) = struct.unpack("<I", _read(stream, 4))
            shape = struct.unpack(f"<{dims}Q", _read(stream, 8 * dims))
            kind, offset = struct.unpack("<IQ", _read(stream, 12))
            infos.append((name, tuple(shape), GGMLQuantizationType(kind), offset))
        alignment = int(metadata.get("general.alignment", 32))
        start = -(-stream.tell() // alignment) * alignment
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    tensors: dict[str, np.ndarray] = {}
    for name, shape, kind, offset in infos:
        block, size = GGML_QUANT_SIZES[kind]
        rows = shape[::-1][:-1]  # numpy order: the first GGUF dimension is the innermost
        row_bytes = shape[0] // block * size
        data = raw[start + offset : start + offset + int(np.prod(rows, dtype=np.int64)) * row_bytes]
        if kind in (GGMLQuantizationType.F32, GGMLQuantizationType.F16):
            dtype = np.float32 if kind == GGMLQuantizationType.F32 else np.float16
            tensors[name] = np.ascontiguousarray(data.view(dtype).reshape(shape[::-1]), dtype=np.float32)
        else:
            tensors[name] = np.ascontiguousarray(
                dequantize(np.asarray(data).reshape(*rows, row_bytes), kind), np.float32
            )
    return tensors, metadata


def hf_state(tensors: Mapping[str, np.ndarray], layers: int) -> dict[str, np.ndarray]:
    """Map gpt-oss GGUF names and layouts to transformers ones (the inverse of ``export.gguf_tensors``)."""
    state = {
        "model.embed_tokens.weight": tensors["token_embd.weight"],
        "lm_head.weight": tensors["output.weight"],
        "model.norm.weight": tensors["output_norm.weight"],
    }
    for layer in range(layers):
        block, prefix = f"blk.{layer}.", f"model.layers.{layer}."
        for source, target in _LAYER.items():
            state[prefix + target] = tensors[block + source]
        gate, up = tensors[block + "ffn_gate_exps.weight"], tensors[block + "ffn_up_exps.weight"]  # [E, F, H]
        gate_up = np.empty((gate.shape[0], 2 * gate.shape[1], gate.shape[2]), dtype=np.float32)
        gate_up[:, 0::2, :], gate_up[:, 1::2, :] = gate, up
        gate_bias, up_bias = tensors[block + "ffn_gate_exps.bias"], tensors[block + "ffn_up_exps.bias"]  # [E, F]
        gate_up_bias = np.empty((gate_bias.shape[0], 2 * gate_bias.shape[1]), dtype=np.float32)
        gate_up_bias[:, 0::2], gate_up_bias[:, 1::2] = gate_bias, up_bias
        state[prefix + "mlp.experts.gate_up_proj"] = np.swapaxes(gate_up, 1, 2)  # [E, H, 2F]
        state[prefix + "mlp.experts.gate_up_proj_bias"] = gate_up_bias
        state[prefix + "mlp.experts.down_proj"] = np.swapaxes(tensors[block + "ffn_down_exps.weight"], 1, 2)
        state[prefix + "mlp.experts.down_proj_bias"] = tensors[block + "ffn_down_exps.bias"]
    return {name: np.ascontiguousarray(value, dtype=np.float32) for name, value in state.items()}


def hf_config(metadata: Mapping[str, Any], vocab_size: int) -> dict[str, Any]:
    """``config.json`` for the GGUF's hyper-parameters: an unquantized float32 ``GptOssForCausalLM``."""
    from transformers import GptOssConfig

    arch = str(metadata["general.architecture"])

    def get(key: str) -> Any:
        return metadata[f"{arch}.{key}"]

    layers = int(get("block_count"))
    config = GptOssConfig(
        vocab_size=vocab_size,
        hidden_size=int(get("embedding_length")),
        intermediate_size=int(get("expert_feed_forward_length")),
        num_hidden_layers=layers,
        num_attention_heads=int(get("attention.head_count")),
        num_key_value_heads=int(get("attention.head_count_kv")),
        head_dim=int(get("attention.key_length")),
        num_local_experts=int(get("expert_count")),
        num_experts_per_tok=int(get("expert_used_count")),
        sliding_window=int(get("attention.sliding_window")),
        layer_types=["sliding_attention" if layer % 2 == 0 else "full_attention" for layer in range(layers)],
        max_position_embeddings=int(get("context_length")),
        rms_norm_eps=float(f"{get('attention.layer_norm_rms_epsilon'):.6g}"),  # 1e-05, not float32's 9.99e-06
        rope_parameters={
            "rope_type": "yarn",
            "factor": float(get("rope.scaling.factor")),
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
            "original_max_position_embeddings": int(get("rope.scaling.original_context_length")),
            "rope_theta": float(get("rope.freq_base")),
        },
        tie_word_embeddings=False,
        bos_token_id=tk.STARTOFTEXT,
        eos_token_id=tk.RETURN,
        pad_token_id=tk.ENDOFTEXT,
    )
    data = config.to_dict()
    data["architectures"] = ["GptOssForCausalLM"]
    data["dtype"] = "float32"
    data["torch_dtype"] = "float32"  # the name older readers look for
    for unused in ("id2label", "label2id"):
        data.pop(unused, None)
    return data


def special_tokens() -> list[str]:
    """The names of o200k_harmony's special tokens 199998-201087, in id order."""
    return [tk.special_name(token) for token in range(BASE_VOCAB_SIZE, tk.VOCAB_SIZE)]


def build_tokenizer(vocab_file: Path) -> Any:
    """o200k_harmony as a ``tokenizers.Tokenizer``: transformers' ``TikTokenConverter`` plus the special tokens.

    The converter reads the ``.tiktoken`` file with tiktoken; this reads it with harmony-chat's own
    reader (the same ranks), so tiktoken need not be installed.
    """
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = read_tiktoken(vocab_file)
    if len(ranks) != BASE_VOCAB_SIZE:
        raise ValueError(f"{vocab_file} holds {len(ranks)} ranks, not o200k_base's {BASE_VOCAB_SIZE}")

    class _Converter(TikTokenConverter):
        @staticmethod
        def load_tiktoken_bpe(tiktoken_url: str) -> dict[bytes, int]:
            return {data: rank for rank, data in enumerate(ranks)}

    tokenizer = _Converter(str(vocab_file), pattern=O200K_PATTERN, extra_special_tokens=special_tokens()).converted()
    if tokenizer.get_vocab_size() != tk.VOCAB_SIZE or tokenizer.token_to_id("<|return|>") != tk.RETURN:
        raise ValueError("the converted tokenizer does not have o200k_harmony's ids")
    return tokenizer


def tokenizer_config() -> dict[str, Any]:
    """``tokenizer_config.json``: a fast tokenizer with gpt-oss's special tokens."""
    decoder = {
        str(token): {
            "content": tk.special_name(token),
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for token in range(BASE_VOCAB_SIZE, tk.VOCAB_SIZE)
    }
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<|startoftext|>",
        "eos_token": "<|return|>",
        "pad_token": "<|endoftext|>",
        "clean_up_tokenization_spaces": False,
        "model_input_names": ["input_ids", "attention_mask"],
        "model_max_length": 131072,
        "added_tokens_decoder": decoder,
    }


def generation_config() -> dict[str, Any]:
    """``generation_config.json`` as the official gpt-oss checkpoints ship it."""
    return {
        "bos_token_id": tk.STARTOFTEXT,
        "do_sample": True,
        "eos_token_id": list(EOS_TOKEN_IDS),
        "pad_token_id": tk.ENDOFTEXT,
    }


def file_sha256(path: Path) -> str:
    """The sha256 of a file (what ``SOURCE_FILE`` records of the exported GGUF)."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def is_export_of(out: Path, gguf_path: Path) -> bool:
    """Whether ``out`` holds a complete export of exactly ``gguf_path`` (same sha256)."""
    try:
        source = json.loads((out / SOURCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    files = ("config.json", "model.safetensors", "tokenizer.json", "generation_config.json")
    return source.get("sha256") == file_sha256(gguf_path) and all((out / name).is_file() for name in files)


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def export_hf(gguf_path: Path, out: Path, vocab_file: Path) -> Path:
    """Write the Hugging Face checkpoint of ``gguf_path`` into ``out`` (made if missing); return ``out``.

    Args:
        gguf_path: a gpt-oss GGUF (the pocket model's, or any written by ``export.py``).
        out: the checkpoint folder; files already there are replaced.
        vocab_file: a verified ``o200k_base.tiktoken`` (``harmony_chat.harmony.vocab`` resolves one).
    """
    from safetensors.numpy import save_file

    tensors, metadata = read_gguf(gguf_path)
    vocab_size = tensors["token_embd.weight"].shape[0]
    if vocab_size != tk.VOCAB_SIZE:
        raise ValueError(f"{gguf_path} has {vocab_size} token rows, not o200k_harmony's {tk.VOCAB_SIZE}")
    config = hf_config(metadata, vocab_size)
    state = hf_state(tensors, int(config["num_hidden_layers"]))
    out.mkdir(parents=True, exist_ok=True)
    name = str(metadata.get("general.name", "gpt-oss"))
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt", "source": gguf_path.name})
    _write_json(out / "config.json", config)
    _write_json(out / "generation_config.json", generation_config())
    build_tokenizer(vocab_file).save(str(out / "tokenizer.json"))
    _write_json(out / "tokenizer_config.json", tokenizer_config())
    if CHAT_TEMPLATE.is_file():
        shutil.copyfile(CHAT_TEMPLATE, out / "chat_template.jinja")
    _write_json(out / SOURCE_FILE, {"gguf": gguf_path.name, "sha256": file_sha256(gguf_path)})
    (out / "README.md").write_text(
        f"# {name} (Hugging Face format)\n\nExported from `{gguf_path.name}` by `training/pocket/hf_export.py`: "
        "the GGUF's tensors dequantized to float32.\n",
        encoding="utf-8",
    )
    return out


def main(argv: list[str] | None = None) -> None:
    """Export the shipped pocket GGUF (or ``--gguf``) to a Hugging Face checkpoint folder."""
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.vocab import VOCAB_FILE, resolve_vocabulary

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the checkpoint folder to write")
    parser.add_argument("--gguf", type=Path, default=None, help="the GGUF (default: the shipped pocket model)")
    args = parser.parse_args(argv)
    gguf_path = args.gguf or pocket_model_path()
    vocab_file = resolve_vocabulary(gguf_path, pocket_model_path()) / VOCAB_FILE
    out = export_hf(gguf_path, args.out, vocab_file)
    print(f"wrote {out} ({', '.join(sorted(p.name for p in out.iterdir()))})")


if __name__ == "__main__":
    main()
