"""The pocket model's training forward and vocabulary: the same numbers transformers and llama.cpp compute."""

from __future__ import annotations

import importlib.util
import math
from dataclasses import replace

import numpy as np
import pytest

from harmony_chat.gguf.writer import GptOssShape
from harmony_chat.harmony import tokens as tk
from training.pocket.vocab import EMBEDDING, OUTPUT, CompactVocab

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or importlib.util.find_spec("transformers") is None,
    reason="the train extra (torch, transformers) is not installed",
)
SMALL = GptOssShape(layers=2, heads=4, kv_heads=2, head_dim=16, sliding_window=8)
"""A sliding window of 8, so short sequences already cross it."""


def _noisy_model(vocab_size: int, shape: GptOssShape) -> object:
    import torch

    from training.pocket.model import make_model

    model = make_model(vocab_size, shape, seed=3)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.1)
    model.eval()
    return model


@needs_torch
@pytest.mark.parametrize(("prefix_size", "branch_size"), [(20, 15), (0, 30), (3, 40)])
@pytest.mark.parametrize("blocks", [None, (3, 7)], ids=["one block", "blocks of 3 and 7"])
def test_a_shared_prefix_gives_what_transformers_gives_for_each_whole_sequence(
    prefix_size: int, branch_size: int, blocks: tuple[int, int] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    from training.pocket import model as pocket_model
    from training.pocket.model import shared_prefix_hidden

    if blocks is not None:  # the branch queries attend in several blocks, on the sliding layer across the prefix
        monkeypatch.setattr(pocket_model, "BLOCKS", {"sliding_attention": blocks[0], "full_attention": blocks[1]})
    torch.manual_seed(0)
    model = _noisy_model(300, SMALL)
    prefix = torch.randint(0, 300, (prefix_size,))
    branches = torch.randint(0, 300, (3, branch_size))
    with torch.no_grad():
        shared = shared_prefix_hidden(model, prefix, branches)
        for row in range(3):
            whole = torch.cat([prefix, branches[row]])[None]
            alone = model.model(input_ids=whole).last_hidden_state[0, prefix_size:]  # type: ignore[attr-defined]
            assert torch.allclose(shared[row], alone, atol=1e-5)


@needs_torch
@pytest.mark.parametrize("window", [None, 8], ids=["full layer", "sliding layer"])
def test_attention_computes_what_pytorchs_attention_computes_to_the_bit(window: int | None) -> None:
    """The recipe's weights do not depend on which of the two computes attention (outputs and every gradient)."""
    import torch

    from training.pocket.model import _attend, _mask

    shape = replace(SMALL, head_dim=32)  # the shipped heads: a scale of 32 ** -0.5, whose root is not exact
    model = _noisy_model(300, shape)
    attention = model.model.layers[0].self_attn  # type: ignore[attr-defined]
    attention.sinks.requires_grad_(True)
    torch.manual_seed(1)
    inputs = [torch.randn(3, shape.heads, length, shape.head_dim) for length in (24, 40, 40)]
    mask = _mask(torch.arange(16, 40), torch.arange(40), window)

    def run(reference: bool) -> list[torch.Tensor]:
        attention.zero_grad()
        query, key, value = (tensor.clone().requires_grad_(True) for tensor in inputs)
        if reference:  # PyTorch's own attention over the same keys: the sink a key of zeros, its logit in the mask
            nothing = key.new_zeros(key.shape[0], shape.heads, 1, shape.head_dim)
            sinks = attention.sinks.reshape(1, shape.heads, 1, 1).expand(1, shape.heads, 24, 1)
            out = torch.nn.functional.scaled_dot_product_attention(
                query,
                torch.cat([key, nothing], dim=2),
                torch.cat([value, nothing], dim=2),
                attn_mask=torch.cat([mask.expand(1, shape.heads, 24, 40), sinks], dim=-1),
                scale=attention.scaling,
            )
        else:
            out = _attend(attention, query, key, value, mask)
        (out * torch.linspace(-1, 1, out.numel()).reshape(out.shape)).sum().backward()
        return [out.detach(), query.grad, key.grad, value.grad, attention.sinks.grad.clone()]

    ours, theirs = run(False), run(True)
    for mine, reference in zip(ours, theirs, strict=True):
        assert torch.equal(mine, reference)
    assert ours[-1].abs().sum() > 0  # the sinks took part


@needs_torch
def test_right_padding_does_not_change_the_real_tokens() -> None:
    import torch

    from training.pocket.model import shared_prefix_hidden

    model = _noisy_model(300, SMALL)
    prefix, branch = torch.randint(0, 300, (12,)), torch.randint(0, 300, (10,))
    padded = torch.cat([branch, torch.full((6,), 299)])
    with torch.no_grad():
        short = shared_prefix_hidden(model, prefix, branch[None])
        long = shared_prefix_hidden(model, prefix, padded[None])
    assert torch.allclose(short[0], long[0, :10], atol=1e-5)


def test_the_compact_vocabulary_keeps_harmony_tokens_and_maps_the_rest_to_one_stand_in() -> None:
    vocab = CompactVocab([13, 500, 13])
    assert set(tk.NAMES) <= set(vocab.ids) and {13, 500} <= set(vocab.ids)
    assert vocab.size == len(vocab.ids) + 1
    compact = vocab.compact([500, 7, tk.RETURN, 200_000])
    assert compact[0] == vocab.ids.index(500) and compact[2] == vocab.ids.index(tk.RETURN)
    assert compact[1] == compact[3] == vocab.unknown
    assert vocab.others_logit == pytest.approx(math.log(tk.VOCAB_SIZE - len(vocab.ids)))


def test_only_the_written_tokens_get_output_rows_and_the_rest_count_among_the_others() -> None:
    assert not CompactVocab([13, 500, 600]).written_only
    vocab = CompactVocab([13, 500, 600], outputs=[500])
    assert vocab.written_only
    assert set(tk.NAMES) | {500} == {vocab.ids[i] for i in vocab.outputs}  # harmony's tokens are always written
    assert vocab.output_of[vocab.ids.index(500)] >= 0 and vocab.output_of[vocab.ids.index(600)] == -1
    assert vocab.output_of[vocab.unknown] == -1
    assert vocab.others_logit == pytest.approx(math.log(tk.VOCAB_SIZE - len(tk.NAMES) - 1))
    state = {EMBEDDING: np.ones((vocab.size, 4), np.float32), OUTPUT: np.ones((vocab.size, 4), np.float32)}
    full = vocab.expand(state)
    assert full[OUTPUT][500].all() and full[OUTPUT][tk.RETURN].all()
    assert not full[OUTPUT][600].any() and not full[OUTPUT][13].any()  # read, never written: scores 0
    with pytest.raises(ValueError, match="outside the vocabulary"):
        CompactVocab([13], outputs=[14])


def test_expanding_gives_unseen_tokens_the_stand_in_and_a_zero_output_row() -> None:
    vocab = CompactVocab([13, 500])
    rng = np.random.default_rng(0)
    state = {
        EMBEDDING: rng.standard_normal((vocab.size, 4)).astype(np.float32),
        OUTPUT: rng.standard_normal((vocab.size, 4)).astype(np.float32),
        "model.norm.weight": np.ones(4, dtype=np.float32),
    }
    full = vocab.expand(state)
    assert full[EMBEDDING].shape == full[OUTPUT].shape == (tk.VOCAB_SIZE, 4)
    index = vocab.ids.index(500)
    assert np.array_equal(full[EMBEDDING][500], state[EMBEDDING][index])
    assert np.array_equal(full[EMBEDDING][7], state[EMBEDDING][vocab.unknown])
    assert np.array_equal(full[OUTPUT][500], state[OUTPUT][index])
    assert not full[OUTPUT][7].any() and not full[OUTPUT][200_100].any()
    assert full["model.norm.weight"] is state["model.norm.weight"]


@needs_torch
@pytest.mark.parametrize("outputs", [None, range(1000, 1010)])
def test_the_training_softmax_is_the_full_vocabularys_softmax(outputs: range | None) -> None:
    """Output logits plus one ``log(others)`` logit give every written token the probability llama.cpp gives it."""
    import torch

    from training.pocket.batches import Group
    from training.pocket.train import group_losses

    vocab = CompactVocab(range(1000, 1040), outputs=outputs)
    model = _noisy_model(vocab.size, SMALL)
    branches = torch.tensor([vocab.compact([1000, 1001, 1002, 1003]).tolist()])
    targets = torch.tensor([[vocab.compact([1001])[0], -100, vocab.compact([1003])[0], -100]])
    with torch.no_grad():
        losses, wanted, _ = group_losses(model, vocab, Group(torch.tensor([], dtype=torch.long), branches, targets))
        compact = -losses
        full = vocab.expand({name: value.numpy() for name, value in model.state_dict().items()})  # type: ignore[attr-defined]
        from training.pocket.model import shared_prefix_hidden

        hidden = shared_prefix_hidden(model, torch.tensor([], dtype=torch.long), branches)[0, [0, 2]]
        everything = hidden @ torch.from_numpy(full[OUTPUT]).T
        exact = torch.log_softmax(everything, dim=-1)[[0, 1], [1001, 1003]]
    assert torch.allclose(compact, exact, atol=1e-4)


@needs_torch
def test_the_fused_loss_has_the_plain_formulations_values_and_gradients() -> None:
    """One-pass losses and gradients equal cross entropy over the logits plus the others' column."""
    import math

    import torch

    from training.pocket.loss import token_losses

    torch.manual_seed(0)
    hidden = torch.randn(50, 16, requires_grad=True)
    weight = (torch.randn(300, 16) * 0.5).requires_grad_()
    targets = torch.randint(0, 299, (50,))
    scale = torch.rand(50)
    others, temperature = math.log(200_000), 1.7

    logits = hidden @ weight.T / temperature
    logits = torch.cat([logits[:, :299], torch.full_like(logits[:, :1], float("-inf")), logits[:, :1] * 0 + others], 1)
    plain = torch.nn.functional.cross_entropy(logits, targets, reduction="none")
    expected = torch.autograd.grad((plain * scale).sum(), [hidden, weight])
    fused, best = token_losses(hidden, weight, targets, temperature, 299, others)
    got = torch.autograd.grad((fused * scale).sum(), [hidden, weight])

    assert torch.allclose(fused, plain, atol=1e-5)
    assert torch.equal(best, logits[:, :299].argmax(-1))
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, expected, strict=True))


@needs_torch
def test_the_decision_weight_falls_on_the_token_after_each_channel_and_message_tag() -> None:
    """The weight goes to positions that read ``<|channel|>`` or ``<|message|>`` (they predict the next token)."""
    import torch

    from training.pocket.batches import Group
    from training.pocket.train import loss_weights

    vocab = CompactVocab([tk.CHANNEL, tk.MESSAGE, 1000, 1001])
    rows = [[tk.CHANNEL, 1000, tk.MESSAGE, 1001, 1000], [tk.MESSAGE, 1000, 1000, 1000, 1000]]
    branches = torch.tensor([vocab.compact(row).tolist() for row in rows])
    targets = torch.full_like(branches, 5)
    targets[0, 1] = -100  # not taught: no weight at all
    targets[1, 2:] = -100
    deciding = torch.from_numpy(vocab.compact([tk.CHANNEL, tk.MESSAGE]))
    group = Group(torch.tensor([], dtype=torch.long), branches, targets)
    assert loss_weights(group, deciding, 8.0).tolist() == [8.0, 8.0, 1.0, 1.0, 8.0, 1.0]
    assert loss_weights(group, deciding, 1.0).tolist() == [1.0] * 6
