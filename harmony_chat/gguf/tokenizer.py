"""The o200k vocabulary in its two spellings: tiktoken ranks and GGUF's GPT-2 byte-level strings.

A gpt-oss GGUF stores its vocabulary as ``tokenizer.ggml.tokens``: GPT-2 byte-level strings whose
ids 0..199997 equal the tiktoken ranks of ``o200k_base``. This module converts between the two,
derives BPE merges from the ranks and writes the tiktoken file format.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from harmony_chat.harmony import tokens as tk

TOKEN_TYPE_NORMAL = 1
"""GGUF token type of ordinary text tokens."""
TOKEN_TYPE_CONTROL = 3
"""GGUF token type of special tokens."""

BASE_VOCAB_SIZE = 199998
"""Number of ordinary tokens in ``o200k_base`` (ranks 0..199997)."""


@cache
def byte_to_unicode() -> dict[int, str]:
    """Return GPT-2's reversible map from each byte to a printable character."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


@cache
def unicode_to_byte() -> dict[str, int]:
    """Return the inverse of :func:`byte_to_unicode`."""
    return {char: b for b, char in byte_to_unicode().items()}


def bytes_to_token(data: bytes) -> str:
    """Spell raw token bytes the way GGUF stores them."""
    table = byte_to_unicode()
    return "".join(table[b] for b in data)


def token_to_bytes(token: str) -> bytes:
    """Turn a GGUF byte-level token string back into its raw bytes.

    Raises:
        KeyError: if ``token`` contains a character outside the byte-level alphabet.
    """
    table = unicode_to_byte()
    return bytes(table[char] for char in token)


def read_tiktoken(path: Path) -> list[bytes]:
    """Read a ``.tiktoken`` file and return the token bytes in rank order."""
    ranked: dict[int, bytes] = {}
    for line in path.read_bytes().splitlines():
        if line:
            encoded, rank = line.split()
            ranked[int(rank)] = base64.b64decode(encoded)
    return [ranked[rank] for rank in range(len(ranked))]


def tiktoken_bytes(ranks: Iterable[bytes]) -> bytes:
    """Return the tiktoken file format for token bytes given in rank order."""
    lines = (base64.b64encode(data) + b" " + str(rank).encode() for rank, data in enumerate(ranks))
    return b"\n".join(lines) + b"\n"


def derive_merges(ranks: Sequence[bytes]) -> list[str]:
    """Derive GGUF BPE merges from tiktoken ranks.

    Every way to split a token into two tokens that both exist becomes a merge; merges are
    ordered by the rank of the merged token, then by the ranks of the two parts. Applying merges in
    that order reproduces tiktoken's rank-based BPE.
    """
    rank_of = {data: rank for rank, data in enumerate(ranks)}
    merges: list[tuple[int, int, int, bytes, bytes]] = []
    for rank, data in enumerate(ranks):
        for cut in range(1, len(data)):
            left, right = data[:cut], data[cut:]
            left_rank, right_rank = rank_of.get(left), rank_of.get(right)
            if left_rank is not None and right_rank is not None:
                merges.append((rank, left_rank, right_rank, left, right))
    merges.sort()
    return [f"{bytes_to_token(left)} {bytes_to_token(right)}" for *_, left, right in merges]


def harmony_vocabulary(ranks: Sequence[bytes]) -> tuple[list[str], list[int]]:
    """Return the GGUF token strings and token types of the full o200k_harmony vocabulary.

    Ids below ``BASE_VOCAB_SIZE`` are the byte-level spellings of the ranks; the rest up to
    ``VOCAB_SIZE`` are harmony's special and reserved tokens, typed as control tokens.
    """
    if len(ranks) != BASE_VOCAB_SIZE:
        raise ValueError(f"expected {BASE_VOCAB_SIZE} ranks, got {len(ranks)}")
    strings = [bytes_to_token(data) for data in ranks]
    types = [TOKEN_TYPE_NORMAL] * len(strings)
    for token in range(BASE_VOCAB_SIZE, tk.VOCAB_SIZE):
        strings.append(tk.special_name(token))
        types.append(TOKEN_TYPE_CONTROL)
    return strings, types
