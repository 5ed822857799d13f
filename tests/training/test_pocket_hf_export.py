"""The pocket GGUF in Hugging Face format (``training/pocket/hf_export.py``): what vLLM serves in the ``vllm`` tier.

transformers on the export computes the logits llama.cpp computes on the GGUF, and the exported
``tokenizer.json`` gives tiktoken's (openai-harmony's) o200k_harmony ids. Needs the train extra.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.demo.pocket import POCKET_DATE, pocket_model_path
from harmony_chat.harmony import tokens as tk
from harmony_chat.harmony.session import ChatSession

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
    reason="the train extra (torch, transformers) is not installed",
)
TEXTS = [
    "What is the capital of France?",
    "naïve café 東京 🙂, ünïcödé and   spaces\n\n\ttabs",
    "def add(a, b):\n    return a + b  # 1234 * 5678 = 7006652",
    "I'M shouting, you're not; they've said 'hello' (don't).",
    "Привет, мир! مرحبا بالعالم. こんにちは世界。",
    "<|start|>user<|message|>Hi<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>",
    '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Tokyo"}<|call|>',
    "<|reserved_200013|><|endofprompt|><|startoftext|><|endoftext|><|reserved_201087|>",
    "https://example.org/path?q=1&r=2 — emoji 👩‍💻 and numbers 3.14159e-10",
]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory, vocab_file: Path) -> Path:
    from training.pocket.hf_export import export_hf

    return export_hf(pocket_model_path(), tmp_path_factory.mktemp("pocket-hf"), vocab_file)


def test_the_export_holds_what_vllm_loads(export: Path) -> None:
    names = {path.name for path in export.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= names
    config = json.loads((export / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "gpt_oss" and config["architectures"] == ["GptOssForCausalLM"]
    assert "quantization_config" not in config and config["dtype"] == "float32"
    assert (config["vocab_size"], config["num_hidden_layers"], config["num_local_experts"]) == (tk.VOCAB_SIZE, 2, 4)
    assert config["layer_types"] == ["sliding_attention", "full_attention"]
    generation = json.loads((export / "generation_config.json").read_text(encoding="utf-8"))
    assert generation["eos_token_id"] == [200002, 199999, 200012]


def test_transformers_on_the_export_computes_llama_cpps_logits(export: Path, encoding: HarmonyEncoding) -> None:
    import torch
    from llama_cpp import Llama
    from transformers import GptOssForCausalLM

    session = ChatSession(encoding, start_date=POCKET_DATE)
    session.add_user("What is the capital of France?")
    prompt = session.render().tokens
    model = GptOssForCausalLM.from_pretrained(export, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        theirs = model(input_ids=torch.tensor([prompt])).logits[0].numpy()
    llama = Llama(str(pocket_model_path()), n_ctx=len(prompt) + 8, logits_all=True, verbose=False)
    try:
        llama.eval(prompt)
        ours = np.array(llama.scores[: len(prompt)])
    finally:
        llama.close()
    assert theirs.shape == ours.shape == (len(prompt), tk.VOCAB_SIZE)
    assert np.ptp(ours[-1]) > 1  # trained logits, not a flat row
    scale = np.abs(ours).max()
    # llama.cpp rounds activations for its quantized and F16 matmuls: a few rows differ by up to ~0.5 %
    assert np.abs(theirs - ours).max() < 0.01 * scale and np.abs(theirs - ours).mean() < 1e-4 * scale
    assert (theirs.argmax(-1) == ours.argmax(-1)).all()  # the same greedy choice at every position


def test_the_exported_tokenizer_gives_tiktokens_ids(export: Path, encoding: HarmonyEncoding) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(export / "tokenizer.json"))
    assert tokenizer.get_vocab_size() == tk.VOCAB_SIZE
    for text in TEXTS:
        expected = encoding.encode(text, allowed_special="all")
        assert tokenizer.encode(text, add_special_tokens=False).ids == expected, text
        assert tokenizer.decode(expected, skip_special_tokens=False) == text
    for token in range(tk.FIRST_SPECIAL, tk.VOCAB_SIZE):
        assert tokenizer.id_to_token(token) == encoding.decode_utf8([token])
