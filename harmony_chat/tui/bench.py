"""The TUI under load: ``harmony-chat bench --tui`` (a benchmark, not a timed test).

Drives the headless app from the replay backend at full speed with a long Markdown-heavy answer
(code blocks, lists, tables) and measures the tokens per second the UI absorbs, whether a backlog
grows (the lag between a batch's posting and its rendering), input latency while streaming, and
memory at the end; plus start to first paint in fresh processes on a real terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harmony_chat.backends.base import ModelBackend, SamplingParams
from harmony_chat.backends.replay import ReplayBackend
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import default_settings

_SECTION = (
    "## Step {n}\n\nSome **bold** text, `inline code` and a list:\n\n- first item\n- second item\n- third item\n\n"
    "```python\ndef step_{n}(values: list[int]) -> int:\n    total = 0\n    for value in values:\n"
    "        total += value * {n}\n    return total\n```\n\n"
    "| name | value |\n|---|---|\n| step | {n} |\n| ok | yes |\n\n"
)


def long_answer(encoding: Any, tokens: int) -> list[int]:
    """A final answer of at least ``tokens`` tokens of Markdown, as a replayable completion."""
    ids: list[int] = list(encoding.encode("<|channel|>final<|message|>", allowed_special="all"))
    n = 0
    while len(ids) < tokens:
        n += 1
        ids += encoding.encode(_SECTION.format(n=n))
    return ids + list(encoding.encode("<|return|>", allowed_special="all"))


class PacedReplay(ReplayBackend):
    """Replays at a steady rate the way a fast engine's stream arrives: token ``i`` is due at ``i / rate``.

    A reader that falls behind gets every token already due at once, as from a socket buffer or an
    engine that keeps decoding. (A sleep before each token, like ``ReplayBackend(delay_s=...)``, cannot
    pace 2,500 tokens a second on this machine: each wake-up waits for the scheduler and for the GIL,
    so even with no UI it delivers about 1,700 to 1,900.)
    """

    QUANTUM_S = 0.004
    """Tokens due within this much of now come at once (a network packet or an engine's chunk)."""

    def __init__(self, turns: list[list[int]], rate: float, name: str) -> None:
        super().__init__(turns=turns, name=name)
        self.rate = rate
        self.started_at = 0.0
        """``time.monotonic()`` when the stream began (its first token was due)."""

    def generate(
        self,
        prompt: Sequence[int],
        sampling: SamplingParams,
        stop_ids: Collection[int],
        should_stop: Callable[[], bool],
    ) -> Generator[int, None, None]:
        """Yield the recorded tokens no earlier than their due time."""
        started = self.started_at = time.monotonic()
        for index, token in enumerate(super().generate(prompt, sampling, stop_ids, should_stop)):
            wait = started + index / self.rate - time.monotonic()
            if wait > self.QUANTUM_S:
                time.sleep(wait)
            yield token


@dataclass(frozen=True, slots=True)
class TuiBenchResult:
    """What the TUI did with long answers."""

    tokens: int
    seconds: float
    tokens_per_s: float
    """Full speed: answer tokens over the time from sending to the end of the answer painted."""
    paced_target_tokens_per_s: float
    paced_tokens_per_s: float
    """What the paced run delivered on screen: its tokens over the time from the stream's first token to
    the answer painted (see :class:`PacedReplay`; the producer shares the GIL with the UI)."""
    paced_start_s: float
    """From sending the paced run's message to its stream starting (rendering and the first token's wait)."""
    batches: int
    lag_first_quarter_ms: float
    lag_last_quarter_ms: float
    lag_max_ms: float
    input_latency_median_ms: float
    input_latency_p90_ms: float
    input_latency_max_ms: float
    input_samples: int
    rss_mb: float
    first_paint_s: float

    def as_dict(self) -> dict[str, float | int]:
        """Plain data for ``--json``."""
        return {key: round(value, 4) if isinstance(value, float) else value for key, value in asdict(self).items()}


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _key_latency(prompt: Any) -> float:
    """Seconds from a key event reaching the prompt to the prompt's text showing it."""
    from textual import events

    before = len(prompt.text)
    pressed = time.perf_counter()
    prompt.post_message(events.Key("x", "x"))
    while len(prompt.text) == before:
        await asyncio.sleep(0.001)
    return time.perf_counter() - pressed


@dataclass(frozen=True, slots=True)
class _Streamed:
    """One long answer through the app."""

    lags: list[float]
    answer_tokens: int
    seconds: float
    """From sending the message to the end of the answer painted."""
    stream_seconds: float
    """From the first token due (a paced stream's start) to the end of the answer painted."""
    latencies: list[float]


async def _stream(tokens: int, rate: float | None = None, probe_input: bool = False) -> _Streamed:
    """Stream one long answer through the headless app and time it."""
    from harmony_chat.demo.pocket import pocket_model_path
    from harmony_chat.harmony.vocab import load_encoding
    from harmony_chat.tui.app import HarmonyChatApp
    from harmony_chat.tui.screenshots import wait_idle
    from harmony_chat.tui.textual_private import frame_timed
    from harmony_chat.tui.widgets.prompt import PromptInput
    from harmony_chat.tui.widgets.turn import AssistantTurn

    answer = long_answer(load_encoding(fallback_gguf=pocket_model_path()), tokens)

    paced = PacedReplay([answer], rate or 0.0, "load test")

    def factory(options: ChatOptions) -> tuple[ModelBackend, Path | None]:
        if rate is None:
            return ReplayBackend(turns=[answer], name="load test"), None
        return paced, None

    frames: list[float] = []

    TimedApp = frame_timed(HarmonyChatApp, frames, time.monotonic)
    settings = default_settings({"ui.cursor_blink": False, "sampling.max_tokens": len(answer) + 16})
    app = TimedApp(ChatOptions(settings, replay_demo=True), backend_factory=factory)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_idle(pilot)
        chat = app.chat
        started = time.monotonic()
        chat.post_message(PromptInput.Submitted("Write the long answer."))
        while not chat.turn_done_at:
            if probe_input and chat.generating:
                latencies.append(await _key_latency(chat.prompt))
            await asyncio.sleep(0.05 if probe_input else 0.01)
        await pilot.pause()  # lay out and paint the end: blocks are drawn when laid out
        # The end is on screen in the first frame after the turn's last events were applied (not
        # when this loop, polling, noticed it; nor a later frame of the status bar's clock).
        painted = next((frame for frame in frames if frame >= chat.turn_done_at), time.monotonic())
        answer_tokens = chat.query_one(AssistantTurn).answer_tokens
        stream_started = paced.started_at if rate is not None else started
        return _Streamed(list(chat.batch_lags), answer_tokens, painted - started, painted - stream_started, latencies)


FIRST_PAINT_MARK = b"Enter sends"
"""Text of the prompt's frame: on the terminal, the chat screen has been painted."""


FIRST_PAINT_STARTS = 5
"""Timed starts of the app; the first paint reported is their median (after one untimed start)."""


def first_paint_seconds(starts: int = FIRST_PAINT_STARTS, timeout_s: float = 60.0) -> float:
    """Median seconds from starting ``python -m harmony_chat`` in a pseudo-terminal to the chat screen.

    A real terminal, as a user starts the app (its own empty home, config and data folders, so
    nothing of the user's is read or written); the app is killed once the screen shows. Python
    keeps its bytecode cache as it does for any installed app (``pip install`` compiles it; an
    inherited ``PYTHONDONTWRITEBYTECODE`` would make every start compile the app's modules
    again): one untimed start fills it, then ``starts`` starts are timed.
    """
    import os
    import tempfile

    with tempfile.TemporaryDirectory(prefix="harmony-chat-paint-") as home:
        env = os.environ | {
            "HOME": home,
            "HARMONY_CHAT_CONFIG_DIR": str(Path(home, "config")),
            "HARMONY_CHAT_DATA_DIR": str(Path(home, "data")),
            "TERM": "xterm-256color",
            "COLUMNS": "100",
            "LINES": "30",
        }
        env.pop("TEXTUAL", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        package_root = str(Path(__file__).resolve().parents[2])  # this very harmony_chat, however installed
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")]))
        _start_to_paint(env, home, timeout_s)
        return statistics.median(_start_to_paint(env, home, timeout_s) for _ in range(starts))


def _start_to_paint(env: dict[str, str], home: str, timeout_s: float) -> float:
    """Start the app once in a new pseudo-terminal; seconds until its chat screen shows."""
    import os
    import pty
    import select
    import signal

    leader, follower = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "harmony_chat"],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=home,
        start_new_session=True,
    )
    os.close(follower)
    seen = b""
    try:
        while time.perf_counter() - started < timeout_s:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the app ended and the terminal closed
                break
            seen = (seen + chunk)[-4096:]
            if FIRST_PAINT_MARK in seen:
                return time.perf_counter() - started
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        os.close(leader)
    tail = seen.decode(errors="replace")[-300:]
    raise RuntimeError(f"the app did not paint its chat screen within {timeout_s:.0f} s; it wrote: {tail!r}")


def run_tui_bench(tokens: int = 20000, paced_tokens: int = 4000, rate: float = 2500.0) -> TuiBenchResult:
    """Measure the TUI under load.

    First ``tokens`` stream at full speed (throughput); then ``paced_tokens`` stream at ``rate``
    tokens per second while key presses probe input latency and batch lags show whether a
    backlog builds; last, start to first paint in fresh processes.
    """
    full = asyncio.run(_stream(tokens))
    answer_tokens, elapsed = full.answer_tokens, full.seconds
    rss = _rss_mb()
    paced = asyncio.run(_stream(paced_tokens, rate, probe_input=True))
    lags, latencies = paced.lags, paced.latencies
    quarter = max(1, len(lags) // 4)
    ordered = sorted(latencies) or [0.0]
    generated = answer_tokens + 4  # the header and stop tokens around the answer
    return TuiBenchResult(
        tokens=generated,
        seconds=elapsed,
        tokens_per_s=generated / elapsed,
        paced_target_tokens_per_s=rate,
        paced_tokens_per_s=(paced.answer_tokens + 4) / paced.stream_seconds,
        paced_start_s=paced.seconds - paced.stream_seconds,
        batches=len(lags),
        lag_first_quarter_ms=statistics.median(lags[:quarter]) * 1000,
        lag_last_quarter_ms=statistics.median(lags[-quarter:]) * 1000,
        lag_max_ms=max(lags) * 1000,
        input_latency_median_ms=statistics.median(ordered) * 1000,
        input_latency_p90_ms=ordered[int(len(ordered) * 0.9)] * 1000,
        input_latency_max_ms=ordered[-1] * 1000,
        input_samples=len(latencies),
        rss_mb=rss,
        first_paint_s=first_paint_seconds(),
    )


def print_tui_report(result: TuiBenchResult, out: Any, as_json: bool) -> None:
    """Print a rich table, or one JSON object."""
    import json

    if as_json:
        print(json.dumps(result.as_dict()), file=out)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="harmony-chat TUI under load (replay backend, Markdown-heavy answer)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("target")
    table.add_row("absorbed at full speed", f"{result.tokens_per_s:.0f} tok/s ({result.tokens} tokens)", ">= 3000")
    table.add_row(
        "batch lag, first / last quarter",
        f"{result.lag_first_quarter_ms:.0f} / {result.lag_last_quarter_ms:.0f} ms",
        "not growing",
    )
    table.add_row(
        "input latency while streaming",
        f"median {result.input_latency_median_ms:.1f} ms, p90 {result.input_latency_p90_ms:.1f} ms, "
        f"max {result.input_latency_max_ms:.0f} ms",
        "< 50 ms",
    )
    table.add_row(
        "paced stream delivered",
        f"{result.paced_tokens_per_s:.0f} of {result.paced_target_tokens_per_s:.0f} tok/s "
        f"(+ {result.paced_start_s * 1000:.0f} ms from send to its first token)",
        ">= 95 %",
    )
    table.add_row("memory after the full-speed answer", f"{result.rss_mb:.0f} MB RSS", "< 250 MB")
    table.add_row(f"start to first paint (median of {FIRST_PAINT_STARTS})", f"{result.first_paint_s:.2f} s", "< 0.5 s")
    Console(file=out, width=max(Console(file=out).width, 110)).print(table)
