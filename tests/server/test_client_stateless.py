"""openai-agents with ``store=False``: a stateless tool loop that keeps its chain of thought sealed.

gpt-oss needs the analysis of a turn that called a tool again in the next request. A client that
lets the server store nothing asks for ``include: ["reasoning.encrypted_content"]`` and replays the
reasoning items it got; here openai-agents (the ``clients`` extra, skipped without it, as in
:mod:`tests.server.test_client_frameworks`) runs its agent loop against the pocket model on
loopback, and the test checks what went over the wire: both requests stateless, the blob sent back
in the second, no reasoning in plain text anywhere, and the sealed analysis in the model's prompt.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Collection, Generator, Iterator, Sequence
from types import ModuleType
from typing import Any

import httpx2
import pytest
from openai import AsyncOpenAI, DefaultAsyncHttpxClient, NotFoundError
from openai_harmony import HarmonyEncoding

from harmony_chat.backends.base import SamplingParams
from harmony_chat.backends.llama_cpp import LlamaCppBackend
from harmony_chat.demo.pocket import POCKET_NAME
from harmony_chat.server.reasoning_seal import KEY_BYTES, KEY_ENV, ReasoningSeal
from tests.server.conftest import RunningServer
from tests.server.test_client_frameworks import (  # loopback_only: autouse, nothing beyond loopback
    CITY,
    CLIENTS,
    WEATHER_ANSWER,
    WEATHER_RESULT,
    _framework,
    _weather_tool,
    loopback_only,  # noqa: F401
)

pytestmark = [pytest.mark.llama]

INCLUDE = "reasoning.encrypted_content"
KEY = bytes(range(100, 100 + KEY_BYTES))
PLAN = f"User wants the weather in {CITY}."
"""How the pocket model's analysis before the call begins."""


@pytest.fixture(scope="module", autouse=True)
def reasoning_key() -> Iterator[bytes]:
    """The key the module's server seals with (set before its first sealed request)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, base64.b64encode(KEY).decode("ascii"))
        yield KEY


@pytest.fixture(scope="module")
def agents() -> ModuleType:
    module = _framework("agents", CLIENTS)
    module.set_tracing_disabled(True)
    return module


@pytest.fixture
def prompts(pocket_backend: LlamaCppBackend, encoding: HarmonyEncoding, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every prompt the pocket model is given while the test runs (decoded)."""
    seen: list[str] = []
    generate = pocket_backend.generate

    def recording(
        prompt: Sequence[int], sampling: SamplingParams, stop_ids: Collection[int], should_stop: Callable[[], bool]
    ) -> Generator[int, None, None]:
        seen.append(str(encoding.decode(list(prompt))))
        return generate(prompt, sampling, stop_ids, should_stop)

    monkeypatch.setattr(pocket_backend, "generate", recording)
    return seen


def _recording_client(server: RunningServer, bodies: list[dict[str, Any]]) -> AsyncOpenAI:
    """A client that keeps the JSON body of every ``POST /v1/responses`` it sends."""

    async def record(request: httpx2.Request) -> None:
        if request.method == "POST" and request.url.path.endswith("/responses"):
            bodies.append(json.loads(request.content))

    http = DefaultAsyncHttpxClient(event_hooks={"request": [record]})
    return AsyncOpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=60, http_client=http)


@pytest.mark.parametrize("streamed", [False, True])
async def test_openai_agents_store_false_sends_the_sealed_reasoning_back(
    agents: ModuleType, pocket_server: RunningServer, prompts: list[str], streamed: bool
) -> None:
    calls: list[str] = []
    bodies: list[dict[str, Any]] = []
    client = _recording_client(pocket_server, bodies)
    settings = agents.ModelSettings(store=False, response_include=[INCLUDE])
    agent = agents.Agent(
        name="assistant",
        instructions="You are a helpful assistant.",
        model=agents.OpenAIResponsesModel(model=POCKET_NAME, openai_client=client),
        model_settings=settings,
        tools=[agents.function_tool(_weather_tool(calls))],
    )
    question = f"What's the weather in {CITY}?"
    if streamed:
        run = agents.Runner.run_streamed(agent, question)
        async for _ in run.stream_events():
            pass
        result: Any = run
    else:
        result = await agents.Runner.run(agent, question)
    assert calls == [CITY] and result.final_output == WEATHER_ANSWER

    # both requests stateless, asking for sealed reasoning; the second replays the first's items
    assert len(bodies) == 2
    for body in bodies:
        assert body["store"] is False and body["include"] == [INCLUDE] and "previous_response_id" not in body
    sent = [item for item in bodies[1]["input"] if item.get("type") == "reasoning"]
    assert len(sent) == 1 and isinstance(sent[0]["encrypted_content"], str)
    assert not sent[0].get("content")  # the text went out sealed only
    outputs = [item for item in bodies[1]["input"] if item.get("type") == "function_call_output"]
    assert [item["output"] for item in outputs] == [WEATHER_RESULT]

    # what was sealed is the model's analysis before the call, and it reached the next prompt
    seal = ReasoningSeal(POCKET_NAME, KEY)
    analysis = seal.open(sent[0]["encrypted_content"])
    assert analysis.startswith(PLAN) and "<|" not in analysis
    after_tool = [prompt for prompt in prompts if "<|start|>functions.get_weather to=assistant" in prompt]
    assert after_tool and all(f"<|channel|>analysis<|message|>{analysis}<|end|>" in p for p in after_tool)

    # the agent saw no plain reasoning, and the server kept nothing
    reasoning = [item.raw_item for item in result.new_items if item.type == "reasoning_item"]
    assert len(reasoning) == 2 and all(item.encrypted_content and not item.content for item in reasoning)
    assert PLAN not in json.dumps(bodies) and PLAN not in json.dumps([item.model_dump() for item in reasoning])
    for response in result.raw_responses:
        with pytest.raises(NotFoundError):
            await client.responses.retrieve(response.response_id)
