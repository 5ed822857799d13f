"""The collector policy: paused for startup, frozen between turns, released when widgets go."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from harmony_chat import collector
from harmony_chat.cli import main


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture(autouse=True)
def restore_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    collector.release()
    collector.resume()
    gc.enable()
    gc.set_threshold(*thresholds)
    gc.collect()


def test_pause_stops_automatic_collection_until_resume() -> None:
    collector.pause()
    assert not gc.isenabled()
    collector.resume()
    assert gc.isenabled()


def test_resume_leaves_a_collector_someone_else_disabled() -> None:
    gc.disable()
    collector.pause()  # already off: not ours to turn back on
    collector.resume()
    assert not gc.isenabled()


def test_settle_resumes_and_freezes_what_is_alive() -> None:
    collector.pause()
    collector.settle()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    assert gc.get_threshold() == collector.APP_THRESHOLDS
    collector.release()
    assert gc.get_freeze_count() == 0


def test_settle_collects_garbage_instead_of_freezing_it() -> None:
    gc.disable()  # so that only settle can collect the cycle
    node = Node()
    gone = weakref.ref(node)
    del node
    assert gone() is not None
    gc.enable()
    collector.settle()
    assert gone() is None


def test_garbage_frozen_with_the_living_is_collected_after_release() -> None:
    node = Node()
    gone = weakref.ref(node)
    collector.settle()
    del node
    gc.collect()
    assert gone() is not None  # frozen: out of the collector's reach
    collector.release()
    collector.settle()  # collects what was released, then freezes again
    assert gone() is None


def test_every_command_but_the_app_resumes_the_collector(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HARMONY_CHAT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HARMONY_CHAT_CONFIG_DIR", str(tmp_path))
    collector.pause()
    assert main(["history", "list"]) == 0
    assert gc.isenabled()
