"""Model sources: local paths, and Hugging Face downloads as far as an offline machine allows."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harmony_chat.backends.sources import resolve_model
from harmony_chat.errors import ModelError

ROOT = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _download(cache: Path, repo: str, filename: str, **env_changes: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys\nfrom harmony_chat.backends.sources import download_from_hub\n"
        "from harmony_chat.errors import DownloadError\n"
        f"try:\n    print(download_from_hub({repo!r}, {filename!r}))\n"
        "except DownloadError as error:\n    print('DownloadError:', error)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(cache.parent), **env_changes}
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


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_unreachable_hub_is_one_line_without_retries(tmp_path: Path) -> None:
    """Online but the Hub does not answer: one clear line, no retry lines (it used to retry ~23 s)."""
    endpoint = f"http://127.0.0.1:{_closed_port()}"  # refuses connections at once
    result = _download(
        tmp_path / "hub", "someone/gpt-oss-20b-GGUF", "model.gguf", HF_HUB_OFFLINE="0", HF_ENDPOINT=endpoint
    )
    assert result.stdout.startswith(
        "DownloadError: someone/gpt-oss-20b-GGUF/model.gguf is not in the local Hugging Face cache"
        " and the Hub cannot be reached"
    ), result.stdout + result.stderr
    assert result.stdout.count("\n") == 1
    assert "Retry" not in result.stderr and "thrown while requesting" not in result.stderr, result.stderr


class _FakeHub(BaseHTTPRequestHandler):
    """Serves one file the way the Hub's ``resolve`` endpoint does (HEAD for metadata, then GET)."""

    body = b"GGUF from the fake hub"

    def _headers(self) -> bool:
        if self.path != "/someone/gpt-oss-GGUF/resolve/main/model.gguf":
            self.send_response(404)
            self.send_header("X-Error-Code", "EntryNotFound")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return False
        self.send_response(200)
        self.send_header("ETag", '"0123abcd"')
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        return True

    def do_HEAD(self) -> None:  # noqa: N802 - the http.server API
        self._headers()

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        if self._headers():
            self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server API
        return None


@pytest.fixture
def fake_hub() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)


def test_download_from_a_reachable_hub(tmp_path: Path, fake_hub: str) -> None:
    online = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": fake_hub, "HF_HUB_DISABLE_XET": "1"}
    result = _download(tmp_path / "hub", "someone/gpt-oss-GGUF", "model.gguf", **online)
    path = Path(result.stdout.strip())
    assert path.read_bytes() == _FakeHub.body, result.stdout + result.stderr
    missing = _download(tmp_path / "hub", "someone/gpt-oss-GGUF", "other.gguf", **online)
    assert missing.stdout == "DownloadError: 'other.gguf' is not in Hugging Face repository 'someone/gpt-oss-GGUF'\n"


def test_local_model_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model(None, None, None) is None
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    assert resolve_model(Path("~/m.gguf"), None, None) == tmp_path / "m.gguf"
    with pytest.raises(ModelError, match="model file not found: .*missing.gguf"):
        resolve_model(tmp_path / "missing.gguf", None, None)
    with pytest.raises(ModelError, match="not both"):
        resolve_model(tmp_path, "a/b", "c")
    with pytest.raises(ModelError, match="go together"):
        resolve_model(None, None, "c")
