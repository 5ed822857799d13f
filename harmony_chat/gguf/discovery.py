"""Find gpt-oss GGUF files already on this machine. No UI imports.

Looks in the Hugging Face cache, LM Studio's and llama.cpp's model dirs, and ``~/models``;
keeps files whose GGUF header says ``gpt-oss`` (a cheap header read, no model load).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from harmony_chat.errors import ModelError
from harmony_chat.gguf.inspect import check_gguf_file

_MAX_FILES = 2000


@dataclass(frozen=True, slots=True)
class FoundModel:
    """A gpt-oss GGUF found on disk."""

    path: Path
    source: str
    size_bytes: int

    @property
    def size_gb(self) -> float:
        """Size in gigabytes."""
        return self.size_bytes / 1e9

    @property
    def size_text(self) -> str:
        """The size in the decimal unit that fits it (``12.8 GB``, ``38.2 MB``), as disks count."""
        return human_size(self.size_bytes)


def human_size(size_bytes: int) -> str:
    """``size_bytes`` in the decimal unit that fits, one decimal from kB up (``999.9 MB``, then ``1.0 GB``).

    rich's ``filesize.decimal`` writes ``1,000.0 MB`` just below a gigabyte, hence these few lines.
    """
    if size_bytes < 1000:
        return f"{size_bytes} B"
    size = size_bytes / 1000
    for unit in ("kB", "MB", "GB"):
        if round(size, 1) < 1000:
            return f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"


def search_dirs() -> list[tuple[str, Path]]:
    """Return (source name, folder) pairs to search, most specific first."""
    home = Path.home()
    hf_home = Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface"))
    hub = Path(os.environ.get("HF_HUB_CACHE", hf_home / "hub"))
    llama_cache = Path(os.environ.get("LLAMA_CACHE", home / ".cache" / "llama.cpp"))
    return [
        ("Hugging Face cache", hub),
        ("LM Studio", home / ".lmstudio" / "models"),
        ("LM Studio", home / ".cache" / "lm-studio" / "models"),
        ("llama.cpp cache", llama_cache),
        ("~/models", home / "models"),
    ]


def _is_later_split(path: Path) -> bool:
    """Split GGUFs (``-00002-of-00003.gguf``) load from their first part only."""
    stem = path.stem
    return "-of-" in stem and not stem.rsplit("-of-", 1)[0].endswith("-00001")


def find_models(dirs: list[tuple[str, Path]] | None = None) -> list[FoundModel]:
    """Return every gpt-oss GGUF in the search dirs, largest first, without duplicates."""
    found: dict[Path, FoundModel] = {}
    seen = 0
    for source, folder in dirs if dirs is not None else search_dirs():
        if not folder.is_dir():
            continue
        for path in folder.rglob("*.gguf"):
            seen += 1
            if seen > _MAX_FILES:
                break
            if _is_later_split(path):
                continue
            try:
                real = path.resolve()
                if real in found or check_gguf_file(real) != "gpt-oss":
                    continue
                found[real] = FoundModel(path, source, real.stat().st_size)
            except (ModelError, OSError):
                continue
    return sorted(found.values(), key=lambda model: model.size_bytes, reverse=True)
