"""Test fixtures: the offline vocabulary, an isolated cache dir, and a tiny gpt-oss GGUF.

The suite needs nothing beside the repository and no network: the vocabulary is derived from the
pocket GGUF that ships in ``harmony_chat/demo/`` (or taken from ``TIKTOKEN_ENCODINGS_BASE`` when set). What takes
long to make (that vocabulary, the BPE merges, the tiny GGUF) is made once per machine under
``tests/.cache/`` and shared by every run and pytest-xdist worker (``tests/support/disk_cache.py``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_harmony import HarmonyEncoding

from tests.support import llama_server
from tests.support.disk_cache import cached, fingerprint, source_files

DATA = Path(__file__).resolve().parent / "data"
CHAT_TEMPLATE = DATA / "chat-template" / "gpt-oss-chat-template.jinja"
"""The chat template gpt-oss GGUFs carry (see the README beside it for its source and licence)."""


def shared_vocabulary() -> Path:
    """A folder holding ``o200k_base.tiktoken``, derived once from the shipped pocket GGUF and verified."""
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.vocab import VOCAB_FILE, VOCAB_SHA256, derive_from_gguf

    def make(partial: Path) -> None:
        with tempfile.TemporaryDirectory(dir=partial.parent) as scratch:
            (derive_from_gguf(pocket_model_path(), Path(scratch)) / VOCAB_FILE).replace(partial)

    def valid(path: Path) -> bool:
        return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == VOCAB_SHA256

    return cached(f"vocab/{VOCAB_FILE}", make, valid=valid).parent


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """With ``-n`` and no ``--dist``, run each test file whole on one worker (pytest-xdist's ``loadfile``).

    Module fixtures (a llama-server, a loaded model, a measured rate) are then made once, and a file's
    tests keep their order, as in a serial run.
    """
    if getattr(config.option, "numprocesses", None) and getattr(config.option, "dist", None) == "no":
        config.option.dist = "loadfile"
        if hasattr(config.option, "loadscopereorder"):
            config.option.loadscopereorder = False  # keep HEAVY_FILES first (see pytest_collection_modifyitems)


def pytest_configure(config: pytest.Config) -> None:
    """Point the vocabulary at the shared copy before collection (some test modules load it on import)."""
    from harmony_chat.harmony.vocab import ENV_BASE, VOCAB_FILE

    given = os.environ.get(ENV_BASE)
    if not (given and (Path(given) / VOCAB_FILE).is_file()):
        os.environ[ENV_BASE] = str(shared_vocabulary())


HEAVY_FILES = (
    "tests/training/test_pocket_training.py",
    "tests/training/test_pocket_rates.py",
    "tests/training/test_pocket_data.py",
    "tests/demo/test_pocket.py",
)
"""The files that take minutes (training steps, measured rates, the whole training set rendered)."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist, hand out the longest files first, so the other worker runs the rest meanwhile.

    The sort is stable: every other file keeps its place, and every file the order of its tests.
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: position for position, name in enumerate(HEAVY_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Say what the run makes or builds before it starts, and what it will skip."""
    return [
        "test inputs: made once and cached in tests/.cache (vocabulary, merges, tiny GGUF; ~1 min the first time)",
        llama_server.status_line(),
    ]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say so when this run built llama-server (the next ones reuse it)."""
    line = llama_server.built_during_run_line()
    if line:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session", autouse=True)
def isolated_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the app's cache, config and data dirs out of the developer's home."""
    root = tmp_path_factory.mktemp("app-dirs")
    saved = {
        key: os.environ.get(key)
        for key in ("HARMONY_CHAT_CACHE_DIR", "HARMONY_CHAT_CONFIG_DIR", "HARMONY_CHAT_DATA_DIR")
    }
    os.environ["HARMONY_CHAT_CACHE_DIR"] = str(root / "cache")
    os.environ["HARMONY_CHAT_CONFIG_DIR"] = str(root / "config")
    os.environ["HARMONY_CHAT_DATA_DIR"] = str(root / "data")
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def encoding() -> HarmonyEncoding:
    """The harmony encoding, loaded through harmony-chat's offline vocabulary resolution."""
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.vocab import load_encoding

    return load_encoding(fallback_gguf=pocket_model_path())


@pytest.fixture(scope="session")
def vocab_file(encoding: HarmonyEncoding) -> Path:
    """The verified ``o200k_base.tiktoken`` the suite runs with."""
    from harmony_chat.harmony.vocab import VOCAB_FILE

    return Path(os.environ["TIKTOKEN_ENCODINGS_BASE"]) / VOCAB_FILE


@pytest.fixture(scope="session")
def ranks(vocab_file: Path) -> list[bytes]:
    """The o200k_base token bytes in rank order."""
    from harmony_chat.gguf.tokenizer import read_tiktoken

    return read_tiktoken(vocab_file)


@pytest.fixture(scope="session")
def merges(vocab_file: Path, request: pytest.FixtureRequest) -> list[str]:
    """BPE merges derived once (per machine) for every GGUF the suite writes."""
    from harmony_chat.gguf.tokenizer import derive_merges

    def make(partial: Path) -> None:
        partial.write_text(json.dumps(derive_merges(request.getfixturevalue("ranks"))), encoding="utf-8")

    key = fingerprint(vocab_file, *source_files(["harmony_chat.gguf.tokenizer"]))
    loaded = json.loads(cached(f"merges-{key}.json", make).read_text(encoding="utf-8"))
    assert isinstance(loaded, list)
    return loaded


@pytest.fixture(scope="session")
def tiny_gguf(vocab_file: Path, request: pytest.FixtureRequest) -> Path:
    """A 2-layer, 64-wide gpt-oss GGUF with random weights and the full o200k vocabulary (read-only, shared)."""
    from harmony_chat.gguf.writer import GptOssShape, random_tensors, write_gpt_oss_gguf

    shape = GptOssShape()
    seed = 1

    def make(partial: Path) -> None:
        chat_template = CHAT_TEMPLATE.read_text(encoding="utf-8")
        tensors = random_tensors(shape, seed=seed)
        ranks, merges = request.getfixturevalue("ranks"), request.getfixturevalue("merges")
        write_gpt_oss_gguf(partial, shape, tensors, ranks, merges=merges, chat_template=chat_template)
        partial.chmod(0o444)  # shared by every test and worker: none may change it

    modules = ["harmony_chat.gguf.writer", "harmony_chat.gguf.tokenizer", "harmony_chat.harmony.tokens"]
    libraries = [f"{name} {importlib.metadata.version(name)}" for name in ("gguf", "numpy")]  # they write it
    key = fingerprint(repr(shape), str(seed), vocab_file, CHAT_TEMPLATE, *libraries, *source_files(modules))
    return cached(f"tiny-gpt-oss-{key}.gguf", make)


@pytest.fixture
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("HF_HOME", str(home / "hf"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("LLAMA_CACHE", str(home / "llama"))
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_DIR", str(home / "config"))
    return home
