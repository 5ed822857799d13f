"""Train the pocket gpt-oss: ``python -m training.pocket.train`` (needs the ``train`` extra).

A transformers ``GptOssForCausalLM`` (:data:`~training.pocket.model.SHAPE`) learns the chats of
``data.py`` on its compact vocabulary (``vocab.py``). The recipe has two phases: first *bare*
batches (conversations without their system prompt, short and cheap) in which the model learns to
copy numbers and names from the user's message into its tool calls and from the tool's result into
its answer; then the chats as the app renders them, many per shared system prompt, each step with a
small copying batch too. Seeds are fixed (``--data-seed`` for the data, ``--seed`` for the weights and
the batches) and PyTorch runs only deterministic algorithms, so on one machine a recipe trains to the
same weights bit for bit. The run writes the GGUF, greedy-decodes a sample of the
training prompts through llama.cpp and records hashes, recipe, time and that check in the manifest.
``python -m training.pocket.evaluate --record`` then adds the measured rates.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harmony_chat.demo.pocket import POCKET_DATE, POCKET_NAME, pocket_model_path
from training.pocket.batches import Batcher, Group
from training.pocket.data import DATA_SEED, Example, build_examples, data_hash
from training.pocket.model import SHAPE, make_model, shared_prefix_hidden
from training.pocket.vocab import CompactVocab, training_vocab

COPY_KINDS = frozenset({"arithmetic", "weather"})
"""Kinds whose answers copy from the prompt: what the bare phase teaches first."""


@dataclass(frozen=True, slots=True)
class Recipe:
    """How the pocket model is trained (recorded in the manifest)."""

    steps: int = 3600
    bare_steps: int = 800
    budget: int = 1_200_000
    """What one group may cost: the sum over its examples of tokens times keys attended (see ``Batcher.cost``)."""
    groups: int = 2
    """Groups (shared prefixes) per step."""
    copy_budget: int = 150_000
    """After the bare phase every step also has one bare copying group of this cost (copying is kept up)."""
    learning_rate: float = 4e-3
    final_rate: float = 0.05
    """The learning rate at the last step, as a share of :attr:`learning_rate`."""
    warmup: int = 60
    sharpness: float = 2.0
    """Train as if sampled at this temperature: at 1.0 the model is then sharper than its data (robust sampling).

    It rises from 1.0 over the second half of the run (early on, logits that large are not learned yet).
    """
    seed: int = 21
    """The weights' and the batches' seed (the data's is ``--data-seed``): 21 trained the shipped build (README)."""
    average_steps: int = 250
    """The model written is the mean of the weights after each of the last this many steps (0: the last weights).

    Averaging the weights of a run's low-rate end evens out the step-to-step noise that decides a few
    exact answers (stochastic weight averaging). 250 trained the shipped build.
    """
    written_rows: bool = True
    """Train output rows only for the tokens the completions write (:func:`training_vocab`'s ``written_only``).

    The same softmax, and a chat step about a third faster: what fits the recipe in 20 minutes.
    """
    decision_weight: float = 1.0
    """How much the token after each ``<|channel|>`` and ``<|message|>`` weighs in an example's loss.

    Those tokens decide a message's channel and its first word, where a turn the model cannot place
    goes wrong (a final answer holding analysis text, the fallback in analysis). 1.0 (every token the
    same) trained the shipped build; the builds with 4, 8 and 16 are in the README, none shipped.
    """
    logit_scale: float = 4.0
    """The file's output norm is the trained one times this (:func:`~training.pocket.export.export_gguf`).

    Greedy answers stay the trained weights' own; at temperature 1.0 (the app's default) the model
    samples as those weights would at ``1 / logit_scale``. 4.0 wrote the shipped build (0.25 as its
    weights would sample); 1.0 the one before it, 2.0 other builds (the README's builds table).
    """


def _rate(recipe: Recipe) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < recipe.warmup:
            return (step + 1) / recipe.warmup
        done = (step - recipe.warmup) / max(1, recipe.steps - recipe.warmup)
        return recipe.final_rate + (1 - recipe.final_rate) * 0.5 * (1 + math.cos(math.pi * min(1.0, done)))

    return factor


def _sharpness(recipe: Recipe, step: int) -> float:
    half = recipe.steps / 2
    return 1.0 + (recipe.sharpness - 1.0) * max(0.0, (step - half) / half)


def group_losses(model: Any, vocab: CompactVocab, group: Group, temperature: float = 1.0) -> tuple[Any, Any, Any]:
    """Losses at the taught positions (over the output tokens plus the others' logit), targets, best guesses.

    Targets and best guesses are compact ids, or places in ``vocab.outputs`` if ``vocab.written_only``.

    At ``temperature`` the model's logits are divided by it; the others keep ``log(count)`` (their
    logits are 0 at any temperature), which is llama.cpp's softmax when sampling at ``temperature``.
    """
    import torch

    from training.pocket.loss import token_losses

    hidden = shared_prefix_hidden(model, group.prefix, group.branches)
    taught = group.targets >= 0
    targets = group.targets[taught]
    if vocab.written_only:  # score the written rows alone: targets become places in ``outputs``
        targets = torch.from_numpy(vocab.output_of)[targets]
        weight, unknown = model.lm_head.weight[torch.from_numpy(vocab.outputs)], None
    else:  # every row, as the shipped model was trained: the stand-in's row never scores
        weight, unknown = model.lm_head.weight, vocab.unknown
    losses, best = token_losses(hidden[taught], weight, targets, temperature, unknown, vocab.others_logit)
    return losses, targets, best


def loss_weights(group: Group, deciding: Any, weight: float) -> Any:
    """Each taught position's weight in its example's loss: ``weight`` where the token read is in ``deciding``.

    Positions come in the order of ``group_losses``' losses; the target there is the token after the
    one read (after ``<|channel|>``: the channel; after ``<|message|>``: the first word).
    """
    import torch

    read = group.branches[group.targets >= 0]
    return torch.where(torch.isin(read, deciding), weight, 1.0)


def train(
    examples: Sequence[Example],
    vocab: CompactVocab,
    recipe: Recipe = Recipe(),
    log: Callable[[str], None] = print,
    check: Callable[[Any, int], None] | None = None,
) -> dict[str, np.ndarray]:
    """Train from scratch; return the compact state dict (averaged, see :attr:`Recipe.average_steps`) as float32.

    ``check(model, step)`` runs every 500 steps and at the end on the current, not averaged, weights
    (dev measurements, in eval mode).
    """
    import torch
    from torch.optim.swa_utils import AveragedModel

    from harmony_chat.harmony import tokens as tk

    # Without this, the backward of indexing the expert tensors adds on parallel threads in whatever
    # order they finish, and two runs of one recipe drift apart within a few hundred steps (same speed).
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(recipe.seed)
    model = make_model(vocab.size, SHAPE, recipe.seed)
    model.train()
    batcher = Batcher(examples, vocab, recipe.seed)
    deciding = torch.from_numpy(vocab.compact([tk.CHANNEL, tk.MESSAGE]))
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.learning_rate, betas=(0.9, 0.95), weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, _rate(recipe))
    started = time.monotonic()
    seen = 0
    average: Any = None
    for step in range(1, recipe.steps + 1):
        bare = step <= recipe.bare_steps
        if bare:
            groups = [batcher.draw(recipe.budget, bare=True, kinds=COPY_KINDS) for _ in range(recipe.groups)]
        else:
            groups = [batcher.draw(recipe.budget) for _ in range(recipe.groups)]
            if recipe.copy_budget:
                groups.append(batcher.draw(recipe.copy_budget, bare=True, kinds=COPY_KINDS))
        rows = sum(len(group.branches) for group in groups)
        taught = sum(int((group.targets >= 0).sum()) for group in groups)
        optimizer.zero_grad()
        hits = 0
        loss_sum = 0.0
        for group in groups:
            losses, targets, best = group_losses(model, vocab, group, _sharpness(recipe, step))
            owner = (group.targets >= 0).nonzero()[:, 0]
            weights = loss_weights(group, deciding, recipe.decision_weight)
            per_row = torch.zeros(len(group.branches)).index_add(0, owner, losses * weights)
            lengths = torch.zeros(len(group.branches)).index_add(0, owner, weights)
            loss = (per_row / lengths.clamp(min=1)).sum() / rows  # every example weighs the same (a weighted mean)
            loss.backward()
            loss_sum += loss.item()
            hits += int((best == targets).sum())
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        if step > recipe.steps - recipe.average_steps:
            if average is None:
                average = AveragedModel(model)  # a copy; its first update takes the weights as they are
            average.update_parameters(model)
        seen += rows
        if step % 100 == 0 or step == recipe.steps:
            phase = "bare" if bare else "chat"
            log(
                f"step {step:5d} {phase}  loss {loss_sum:.4f}  token accuracy {hits / taught:.4f}"
                f"  examples {seen}  {time.monotonic() - started:.0f}s"
            )
        if check is not None and (step % 500 == 0 or step == recipe.steps):
            model.eval()
            with torch.no_grad():
                check(model, step)
            model.train()
    state = (model if average is None else average.module).state_dict()
    return {name: value.detach().float().numpy() for name, value in state.items()}


def verify(path: Path, examples: Sequence[Example], count: int = 300, seed: int = 1234) -> tuple[int, list[str]]:
    """Greedy-decode ``count`` training prompts through llama.cpp: how many were checked, and which differ."""
    from harmony_chat.backends.base import SamplingParams
    from harmony_chat.backends.llama_cpp import LlamaCppBackend
    from harmony_chat.harmony import tokens as tk

    chosen = random.Random(seed).sample(list(examples), min(count, len(examples)))
    context = max(len(example.prompt) + len(example.completion) for example in chosen) + 16
    backend = LlamaCppBackend(path, context_size=max(1024, context))
    backend.load()
    failed = []
    try:
        for example in chosen:
            sampling = SamplingParams(temperature=0.0, max_tokens=len(example.completion) + 8)
            out = list(backend.generate(example.prompt, sampling, tk.GENERATION_STOPS, lambda: False))
            if out != example.completion:
                failed.append(f"{example.name}@{example.effort}, turn {example.turn}")
    finally:
        backend.close()
    return len(chosen), failed


def export(
    state: dict[str, np.ndarray],
    vocab: CompactVocab,
    examples: Sequence[Example],
    out: Path,
    record: dict[str, object],
    logit_scale: float,
) -> list[str]:
    """Write the GGUF (:func:`export_gguf`) and its manifest (``record`` plus hashes, the llama.cpp check).

    Returns the training examples llama.cpp decodes differently.
    """
    from harmony_chat.gguf.tokenizer import read_tiktoken
    from harmony_chat.harmony.vocab import VOCAB_FILE, resolve_vocabulary
    from training.pocket.export import ATTENTION_TYPE, EMBEDDING_TYPE, OUTPUT_TYPE, export_gguf

    digest = data_hash(examples)
    ranks = read_tiktoken(resolve_vocabulary(fallback_gguf=pocket_model_path()) / VOCAB_FILE)
    metadata = {"harmony_chat.pocket.data_sha256": digest, "harmony_chat.pocket.date": POCKET_DATE}
    export_gguf(vocab.expand(state), SHAPE, ranks, out, metadata, name=POCKET_NAME, logit_scale=logit_scale)
    checked, failed = verify(out, examples)
    manifest = {
        "file": out.name,
        "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
        "size_bytes": out.stat().st_size,
        "data_sha256": digest,
        "examples": len(examples),
        "vocabulary": len(vocab.ids),
        "shape": asdict(SHAPE),
        "date": POCKET_DATE,
        "quantization": {
            "token_embd": EMBEDDING_TYPE.name,
            "output": OUTPUT_TYPE.name,
            "attention": ATTENTION_TYPE.name,
        },
        **record,
        "exact_answers": f"{checked - len(failed)}/{checked} sampled training examples, greedy through llama.cpp",
        "command": "python -m training.pocket.train",
    }
    out.with_suffix(".json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB, sha256 {manifest['sha256']})")
    print(f"llama.cpp reproduces {manifest['exact_answers']}" + (f"; differing: {failed[:10]}" if failed else ""))
    return failed


def main(argv: list[str] | None = None) -> int:
    """Build the data, train, export, verify and record the pocket model (then run ``evaluate --record``)."""
    from harmony_chat.harmony.vocab import load_encoding

    parser = argparse.ArgumentParser(description="Train the pocket gpt-oss and write its GGUF.")
    parser.add_argument("--out", type=Path, default=pocket_model_path())
    parser.add_argument("--seed", type=int, default=Recipe().seed, help="the training seed (weights, batch order)")
    parser.add_argument(
        "--decision-weight", type=float, default=Recipe().decision_weight, help="see Recipe.decision_weight"
    )
    parser.add_argument("--data-seed", type=int, default=DATA_SEED, help="the training data's seed")
    args = parser.parse_args(argv)
    import torch

    threads = max(1, min(2, torch.get_num_threads()))
    torch.set_num_threads(threads)
    started = time.monotonic()
    encoding = load_encoding(fallback_gguf=pocket_model_path())
    examples = build_examples(encoding, seed=args.data_seed, workers=threads)
    recipe = Recipe(seed=args.seed, decision_weight=args.decision_weight)
    vocab = training_vocab(encoding, examples, written_only=recipe.written_rows)
    print(
        f"{len(examples)} examples, {len(vocab.ids)} tokens ({len(vocab.outputs)} written),"
        f" {time.monotonic() - started:.0f}s",
        flush=True,
    )
    state = train(examples, vocab, recipe, log=lambda line: print(line, flush=True))
    seconds = round(time.monotonic() - started)
    record = {
        "data_seed": args.data_seed,
        "recipe": asdict(recipe),
        "train_seconds": seconds,
        "threads": torch.get_num_threads(),
    }
    failed = export(state, vocab, examples, args.out, record, recipe.logit_scale)
    return 0 if not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
