"""The agent frameworks and client libraries people point at OpenAI-compatible servers, against the pocket model.

openai-agents, pydantic-ai, litellm and smolagents come with the ``clients`` extra
(``pip install -e ".[test,clients]"``), instructor with the ``instructor`` extra (it cannot share an
environment with the others: see pyproject.toml); each test imports its framework with
:func:`pytest.importorskip`, so without the extra it is skipped and says which to install. One real
server on loopback serves the module (the pocket model, greedy, so its answers are the trained
ones); each test asserts what the framework hands its user: the tool really ran and its output
reached the answer, a structured output validated on the first try, streamed text arrived in order,
context survived between requests, reasoning came where the API promises it, and no harmony markup
leaked. Nothing but loopback may be reached while the module runs (a guard on every socket connect
and name lookup). smolagents' agents speak a text protocol the pocket model never learnt, so their
turns are replayed instead (by a server of their own).
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI
from openai_harmony import HarmonyEncoding
from pydantic import BaseModel

from harmony_chat.demo.pocket import POCKET_NAME
from tests.server.conftest import RunningServer, replay_server
from training.pocket.data import FACTS, FOLLOW_UPS, SHOPPING_INSTRUCTIONS, WEATHER

pytestmark = [
    pytest.mark.llama,
    pytest.mark.filterwarnings("ignore:.*using the `ReadOnly` qualifier:UserWarning"),  # litellm's types
]

CLIENTS = 'the clients extra is not installed (pip install -e ".[test,clients]")'
INSTRUCTOR = 'the instructor extra is not installed (pip install -e ".[test,instructor]")'
QUESTION, ANSWER, _, REASONING, _ = FACTS[0]  # What is 2 + 2? and its answer and analysis at medium effort
FIRST, FOLLOW_UP, _, FOLLOW_UP_ANSWER = FOLLOW_UPS[0]  # "And what is that times 3?" after 2 + 2
CITY, WEATHER_RESULT, WEATHER_ANSWER = next(entry for entry in WEATHER if entry[0] == "Oslo")
PREAMBLE = f"Let me check the weather in {CITY}."
SHOPPING_REQUEST = "I need to buy coffee, soda and eggs."
SHOPPING_ITEMS = ["coffee", "soda", "eggs"]
MARKUP = "<|"
"""What any harmony token would leave in a text that leaked it."""
ENVIRONMENT = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm fetches its model cost map at import otherwise
    "OPENAI_AGENTS_DISABLE_TRACING": "1",  # openai-agents exports traces to api.openai.com otherwise
}


class ShoppingList(BaseModel):
    """The pocket model's learnt response format: the items the user needs to buy."""

    items: list[str]


class Weather(BaseModel):
    """Where the user asks about the weather."""

    location: str


def _loopback(host: object) -> bool:
    """Whether a connection or lookup goes to this machine only (None looks up an address to bind)."""
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    if host is None or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(str(host).split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(scope="module", autouse=True)
def loopback_only() -> Iterator[list[str]]:
    """Refuse (and record) every connection and name lookup beyond loopback while the module runs."""
    attempts: list[str] = []
    connect, connect_ex, getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

    def check(target: object) -> None:
        if isinstance(target, tuple) and not _loopback(target[0]):
            attempts.append(repr(target[:2]))
            raise ConnectionRefusedError(f"the client framework tests reach nothing beyond loopback: {target!r}")

    def guarded_connect(sock: socket.socket, address: Any) -> None:
        check(address)
        connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
        check(address)
        return connect_ex(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        check((host, None))
        return getaddrinfo(host, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        for name, value in ENVIRONMENT.items():
            patch.setenv(name, value)
        patch.setattr(socket.socket, "connect", guarded_connect)
        patch.setattr(socket.socket, "connect_ex", guarded_connect_ex)
        patch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
        yield attempts
    assert not attempts, f"a client framework tried to reach beyond loopback: {attempts}"


def _framework(name: str, reason: str) -> ModuleType:
    assert os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP") == "True"  # imported under the guard's environment
    module: ModuleType = pytest.importorskip(name, reason=reason)
    return module


def _clean(*texts: object) -> None:
    for text in texts:
        assert isinstance(text, str) and text and MARKUP not in text, f"not clean text: {text!r}"


def _async_client(server: RunningServer) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=60)


def _weather_tool(calls: list[str]) -> Callable[[str], str]:
    """The demo's ``get_weather`` as a framework's function tool: it answers what the demo server would."""
    results = {city: result for city, result, _ in WEATHER}

    def get_weather(location: str) -> str:
        """Gets the current weather in a city."""
        calls.append(location)
        return results.get(location, '{"error": "unknown city"}')

    return get_weather


# -- openai-agents ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def agents() -> ModuleType:
    module = _framework("agents", CLIENTS)
    module.set_tracing_disabled(True)
    return module


def _agent(agents: ModuleType, server: RunningServer, api: str, **options: Any) -> Any:
    model_class = agents.OpenAIResponsesModel if api == "responses" else agents.OpenAIChatCompletionsModel
    model = model_class(model=POCKET_NAME, openai_client=_async_client(server))
    return agents.Agent(name="assistant", instructions="You are a helpful assistant.", model=model, **options)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_openai_agents_runs_the_tool_and_answers_with_its_output(
    agents: ModuleType, pocket_server: RunningServer, api: str
) -> None:
    calls: list[str] = []
    agent = _agent(agents, pocket_server, api, tools=[agents.function_tool(_weather_tool(calls))])
    result = await agents.Runner.run(agent, f"What's the weather in {CITY}?")
    assert calls == [CITY] and result.final_output == WEATHER_ANSWER
    kinds = [item.type for item in result.new_items]
    assert kinds == [
        "reasoning_item",
        "message_output_item",  # the preamble
        "tool_call_item",
        "tool_call_output_item",
        "reasoning_item",
        "message_output_item",
    ]
    assert result.new_items[3].output == WEATHER_RESULT
    reasoning = [
        part.text for item in result.new_items if item.type == "reasoning_item" for part in item.raw_item.content
    ]
    messages = [
        part.text for item in result.new_items if item.type == "message_output_item" for part in item.raw_item.content
    ]
    _clean(*reasoning, *messages)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_openai_agents_streams_the_answer_after_the_tool_in_order(
    agents: ModuleType, pocket_server: RunningServer, api: str
) -> None:
    calls: list[str] = []
    agent = _agent(agents, pocket_server, api, tools=[agents.function_tool(_weather_tool(calls))])
    run = agents.Runner.run_streamed(agent, f"What's the weather in {CITY}?")
    events: list[tuple[str, str]] = []
    async for event in run.stream_events():
        if event.type == "run_item_stream_event":
            events.append(("item", event.name))
        elif event.type == "raw_response_event" and event.data.type == "response.output_text.delta":
            events.append(("text", event.data.delta))
    items = [name for kind, name in events if kind == "item"]
    assert items.index("tool_called") < items.index("tool_output") < len(items) - 1
    assert items[-1] == "message_output_created"
    called, answered = events.index(("item", "tool_called")), events.index(("item", "tool_output"))
    before_call = "".join(text for kind, text in events[:called] if kind == "text")
    after_output = "".join(text for kind, text in events[answered:] if kind == "text")
    assert before_call == PREAMBLE  # the preamble streamed before the call, the answer after its output
    assert after_output == run.final_output == WEATHER_ANSWER
    assert calls == [CITY]


async def test_openai_agents_previous_response_id_and_conversation_id_keep_the_context(
    agents: ModuleType, pocket_server: RunningServer
) -> None:
    agent = _agent(agents, pocket_server, "responses")
    first = await agents.Runner.run(agent, FIRST)
    assert first.final_output == ANSWER and first.last_response_id
    chained = await agents.Runner.run(agent, FOLLOW_UP, previous_response_id=first.last_response_id)
    assert chained.final_output == FOLLOW_UP_ANSWER  # only the stored response said it was 4
    conversation = await _async_client(pocket_server).conversations.create()
    opened = await agents.Runner.run(agent, FIRST, conversation_id=conversation.id)
    continued = await agents.Runner.run(agent, FOLLOW_UP, conversation_id=conversation.id)
    assert (opened.final_output, continued.final_output) == (ANSWER, FOLLOW_UP_ANSWER)
    items = await _async_client(pocket_server).conversations.items.list(conversation.id, order="asc")
    roles = [(item.type, getattr(item, "role", None)) for item in items.data]
    assert roles.count(("message", "user")) == 2 and roles.count(("message", "assistant")) == 2


# -- pydantic-ai -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pydantic_ai() -> ModuleType:
    return _framework("pydantic_ai", CLIENTS)


def _pydantic_model(server: RunningServer, api: str) -> Any:
    models = pytest.importorskip("pydantic_ai.models.openai", reason=CLIENTS)
    providers = pytest.importorskip("pydantic_ai.providers.openai", reason=CLIENTS)
    provider = providers.OpenAIProvider(openai_client=_async_client(server))
    model_class = models.OpenAIResponsesModel if api == "responses" else models.OpenAIChatModel
    return model_class(POCKET_NAME, provider=provider)


def _raw_reasoning(part: Any) -> str:
    return str(part.content or "".join((part.provider_details or {}).get("raw_content") or []))


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_pydantic_ai_runs_the_tool_and_answers_with_its_output(
    pydantic_ai: ModuleType, pocket_server: RunningServer, api: str
) -> None:
    calls: list[str] = []
    agent = pydantic_ai.Agent(
        _pydantic_model(pocket_server, api),
        instructions="You are a helpful assistant.",
        tools=[pydantic_ai.Tool(_weather_tool(calls), takes_ctx=False)],
    )
    result = await agent.run(f"What's the weather in {CITY}?")
    assert calls == [CITY] and result.output == WEATHER_ANSWER
    parts = [part for message in result.all_messages() for part in message.parts]
    returns = [part.content for part in parts if part.part_kind == "tool-return"]
    # the raw reasoning: a thinking part's text from Chat Completions; from Responses (where the text is a
    # summary, none asked for here) pydantic-ai keeps gpt-oss's reasoning_text in provider_details
    thinking = [_raw_reasoning(part) for part in parts if part.part_kind == "thinking"]
    assert returns == [WEATHER_RESULT] and len(thinking) == 2  # the reasoning before the call and after it
    _clean(*thinking, result.output)


@pytest.mark.parametrize("api", ["chat", "responses"])
@pytest.mark.parametrize("output", ["native", "tool"])
async def test_pydantic_ai_structured_output_validates_on_the_first_try(
    pydantic_ai: ModuleType, pocket_server: RunningServer, api: str, output: str
) -> None:
    """``NativeOutput`` asks for a response format; the default asks for a forced call to ``final_result``."""
    output_type: Any = ShoppingList
    if output == "native":
        output_type = pydantic_ai.NativeOutput(ShoppingList, name="shopping_list")
    agent = pydantic_ai.Agent(
        _pydantic_model(pocket_server, api), instructions=SHOPPING_INSTRUCTIONS, output_type=output_type
    )
    result = await agent.run(SHOPPING_REQUEST)
    responses = [message for message in result.all_messages() if message.kind == "response"]
    assert len(responses) == 1  # no retry: the first answer validated
    assert isinstance(result.output, ShoppingList) and all(isinstance(item, str) for item in result.output.items)
    calls = [part.tool_name for part in responses[0].parts if part.part_kind == "tool-call"]
    if output == "native":
        assert result.output.items == SHOPPING_ITEMS and calls == []  # the format it learnt, held by a grammar
    else:
        assert calls == ["final_result"]  # tool_choice required, held to the tool's schema at the token level


# -- litellm ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def litellm() -> ModuleType:
    return _framework("litellm", CLIENTS)


def test_litellm_reasoning_content_arrives_whole_and_streamed_before_the_answer(
    litellm: ModuleType, pocket_server: RunningServer
) -> None:
    request: dict[str, Any] = {
        "model": f"openai/{POCKET_NAME}",
        "api_base": f"{pocket_server.url}/v1",
        "api_key": "unused",
        "messages": [{"role": "user", "content": QUESTION}],
    }
    message = litellm.completion(**request).choices[0].message
    assert (message.content, message.reasoning_content) == (ANSWER, REASONING)
    pieces: list[tuple[str, str]] = []
    for chunk in litellm.completion(**request, stream=True):
        delta = chunk.choices[0].delta
        pieces += [("reasoning", delta.reasoning_content)] if getattr(delta, "reasoning_content", None) else []
        pieces += [("content", delta.content)] if delta.content else []
    kinds = [kind for kind, _ in pieces]
    assert kinds == sorted(kinds, key=["reasoning", "content"].index)  # all the reasoning, then the answer
    assert "".join(text for kind, text in pieces if kind == "reasoning") == REASONING
    assert "".join(text for kind, text in pieces if kind == "content") == ANSWER


# -- instructor ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def instructor() -> ModuleType:
    return _framework("instructor", INSTRUCTOR)


SHOPPING_MESSAGES: Any = [
    {"role": "system", "content": SHOPPING_INSTRUCTIONS},
    {"role": "user", "content": SHOPPING_REQUEST},
]


@pytest.mark.parametrize("mode", ["JSON", "JSON_SCHEMA"])
def test_instructor_json_modes_validate_on_the_first_try(
    instructor: ModuleType, pocket_server: RunningServer, mode: str
) -> None:
    client = instructor.from_openai(pocket_server.client(), mode=instructor.Mode[mode])
    shopping = client.chat.completions.create(
        model=POCKET_NAME, response_model=ShoppingList, messages=SHOPPING_MESSAGES, max_retries=0
    )
    assert shopping.model_dump() == {"items": SHOPPING_ITEMS}  # instructor answers a subclass of ShoppingList


def test_instructor_tools_mode_gets_the_named_call_it_forces(
    instructor: ModuleType, pocket_server: RunningServer
) -> None:
    """The pocket model would call ``get_weather``; ``tool_choice`` names ``Weather``, and the tokens follow it."""
    client = instructor.from_openai(pocket_server.client(), mode=instructor.Mode.TOOLS)
    messages: Any = [{"role": "user", "content": f"What's the weather in {CITY}?"}]
    weather = client.chat.completions.create(
        model=POCKET_NAME, response_model=Weather, messages=messages, max_retries=0
    )
    assert weather.model_dump() == {"location": CITY}


@pytest.mark.parametrize(
    ("mode", "response_model", "messages", "expected"),
    [
        ("JSON_SCHEMA", ShoppingList, SHOPPING_MESSAGES, ShoppingList(items=SHOPPING_ITEMS)),
        ("TOOLS", Weather, [{"role": "user", "content": f"What's the weather in {CITY}?"}], Weather(location=CITY)),
    ],
)
def test_instructor_partial_streaming_ends_with_the_whole_answer(
    instructor: ModuleType,
    pocket_server: RunningServer,
    mode: str,
    response_model: type[BaseModel],
    messages: Any,
    expected: BaseModel,
) -> None:
    """Partials end with the whole answer; several (the answer's tokens go out in groups of up to 30 ms) grow in order.

    A tool call's arguments come whole, once the server has checked them (so TOOLS mode gets one partial).
    """
    client = instructor.from_openai(pocket_server.client(), mode=instructor.Mode[mode])
    partials = list(
        client.chat.completions.create_partial(
            model=POCKET_NAME, response_model=response_model, messages=messages, max_retries=0
        )
    )
    assert partials[-1].model_dump() == expected.model_dump()
    if mode == "JSON_SCHEMA":
        lists = [partial.items or [] for partial in partials]
        for before, after in zip(lists, lists[1:], strict=False):  # each list continues the one before
            assert len(after) >= len(before) and after[: len(before) - 1] == before[:-1]
            assert not before or after[len(before) - 1].startswith(before[-1])  # whose last item may have grown


# -- smolagents ------------------------------------------------------------------------------------
# smolagents sends ``stop`` on every agent step (["Observation:", "Calling tools:"], and "</code>" for
# a CodeAgent) unless the model id is OpenAI's o3, o4 or gpt-5, or a grok: gpt-oss ids get it. Its
# agents write the task as "New task:\n..." after a long system prompt, and send tool calls and their
# results back as text ("Calling tools:", "Observation:"), which the pocket model was never trained
# on: its turns are replayed here (the requests, the server and the framework are the real ones).

SMOLAGENTS_STOPS = ["Observation:", "Calling tools:"]
CODE = f'weather = get_weather(location="{CITY}")\nfinal_answer(weather)'
"""The code the CodeAgent's model writes: one step runs the tool and answers with its output."""


@pytest.fixture(scope="module")
def smolagents() -> ModuleType:
    return _framework("smolagents", CLIENTS)


def _smol_weather_tool(smolagents: ModuleType, calls: list[str]) -> Any:
    """The demo's ``get_weather`` as a smolagents tool (it wants each argument described)."""
    get_weather = _weather_tool(calls)

    def smol_get_weather(location: str) -> str:
        """Gets the current weather in a city.

        Args:
            location: the city.
        """
        return get_weather(location)

    smol_get_weather.__name__ = "get_weather"
    return smolagents.tool(smol_get_weather)


def _smol_model(smolagents: ModuleType, server: RunningServer, bodies: list[dict[str, Any]]) -> Any:
    """The OpenAI-compatible model of smolagents on the server, recording each request body it sends."""

    def record(request: httpx.Request) -> None:
        bodies.append(json.loads(request.content))

    model = smolagents.OpenAIServerModel(
        model_id="replay-model",
        api_base=f"{server.url}/v1",
        api_key="unused",
        client_kwargs={"http_client": httpx.Client(event_hooks={"request": [record]}), "max_retries": 0},
    )
    assert model.supports_stop_parameter  # so every step asks for stop sequences
    return model


def _call(name: str, arguments: dict[str, str]) -> str:
    return (
        f"<|channel|>analysis<|message|>Call {name}.<|end|>"
        f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json"
        f"<|message|>{json.dumps(arguments, ensure_ascii=False)}<|call|>"
    )


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_smolagents_tool_calling_agent_runs_the_tool_and_answers_with_its_output(
    smolagents: ModuleType, encoding: HarmonyEncoding, stream: bool
) -> None:
    calls: list[str] = []
    bodies: list[dict[str, Any]] = []
    turns = _call("get_weather", {"location": CITY}), _call("final_answer", {"answer": WEATHER_ANSWER})
    _, server = replay_server(encoding, *turns)
    with server as running:
        agent = smolagents.ToolCallingAgent(
            tools=[_smol_weather_tool(smolagents, calls)],
            model=_smol_model(smolagents, running, bodies),
            max_steps=3,
            stream_outputs=stream,
            verbosity_level=0,
        )
        result = agent.run(f"What's the weather in {CITY}?")
    assert calls == [CITY] and result == WEATHER_ANSWER
    assert [body.get("stop") for body in bodies] == [SMOLAGENTS_STOPS, SMOLAGENTS_STOPS]
    assert all(body.get("tool_choice") == "required" for body in bodies)
    observations = [step.observations for step in agent.memory.steps if getattr(step, "observations", None)]
    assert observations[0] == WEATHER_RESULT  # the tool's output went back to the model


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_smolagents_code_agent_gets_its_code_cut_at_the_closing_tag(
    smolagents: ModuleType, encoding: HarmonyEncoding, stream: bool
) -> None:
    """The model writes on past its code and makes up an observation: the stop sequence ``</code>`` cuts it off."""
    calls: list[str] = []
    bodies: list[dict[str, Any]] = []
    thought = "Thought: I will ask the weather tool and answer with what it says.\n"
    answer = f"{thought}<code>\n{CODE}\n</code>\nObservation: it is sunny and 30 °C.<|return|>"
    turn = f"<|channel|>analysis<|message|>Write the code.<|end|><|start|>assistant<|channel|>final<|message|>{answer}"
    _, server = replay_server(encoding, turn, delay_s=0.002)
    with server as running:
        agent = smolagents.CodeAgent(
            tools=[_smol_weather_tool(smolagents, calls)],
            model=_smol_model(smolagents, running, bodies),
            max_steps=2,
            stream_outputs=stream,
            verbosity_level=0,
        )
        result = agent.run(f"What's the weather in {CITY}?")
    assert calls == [CITY] and result == WEATHER_RESULT
    assert [body.get("stop") for body in bodies] == [[*SMOLAGENTS_STOPS, "</code>"]]
    step = next(step for step in agent.memory.steps if getattr(step, "code_action", None))
    assert step.model_output == f"{thought}<code>\n{CODE}\n</code>"  # the server's cut, and the tag smolagents adds
    assert step.code_action == CODE
