"""Model sources: local paths, and Hugging Face downloads as far as an offline machine allows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harmony_chat.backends.sources import resolve_model
from harmony_chat.errors import ModelError

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _download(cache: Path, repo: str, filename: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\nfrom harmony_chat.backends.sources import download_from_hub\n"
        "from harmony_chat.errors import DownloadError\n"
        f"try:\n    print(download_from_hub({repo!r}, {filename!r}))\n"
        "except DownloadError as error:\n    print('DownloadError:', error)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(cache.parent)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)


def test_hub_download_is_found_in_the_cache_offline(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    repo_dir = cache / "models--someone--gpt-oss-20b-GGUF"
    (repo_dir / "refs").mkdir(parents=True)
    (repo_dir / "refs" / "main").write_text(COMMIT)
    snapshot = repo_dir / "snapshots" / COMMIT
    snapshot.mkdir(parents=True)
    (snapshot / "model.gguf").write_bytes(b"GGUF")
    result = _download(cache, "someone/gpt-oss-20b-GGUF", "model.gguf")
    assert result.stdout.strip() == str(snapshot / "model.gguf"), result.stderr


def test_hub_download_offline_and_not_cached_is_one_clear_error(tmp_path: Path) -> None:
    result = _download(tmp_path / "hub", "someone/missing-GGUF", "model.gguf")
    assert result.stdout.startswith("DownloadError: someone/missing-GGUF/model.gguf is not in the local Hugging Face")


def test_local_model_paths(tmp_path: Path) -> None:
    assert resolve_model(None, None, None) is None
    assert resolve_model(Path("~/m.gguf"), None, None) == Path.home() / "m.gguf"
    with pytest.raises(ModelError, match="not both"):
        resolve_model(tmp_path, "a/b", "c")
    with pytest.raises(ModelError, match="go together"):
        resolve_model(None, None, "c")
