"""Training batches: examples that share a system prefix, as compact-vocabulary tensors.

The prompt of every example starts with the system (and developer) messages of its setup, the same
for thousands of examples; :func:`~training.pocket.model.shared_prefix_hidden` computes such a
prefix once per batch. A *bare* batch leaves the prefix out (the conversation alone, from position 0):
short sequences on which copying is learned fast, before the long prompts. Unknown-text examples
sometimes have words of their user message replaced by the stand-in for unseen tokens, so text the
model never saw (other scripts, rare words) means "fallback" to it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harmony_chat.harmony import tokens as tk
from training.pocket.data import Example
from training.pocket.vocab import CompactVocab

if TYPE_CHECKING:
    import torch

MASKABLE = frozenset({"fallback", "greeting"})
"""Kinds whose user text may be blanked to the unseen-token stand-in (their answer stays the same)."""


def _user_starts(tokens: Sequence[int]) -> list[int]:
    """Where each user message (``<|start|>user``) starts."""
    return [i for i in range(len(tokens) - 1) if tokens[i] == tk.START and tokens[i + 1] == tk.USER]


def prefix_length(prompt: Sequence[int]) -> int:
    """Where the first user message starts: everything before is the setup's system and developer messages."""
    starts = _user_starts(prompt)
    return starts[0] if starts else 0


@dataclass(slots=True)
class Group:
    """One forward pass: a shared prefix and the branches that continue it (compact ids)."""

    prefix: torch.Tensor
    """[P] ids."""
    branches: torch.Tensor
    """[B, L] ids, right-padded."""
    targets: torch.Tensor
    """[B, L] the next token to predict at each position, -100 where nothing is taught."""


def _last_user_span(tokens: Sequence[int]) -> tuple[int, int] | None:
    starts = _user_starts(tokens)
    if not starts:
        return None
    begin = starts[-1] + 3
    end = next((i for i in range(begin, len(tokens)) if tokens[i] == tk.END), len(tokens))
    return begin, end


class Batcher:
    """Draws groups of examples that share a prefix, as tensors."""

    pool_rows = 96
    """Candidates looked at for one group (the ones nearest the first in length are taken)."""
    max_rows = 32
    """Most examples in one group."""

    def __init__(self, examples: Sequence[Example], vocab: CompactVocab, seed: int, mask_rate: float = 0.25) -> None:
        self.examples = list(examples)
        self.vocab = vocab
        self.rng = random.Random(seed)
        self.mask_rate = mask_rate
        self.cuts = [prefix_length(example.prompt) for example in self.examples]
        groups: dict[tuple[int, ...], list[int]] = defaultdict(list)
        for index, example in enumerate(self.examples):
            if not example.bare:
                groups[tuple(example.prompt[: self.cuts[index]])].append(index)
        self.groups = list(groups.values())
        self.sizes = [len(members) for members in self.groups]
        self.first_turns = [index for index, example in enumerate(self.examples) if example.turn <= 2]
        self._pools: dict[frozenset[str] | None, list[int]] = {}

    def draw(self, budget: int, *, bare: bool = False, kinds: frozenset[str] | None = None) -> Group:
        """Examples of one prefix and similar length, as many as fit ``budget`` (see :meth:`cost`).

        Bare: early turns (of ``kinds``, if given) without their prefix. A group always has one example.
        """
        if bare:
            if kinds not in self._pools:
                self._pools[kinds] = [i for i in self.first_turns if kinds is None or self.kind(i) in kinds]
            return self.tensors([], self._similar(self._pools[kinds], budget, bare=True))
        chosen = self._similar(self.rng.choices(self.groups, self.sizes)[0], budget, bare=False)
        return self.tensors(self.examples[chosen[0]].prompt[: self.cuts[chosen[0]]], chosen)

    def length(self, index: int) -> int:
        """Example ``index``'s tokens after its prefix (prompt and completion)."""
        example = self.examples[index]
        return len(example.prompt) - self.cuts[index] + len(example.completion)

    def cost(self, index: int, bare: bool) -> int:
        """What example ``index`` costs in a group: its tokens times the keys they attend to."""
        length = self.length(index)
        return length * (length + (0 if bare else self.cuts[index]))

    def _similar(self, members: Sequence[int], budget: int, bare: bool) -> list[int]:
        """Examples of ``members`` around a random one in length, as many as ``budget`` pays for."""
        anchor = self.rng.choice(members)
        candidates = [anchor, *self.rng.sample(members, min(self.pool_rows, len(members)))]
        candidates.sort(key=lambda index: abs(self.length(index) - self.length(anchor)))
        chosen: list[int] = []
        spent = 0
        for index in candidates:
            if index in chosen:
                continue
            if chosen and (spent + self.cost(index, bare) > budget or len(chosen) == self.max_rows):
                break
            chosen.append(index)
            spent += self.cost(index, bare)
        return chosen

    def kind(self, index: int) -> str:
        """What example ``index`` teaches (its name without numbers and steps)."""
        return self.examples[index].name.split("-")[0]

    def tensors(self, prefix: Sequence[int], chosen: Sequence[int]) -> Group:
        """The group of examples ``chosen`` (indices) continuing ``prefix`` (empty for a bare group)."""
        import torch

        branches: list[np.ndarray] = []
        starts: list[int] = []
        for index in chosen:
            example = self.examples[index]
            cut = self.cuts[index]
            sequence = self.vocab.compact([*example.prompt[cut:], *example.completion])
            if example.name in MASKABLE and self.rng.random() < self.mask_rate:
                self._mask(sequence, example.prompt[cut:])
            branches.append(sequence)
            starts.append(len(example.prompt) - cut)
        length = max(len(branch) for branch in branches)
        ids = torch.full((len(branches), length), self.vocab.unknown, dtype=torch.long)
        targets = torch.full((len(branches), length), -100, dtype=torch.long)
        for row, (branch, start) in enumerate(zip(branches, starts, strict=True)):
            ids[row, : len(branch)] = torch.from_numpy(branch)
            targets[row, start - 1 : len(branch) - 1] = torch.from_numpy(branch[start:])
        return Group(torch.tensor(self.vocab.compact(list(prefix)), dtype=torch.long), ids, targets)

    def _mask(self, sequence: np.ndarray, prompt: Sequence[int]) -> None:
        span = _last_user_span(prompt)
        if span is None or span[1] <= span[0]:
            return
        begin, end = span
        rate = 1.0 if self.rng.random() < 0.2 else 0.15
        for position in range(begin, end):
            if self.rng.random() < rate:
                sequence[position] = self.vocab.unknown
