"""Training the pocket gpt-oss: averaged and deterministic weights, and the GGUF export (needs the train extra)."""

from __future__ import annotations

import importlib.util
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.demo.pocket import POCKET_DATE
from training.pocket.data import Example
from training.pocket.train import Recipe
from training.pocket.vocab import EMBEDDING, OUTPUT, training_vocab


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
    reason="the train extra (torch, transformers) is not installed",
)
def test_training_writes_the_mean_of_the_last_steps_weights(
    encoding: HarmonyEncoding, sample: list[Example], monkeypatch: pytest.MonkeyPatch
) -> None:
    from torch.optim.swa_utils import AveragedModel

    from training.pocket import train as training

    chosen = sample[:20]
    vocab = training_vocab(encoding, chosen, written_only=True)
    seen: list[dict[str, np.ndarray]] = []
    last: dict[str, np.ndarray] = {}
    update = AveragedModel.update_parameters

    def record(average: AveragedModel, model: Any) -> None:
        seen.append({name: value.detach().numpy().copy() for name, value in model.state_dict().items()})
        update(average, model)

    def final(model: Any, step: int) -> None:
        last.update({name: value.detach().numpy().copy() for name, value in model.state_dict().items()})

    monkeypatch.setattr(AveragedModel, "update_parameters", record)
    recipe = Recipe(steps=8, bare_steps=2, warmup=2, budget=30_000, copy_budget=10_000, average_steps=3)
    state = training.train(chosen, vocab, recipe, log=lambda line: None, check=final)
    assert len(seen) == 3  # the weights after steps 6, 7 and 8
    assert all(seen[-1][name].tobytes() == last[name].tobytes() for name in last)  # the last one is the final model
    for name, value in state.items():
        assert np.allclose(value, np.mean([weights[name] for weights in seen], axis=0), atol=1e-6)
    assert not np.allclose(state[EMBEDDING], last[EMBEDDING])  # averaged, not the last step's weights
    monkeypatch.setattr(AveragedModel, "update_parameters", update)
    unaveraged = training.train(chosen, vocab, replace(recipe, average_steps=0), log=lambda line: None)
    assert all(np.array_equal(unaveraged[name], last[name]) for name in last)  # 0: the last weights, as they were


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
    reason="the train extra (torch, transformers) is not installed",
)
def test_training_twice_gives_the_same_weights_bit_for_bit(encoding: HarmonyEncoding, sample: list[Example]) -> None:
    """On several threads too: without PyTorch's deterministic algorithms these runs differ (by about 1e-8 here)."""
    from training.pocket.train import train

    chosen = sample[:40]
    vocab = training_vocab(encoding, chosen, written_only=True)
    recipe = Recipe(steps=60, bare_steps=20, warmup=5, budget=60_000, copy_budget=20_000)
    first = train(chosen, vocab, recipe, log=lambda line: None)
    second = train(chosen, vocab, recipe, log=lambda line: None)
    assert first.keys() == second.keys()
    assert all(first[name].tobytes() == second[name].tobytes() for name in first)
    third = train(chosen, vocab, replace(recipe, seed=recipe.seed + 1), log=lambda line: None)
    assert not np.array_equal(third[EMBEDDING], first[EMBEDDING])  # the seed is what picks the weights


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
    reason="the train extra (torch, transformers) is not installed",
)
@pytest.mark.parametrize("written_only", [False, True])
def test_a_few_training_steps_run_and_export(
    encoding: HarmonyEncoding, sample: list[Example], ranks: list[bytes], tmp_path: Path, written_only: bool
) -> None:
    from harmony_chat.gguf.writer import random_tensors
    from training.pocket.export import export_gguf, gguf_tensors
    from training.pocket.model import SHAPE
    from training.pocket.train import Recipe, train
    from training.pocket.vocab import training_vocab

    chosen = sample[:40]
    vocab = training_vocab(encoding, chosen, written_only=written_only)
    logged: list[str] = []
    recipe = Recipe(steps=60, bare_steps=20, warmup=5, budget=60_000, copy_budget=20_000)
    state = train(chosen, vocab, recipe, log=logged.append)
    assert [line.split()[2] for line in logged] == ["chat"]  # logged at the last step, in the chat phase
    # it starts at a uniform guess over the whole vocabulary (a zero output matrix): a nat below it, it learned
    assert float(logged[-1].split("loss ")[1].split()[0]) < math.log(SHAPE.vocab_size) - 1
    mapped = gguf_tensors(vocab.expand(state), SHAPE.layers)
    expected = random_tensors(SHAPE)
    assert {name: value.shape for name, value in mapped.items()} == {n: v.shape for n, v in expected.items()}
    untrained = np.ones(SHAPE.vocab_size, dtype=bool)
    untrained[vocab.ids] = False
    written = np.asarray(vocab.ids)[vocab.outputs]
    read_only = np.setdiff1d(vocab.ids, written)
    assert not mapped["output.weight"][untrained].any()  # unseen tokens score exactly 0
    assert mapped["output.weight"][written].any()
    if written_only:
        assert len(read_only) > 0  # the prompts hold tokens that no completion writes
        assert not state[OUTPUT][vocab.output_of == -1].any()  # training never gave them an output row
        assert not mapped["output.weight"][read_only].any()  # so they score 0 like the unseen ones
    else:
        assert len(read_only) == 0 and (mapped["output.weight"][vocab.ids] != 0).any(axis=1).mean() > 0.9
    stand_in = mapped["token_embd.weight"][np.flatnonzero(untrained)[:3]]
    assert (stand_in == state[EMBEDDING][vocab.unknown]).all()  # and share the learned stand-in embedding
    path = export_gguf(
        vocab.expand(state), SHAPE, ranks, tmp_path / "rot.gguf", {"harmony_chat.pocket.date": POCKET_DATE}
    )
    backend = LlamaCppBackend(path, context_size=512)
    assert backend.load().name == "pocket-gpt-oss"
    backend.close()
    if written_only:
        _check_the_logit_scale(vocab.expand(state), ranks, path, tmp_path / "sharp.gguf", chosen[0].prompt)


def _check_the_logit_scale(
    state: dict[str, Any], ranks: list[bytes], plain: Path, out: Path, prompt: list[int]
) -> None:
    """``logit_scale`` doubles the output norm and nothing else, so llama.cpp's logits double: greedy stays."""
    from gguf import GGUFReader
    from llama_cpp import Llama

    from training.pocket.export import export_gguf
    from training.pocket.model import SHAPE

    sharp = export_gguf(state, SHAPE, ranks, out, {"harmony_chat.pocket.date": POCKET_DATE}, logit_scale=2.0)
    before, after = ({t.name: np.array(t.data) for t in GGUFReader(path).tensors} for path in (plain, sharp))
    assert np.array_equal(after.pop("output_norm.weight"), 2 * before.pop("output_norm.weight"))
    assert before.keys() == after.keys() and all(np.array_equal(before[n], after[n]) for n in before)
    logits = []
    for path in (plain, sharp):
        model = Llama(str(path), n_ctx=len(prompt) + 8, logits_all=True, verbose=False)
        model.eval(prompt)
        logits.append(np.array(model.scores[len(prompt) - 1]))
        model.close()
    assert np.ptp(logits[0]) > 1  # trained: the logits differ, so doubling them is a real change
    assert np.allclose(logits[1], 2 * logits[0], rtol=1e-3, atol=1e-3)
    assert logits[1].argmax() == logits[0].argmax()
