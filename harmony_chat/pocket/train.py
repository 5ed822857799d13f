"""Train the pocket gpt-oss: ``python -m harmony_chat.pocket.train`` (needs the ``train`` extra).

A transformers ``GptOssForCausalLM`` (2 layers, 64 wide, 4 experts) learns the synthetic harmony
conversations of ``data.py``. Full 201,088-token logits would make each step slow on a CPU, so the
output matrix starts at zero and the loss only looks at the tokens that occur in completions plus
one constant logit standing for all the others (whose rows stay zero, so each scores exactly 0 in
llama.cpp); the constant is their combined weight, so the loss equals the full softmax's.
Seeds are fixed; the run writes the GGUF, checks every training answer through llama.cpp, and
records the file's sha256 and the training data's hash in a manifest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harmony_chat.gguf.writer import GptOssShape
from harmony_chat.pocket import POCKET_DATE, POCKET_NAME, pocket_dir
from harmony_chat.pocket.data import Example, build_examples, data_hash

SHAPE = GptOssShape()
"""vocab 201088, hidden 64, 2 layers, 4 heads of 16, 1 KV head, 4 experts (2 active), window 128."""
SEED = 1234
STEPS = 1500
LEARNING_RATE = 4e-3
BATCH = 16


def make_model(seed: int = SEED) -> Any:
    """A freshly initialised gpt-oss of :data:`SHAPE` with a zero output matrix."""
    import torch
    from transformers import GptOssConfig, GptOssForCausalLM

    torch.manual_seed(seed)
    config = GptOssConfig(
        vocab_size=SHAPE.vocab_size,
        hidden_size=SHAPE.hidden_size,
        num_hidden_layers=SHAPE.layers,
        num_attention_heads=SHAPE.heads,
        num_key_value_heads=SHAPE.kv_heads,
        head_dim=SHAPE.head_dim,
        intermediate_size=SHAPE.intermediate_size,
        num_local_experts=SHAPE.experts,
        num_experts_per_tok=SHAPE.experts_per_token,
        sliding_window=SHAPE.sliding_window,
        layer_types=["sliding_attention", "full_attention"],
        tie_word_embeddings=False,
    )
    config._attn_implementation = "eager"
    model = GptOssForCausalLM(config)
    with torch.no_grad():
        model.lm_head.weight.zero_()
    return model


def _batch(examples: Sequence[Example], pad: int) -> tuple[Any, Any, Any]:
    """Input ids, attention mask and next-token targets (-100 outside the completion)."""
    import torch

    length = max(len(e.prompt) + len(e.completion) for e in examples)
    ids = torch.full((len(examples), length), pad, dtype=torch.long)
    mask = torch.zeros((len(examples), length), dtype=torch.long)
    targets = torch.full((len(examples), length), -100, dtype=torch.long)
    for row, example in enumerate(examples):
        tokens = example.prompt + example.completion
        ids[row, : len(tokens)] = torch.tensor(tokens)
        mask[row, : len(tokens)] = 1
        start = len(example.prompt) - 1
        targets[row, start : len(tokens) - 1] = torch.tensor(example.completion)
    return ids, mask, targets


class RestrictedHead:
    """Logits over the completion vocabulary plus one constant logit for every other token.

    Every other token keeps a zero row in the output matrix, so in llama.cpp each scores exactly 0;
    together they weigh ``log(others)``. Using that as the constant makes this softmax equal to the
    full-vocabulary one, so the model also samples well at temperature 1, not only greedily.
    """

    def __init__(self, examples: Sequence[Example]) -> None:
        import torch

        self.used = torch.tensor(sorted({t for e in examples for t in e.completion}), dtype=torch.long)
        self.index = torch.full((SHAPE.vocab_size,), len(self.used), dtype=torch.long)
        self.index[self.used] = torch.arange(len(self.used))
        self.others = float(np.log(SHAPE.vocab_size - len(self.used)))

    def loss(self, model: Any, ids: Any, mask: Any, targets: Any) -> tuple[Any, Any]:
        """Mean cross-entropy over completion positions, and the per-position greedy hits."""
        import torch

        hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
        logits = hidden @ model.lm_head.weight[self.used].T
        logits = torch.cat([logits, torch.full_like(logits[..., :1], self.others)], dim=-1)
        wanted = torch.where(targets >= 0, self.index[targets.clamp(min=0)], targets)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), wanted.flatten(), ignore_index=-100)
        hits = (logits.argmax(-1) == wanted)[targets >= 0]
        return loss, hits


def train(
    examples: Sequence[Example],
    steps: int = STEPS,
    seed: int = SEED,
    log: Callable[[str], None] = print,
) -> dict[str, np.ndarray]:
    """Train from scratch and return the state dict as float32 numpy arrays."""
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads()))
    model = make_model(seed)
    model.train()
    head = RestrictedHead(examples)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, betas=(0.9, 0.95), weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0 - 0.9 * step / max(steps, 1))
    rng = random.Random(seed)
    started = time.monotonic()
    for step in range(1, steps + 1):
        batch = rng.sample(list(examples), min(BATCH, len(examples)))
        loss, hits = head.loss(model, *_batch(batch, pad=199999))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step % 50 == 0 or step == steps:
            accuracy = hits.float().mean().item()
            seconds = time.monotonic() - started
            log(f"step {step:4d}  loss {loss.item():.4f}  token accuracy {accuracy:.3f}  {seconds:.0f}s")
    return {name: value.detach().float().numpy() for name, value in model.state_dict().items()}


def verify(path: Path, examples: Sequence[Example]) -> list[str]:
    """Greedy-decode every training prompt through llama.cpp; return the names that differ."""
    from harmony_chat.backends.base import SamplingParams
    from harmony_chat.backends.llama_cpp import LlamaCppBackend
    from harmony_chat.harmony import tokens as tk

    backend = LlamaCppBackend(path, context_size=1024)
    backend.load()
    failed = []
    try:
        for example in examples:
            sampling = SamplingParams(temperature=0.0, max_tokens=len(example.completion) + 8)
            out = list(backend.generate(example.prompt, sampling, tk.GENERATION_STOPS, lambda: False))
            if out != example.completion:
                failed.append(f"{example.name}@{example.effort}")
    finally:
        backend.close()
    return failed


def main(argv: list[str] | None = None) -> int:
    """Train, export, verify and record the pocket model."""
    from harmony_chat.gguf.tokenizer import read_tiktoken
    from harmony_chat.harmony.vocab import VOCAB_FILE, load_encoding, resolve_vocabulary
    from harmony_chat.pocket.export import EMBEDDING_TYPE, OUTPUT_TYPE, export_gguf

    parser = argparse.ArgumentParser(description="Train the pocket gpt-oss and write its GGUF.")
    parser.add_argument("--out", type=Path, default=pocket_dir() / f"{POCKET_NAME}.gguf")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    examples = build_examples(load_encoding())
    digest = data_hash(examples)
    print(f"{len(examples)} examples, data sha256 {digest}")
    state = train(examples, steps=args.steps, seed=args.seed)
    ranks = read_tiktoken(resolve_vocabulary() / VOCAB_FILE)
    metadata = {"harmony_chat.pocket.data_sha256": digest, "harmony_chat.pocket.date": POCKET_DATE}
    export_gguf(state, SHAPE, ranks, args.out, metadata, name=POCKET_NAME)
    failed = verify(args.out, examples)
    sha = hashlib.sha256(args.out.read_bytes()).hexdigest()
    manifest = {
        "file": args.out.name,
        "sha256": sha,
        "size_bytes": args.out.stat().st_size,
        "data_sha256": digest,
        "examples": len(examples),
        "steps": args.steps,
        "seed": args.seed,
        "learning_rate": LEARNING_RATE,
        "batch": BATCH,
        "date": POCKET_DATE,
        "quantization": {"token_embd": EMBEDDING_TYPE.name, "output": OUTPUT_TYPE.name},
        "exact_answers": f"{len(examples) - len(failed)}/{len(examples)}",
        "command": "python -m harmony_chat.pocket.train",
    }
    args.out.with_suffix(".json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({manifest['size_bytes'] / 1e6:.1f} MB, sha256 {sha})")
    print(
        f"llama.cpp reproduces {manifest['exact_answers']} training answers exactly"
        + (f"; differing: {', '.join(failed)}" if failed else "")
    )
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
