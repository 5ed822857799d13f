"""The app on a real llama-server serving the pocket gpt-oss (``harmony-chat --url``), as in process.

One server runs for the module; the test that kills it starts it again on the same port.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import RichLog

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.remote import LlamaServerBackend
from harmony_chat.chat.factory import create_backend, demo_servers
from harmony_chat.demo.pocket import POCKET_DATE, pocket_manifest, pocket_model_path
from harmony_chat.demo.weather import weather
from harmony_chat.harmony.events import StopReason
from harmony_chat.tui.app import HarmonyChatApp
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.support.llama_server import LlamaServer, llama_server_binary, serve
from tests.tui.harness import make_app, send, settle
from tests.tui.screen_text import shown
from tests.tui.test_tools_tui import ask, finish, notices, rows, tools_ready, until
from training.pocket.data import FACTS, FOLLOW_UPS
from training.pocket.texts import scaled

pytestmark = pytest.mark.llama_server


def _logit_scale() -> float:
    """How much larger the shipped file's logits are than its trained weights' (``Recipe.logit_scale``)."""
    recipe = pocket_manifest()["recipe"]
    assert isinstance(recipe, dict)
    return float(recipe["logit_scale"])


LOGIT_SCALE = _logit_scale()
RAMBLE = SamplingParams(temperature=4.0 * LOGIT_SCALE, seed=0, max_tokens=2000)
"""A sampling under which the pocket model answers :data:`RAMBLE_PROMPT` with up to 2,000 tokens of noise
(seconds of generating: found by trying temperatures and seeds on the shipped model, which was trained to
stay on its answers up to about twice the default temperature): its trained weights sampled at 4.0."""
RAMBLE_PROMPT = "Write a Python function that adds two numbers."
SIZE = (130, 40)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """The pocket model on a llama-server on loopback."""
    yield from serve(llama_server_binary(), pocket_model_path(), tmp_path_factory.mktemp("remote-tui"))


def remote_app(server: LlamaServer, values: dict[str, Any] | None = None) -> HarmonyChatApp:
    """The app as ``harmony-chat --url URL`` starts it (greedy, on the pocket model's training date)."""
    values = {"model.url": server.url, "sampling.temperature": 0.0} | (values or {})
    return make_app(factory=create_backend, replay_demo=False, start_date=POCKET_DATE, values=values)


def last_turn(app: HarmonyChatApp) -> AssistantTurn:
    return list(app.chat.query(AssistantTurn))[-1]


async def ramble(
    pilot: Pilot[Any], app: HarmonyChatApp, in_answer: bool = True, before_each: Callable[[], None] | None = None
) -> AssistantTurn:
    """Start a long answer and wait until part of it (of the reasoning: ``in_answer=False``) is in the turn.

    The engine still generates then. At this temperature a seed's output also depends on what the
    server's cache held (prompt reuse changes the logits slightly): a seed whose turn ends first
    is followed by the next seed (a bounded number of times). ``before_each`` runs before each try.
    """
    conversation = app.chat.conversation
    assert conversation is not None
    for seed in range(RAMBLE.seed or 0, (RAMBLE.seed or 0) + 8):
        conversation.sampling = replace(RAMBLE, seed=seed)
        app.chat.prompt.text = RAMBLE_PROMPT
        if before_each is not None:
            before_each()
        before = len(app.chat.query(AssistantTurn))

        def started(before: int = before) -> bool:
            return len(app.chat.query(AssistantTurn)) > before

        await pilot.press("enter")
        await until(pilot, started, "the turn")
        turn = last_turn(app)

        def far_enough(turn: AssistantTurn = turn) -> bool:
            return (turn.answer_tokens if in_answer else turn.answer_tokens + turn.analysis_tokens) >= 20

        await until(pilot, lambda: far_enough() or not app.chat.generating, "part of the turn, or its end")
        if far_enough() and app.chat.generating:
            return turn
        await finish(pilot)
    raise AssertionError("no seed gave a long answer")


async def test_chat_hides_reasoning_cycles_effort_and_shows_tokens(server: LlamaServer) -> None:
    app = remote_app(server)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            host = f"127.0.0.1:{server.port}"
            status = app.chat.status
            assert isinstance(app.chat.conversation and app.chat.conversation.backend, LlamaServerBackend)
            assert (status.model, status.device, status.context_size) == (
                "pocket-gpt-oss",
                f"llama-server @ {host}",
                4096,
            )
            assert f"pocket-gpt-oss · llama-server @ {host} · effort medium" in str(status.render())
            first, second, follow_analysis, follow_final = FOLLOW_UPS[0]
            fact = next(item for item in FACTS if item[0] == first)
            await send(pilot, first)
            turn = last_turn(app)
            assert turn.final_text == fact[1] and turn.stop_reason is StopReason.RETURN
            assert not turn.query_one(".analysis").display and fact[3] not in shown(turn)  # the reasoning is hidden
            assert "Reasoning: medium" in app.chat.inspector.prompt_text
            assert status.speed > 0 and status.ttft > 0

            await pilot.press("ctrl+r")
            assert status.effort == "high" and "effort high" in str(status.render())
            after_first = status.context_used
            assert after_first > app.chat.inspector.prompt_tokens  # the prompt and the answer
            await send(pilot, second)
            turn = last_turn(app)
            assert turn.final_text == follow_final
            # the context bar follows every turn on an engine too (it once stayed at the first turn's)
            engine = app.chat.conversation and app.chat.conversation.backend
            assert isinstance(engine, LlamaServerBackend)
            figures = engine.last_stats  # the second turn's only generation call
            assert figures.prompt_tokens == app.chat.inspector.prompt_tokens != after_first
            assert status.context_used == figures.prompt_tokens + figures.generated_tokens
            prompt = app.chat.inspector.prompt_text
            assert "Reasoning: high" in prompt and "Reasoning: medium" not in prompt
            assert prompt.count(first) == 1  # the first exchange is in the new prompt
            assert status.cached is not None  # reported (this turn changed the effort, so the system message)

            await pilot.press("f12")
            await pilot.pause(0.2)
            analysis = turn.query_one(".analysis")
            high = scaled(follow_analysis, "high")  # the raw chain of thought at high effort
            assert analysis.display and high in str(analysis.render())
            inspector = app.chat.inspector
            assert inspector.display and len(inspector.query_one(RichLog).lines) > 10
            channels = {token.channel for token in inspector.buffer}
            assert {"analysis", "final"} <= channels
            facts = str(inspector.query_one("#inspector-facts").render())
            assert facts.startswith(f"prompt {inspector.prompt_tokens} tokens · ")

            await send(pilot, FACTS[1][0])  # same effort: the engine serves the earlier turns from its cache
            conversation = app.chat.conversation
            assert conversation is not None and status.cached is not None
            assert status.cached > len(conversation.session.history)
            assert f"{status.cached} cached" in str(status.render())
            assert inspector.reused == status.cached  # the token view says the same
    finally:
        app.release()


async def test_tool_call_is_approved_and_answered_with_the_result(server: LlamaServer) -> None:
    app = remote_app(server, {"mcp.servers": demo_servers()})
    try:
        async with app.run_test(size=SIZE) as pilot:
            await tools_ready(pilot)
            modal = await ask(pilot, "What's the weather in Tokyo?")
            assert (modal.review.server, modal.review.tool) == ("weather", "get_weather")
            assert json.loads(modal.review.arguments) == {"location": "Tokyo"}
            await pilot.press("y")
            await finish(pilot)
            (row,) = rows(app)
            result = json.dumps(weather("Tokyo"))
            assert row.state == "done" and row.result is not None and row.result.text == result
            assert last_turn(app).final_text == "It is 24 °C and cloudy in Tokyo right now."
            expected = f"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{result}<|end|>"
            assert expected in app.chat.inspector.prompt_text
    finally:
        app.release()


async def test_escape_stops_the_engine(server: LlamaServer) -> None:
    app = remote_app(server)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            counts: list[float] = []

            def count() -> None:  # the tokens generated so far, once earlier tries (ended turns) are done
                server.wait_idle()
                counts.append(server.metric("tokens_predicted_total"))

            turn = await ramble(pilot, app, in_answer=False, before_each=count)
            await pilot.press("escape")
            await finish(pilot)
            assert "stopped" in str(turn.query_one(".footer").render())
            server.wait_idle()
            generated = server.metric("tokens_predicted_total") - counts[-1]
            assert 20 <= generated < RAMBLE.max_tokens  # the server stopped generating too
    finally:
        app.release()


async def test_killed_server_gives_one_notice_and_keeps_the_partial_answer(server: LlamaServer) -> None:
    app = remote_app(server)
    try:
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await settle(pilot)
            turn = await ramble(pilot, app, in_answer=False)
            server.kill()
            await finish(pilot)
            assert turn.stop_reason is StopReason.ERROR
            (error,) = turn.query(".error")  # one notice, in the turn, naming the server; no pop-up besides
            assert shown(error).startswith(f"⚠ the connection to llama-server at 127.0.0.1:{server.port} broke")
            assert notices(app) == [] and app.chat.status.state == "error"
            conversation = app.chat.conversation
            assert conversation is not None and conversation.session.turns[-1].stop_reason == "error"
            kept = conversation.session.history[-1]  # what was generated is kept: the answer, or the reasoning
            partial = kept.content[0].text
            assert partial and kept.channel in ("analysis", "final")
            assert partial == turn.final_text if kept.channel == "final" else turn.final_text == ""
            server.start()  # the same port answers again: the conversation goes on, the partial answer in it
            conversation.sampling = SamplingParams(temperature=0.0, max_tokens=200)
            await send(pilot, FACTS[5][0])
            after = last_turn(app)  # the engine answers again (what the pocket model makes of the noise varies:
            # after it, this build calls its weather tool, which this app does not offer, so nothing runs)
            ended = (StopReason.RETURN, StopReason.FINAL, StopReason.CALL)
            assert after.stop_reason in ended and app.chat.status.state == "idle"
            assert after.analysis_tokens + after.answer_tokens > 0
            if kept.channel == "final":  # a kept answer is in the next prompt (reasoning before it is dropped)
                assert partial[:40] in app.chat.inspector.prompt_text
    finally:
        app.release()
        if server.process is not None and server.process.poll() is not None:
            server.start()
