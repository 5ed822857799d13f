"""Expensive test inputs made once per machine under ``tests/.cache/`` and shared by every run and worker.

The vocabulary derived from the pocket GGUF, the BPE merges and the tiny gpt-oss GGUF take most of a
minute to make; pytest-xdist runs one session per worker, so session fixtures alone would make them once
per worker and once per run. Each file is made under a file lock (a second worker waits, then reads
it), written to a temporary name and renamed, so a reader sees no file or a whole one. Names carry a
hash of what they are made from (the code and data that produce them), so a change makes a new file
instead of reusing a stale one. ``rm -r tests/.cache`` is always safe.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from filelock import FileLock

CACHE = Path(__file__).resolve().parents[1] / ".cache"
"""``tests/.cache`` (git ignores it)."""


def fingerprint(*parts: bytes | str | Path, length: int = 16) -> str:
    """A short sha256 over ``parts`` (a path contributes its bytes, a string its UTF-8)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.read_bytes() if isinstance(part, Path) else part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little") + data)
    return digest.hexdigest()[:length]


def source_files(modules: Iterable[str]) -> list[Path]:
    """The source files of ``harmony_chat`` modules (dotted names), for a fingerprint."""
    root = Path(__file__).resolve().parents[2]
    return [root.joinpath(*name.split(".")).with_suffix(".py") for name in modules]


def cached(name: str, make: Callable[[Path], None], *, valid: Callable[[Path], bool] = os.path.isfile) -> Path:
    """Return ``tests/.cache/<name>``, calling ``make(partial_path)`` once to create it when missing.

    ``make`` writes the file at the path it is given; it is renamed into place when ``make`` returns.
    ``valid`` decides whether a file already there can be used (it is made again when not).
    """
    target = CACHE / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if valid(target):
        return target
    with FileLock(str(target) + ".lock"):
        if valid(target):  # another worker made it while this one waited
            return target
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        try:
            make(partial)
            partial.replace(target)
        finally:
            partial.unlink(missing_ok=True)
    return target
