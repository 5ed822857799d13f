"""The pocket model's training loss in one pass: output logits, the full-vocabulary softmax and its gradient.

Training scores the compact vocabulary plus one logit for all the tokens it never uses (see
:class:`~training.pocket.vocab.CompactVocab`). Built from plain torch operations that costs a copy
of the logits for the extra column and PyTorch's slow ``log_softmax`` backward on the CPU; this
function computes the same losses and gradients from one logits matrix, about twice as fast.
``tests/training/test_pocket_model.py`` checks both against the plain formulation. Needs torch.
"""

from __future__ import annotations

from typing import Any

import torch


class _TokenLosses(torch.autograd.Function):
    """``-log p(target)`` per row, where ``p`` is softmax over ``hidden @ weight.T / temperature`` plus ``others``."""

    @staticmethod
    def forward(
        ctx: Any,
        hidden: torch.Tensor,
        weight: torch.Tensor,
        targets: torch.Tensor,
        temperature: float,
        unknown: int | None,
        others: float,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        logits = hidden @ weight.T
        logits.mul_(1.0 / temperature)
        if unknown is not None:
            logits[:, unknown] = float("-inf")  # the stand-in is never an output: its tokens are the others
        top = logits.max(dim=-1, keepdim=True).values.clamp(min=others)
        picked = logits.gather(1, targets[:, None])
        best = logits.argmax(dim=-1)
        probabilities = logits.sub_(top).exp_()
        total = probabilities.sum(dim=-1, keepdim=True).add_(torch.exp(others - top))
        probabilities.div_(total)
        ctx.save_for_backward(hidden, weight, targets, probabilities)
        ctx.temperature = temperature
        losses = (top + total.log() - picked)[:, 0]
        ctx.mark_non_differentiable(best)
        return losses, best

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor, _best: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        hidden, weight, targets, gradient = ctx.saved_tensors  # the probabilities, turned into the gradient
        gradient[torch.arange(len(targets)), targets] -= 1.0
        gradient.mul_(grad[:, None] / ctx.temperature)
        return gradient @ weight, gradient.T @ hidden, None, None, None, None


def token_losses(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    temperature: float,
    unknown: int | None,
    others: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-row loss of ``targets`` and each row's most likely token (rows of ``weight``).

    ``hidden`` [N, H] meets the output rows ``weight`` [V, H]; the logits are divided by ``temperature``;
    row ``unknown`` (if given) never scores; the tokens without a row add one logit ``others``.
    """
    losses, best = _TokenLosses.apply(hidden, weight, targets, temperature, unknown, others)
    return losses, best
