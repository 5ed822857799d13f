"""openai-harmony's golden vectors and the format guide's examples, against harmony-chat.

Render vectors are produced by the same builder calls harmony's own suite uses (pinning the
library and the offline vocabulary); where harmony-chat's session can express a vector, the
session must produce it exactly. Completion vectors go through harmony-chat's stream decoder.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from openai_harmony import (
    Author,
    Conversation,
    DeveloperContent,
    HarmonyEncoding,
    Message,
    ReasoningEffort,
    RenderConversationConfig,
    Role,
    StreamableParser,
    SystemContent,
    ToolDescription,
)

from harmony_chat.harmony.events import ContentDelta, StopReason
from harmony_chat.harmony.session import ChatSession, ResponseFormat, TurnRecord, visible_history
from tests.conftest import DATA
from tests.helpers import decode, ids

VECTORS = DATA / "harmony-vectors"
IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."


def text_of(name: str) -> str:
    return (VECTORS / name).read_text(encoding="utf-8").rstrip()


def token_ids(name: str) -> list[int]:
    return [int(x) for x in (VECTORS / name).read_text(encoding="utf-8").split()]


def render(encoding: HarmonyEncoding, messages: list[Message], drop: bool | None = None) -> list[int]:
    config = None if drop is None else RenderConversationConfig(auto_drop_analysis=drop)
    return list(
        encoding.render_conversation_for_completion(Conversation.from_messages(messages), Role.ASSISTANT, config)
    )


def system(**changes: object) -> Message:
    content = SystemContent.new().with_model_identity(IDENTITY)
    if "effort" in changes:
        content = content.with_reasoning_effort(changes["effort"])
    if "channels" in changes:
        content = content.with_required_channels(changes["channels"])
    if "date" in changes:
        content = content.with_conversation_start_date(changes["date"])
    if "cutoff" in changes:
        content = content.with_knowledge_cutoff(changes["cutoff"])
    if changes.get("browser"):
        content = content.with_browser_tool()
    if changes.get("python"):
        content = content.with_python_tool()
    return Message.from_role_and_content(Role.SYSTEM, content)


def user(text: str) -> Message:
    return Message.from_role_and_content(Role.USER, text)


def assistant(text: str, channel: str) -> Message:
    return Message.from_role_and_content(Role.ASSISTANT, text).with_channel(channel)


EFFORTS = {"low": ReasoningEffort.LOW, "medium": ReasoningEffort.MEDIUM, "high": ReasoningEffort.HIGH}
CAPITAL = "What is the capital of the largest country in the world?"
ROBOT = "Answer the user's questions like a robot."

LOOKUP_WEATHER = ToolDescription.new(
    "lookup_weather",
    "Use this tool to lookup the weather in a given location. Call it with the parameter 'location', "
    "can be any textual description of a location.",
    parameters={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)
FORMAT = {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"}
GUIDE_TOOLS = [
    ToolDescription.new("get_location", "Gets the location of the user."),
    ToolDescription.new(
        "get_current_weather",
        "Gets the current weather in the provided location.",
        parameters={
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                "format": FORMAT,
            },
            "required": ["location"],
        },
    ),
    ToolDescription.new(
        "get_multiple_weathers",
        "Gets the current weather in the provided list of locations.",
        parameters={
            "type": "object",
            "properties": {
                "locations": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": 'List of city and state, e.g. ["San Francisco, CA", "New York, NY"]',
                },
                "format": FORMAT,
            },
            "required": ["locations"],
        },
    ),
]
KITCHENSINK = ToolDescription.new(
    "kitchensink",
    "A function with various complex schemas.",
    parameters={
        "description": "params object",
        "type": "object",
        "properties": {
            "string": {"type": "string", "title": "STRING", "description": "A string", "examples": ["hello", "world"]},
            "string_nullable": {
                "type": "string",
                "nullable": True,
                "description": "A nullable string",
                "default": "the default",
            },
            "string_enum": {"type": "string", "enum": ["a", "b", "c"]},
            "oneof_string_or_number": {
                "oneOf": [
                    {"type": "string", "default": "default_string_in_oneof"},
                    {"type": "number", "description": "numbers can happen too"},
                ],
                "description": "a oneof",
                "default": 20,
            },
        },
    },
)


@pytest.mark.parametrize("effort", ["low", "medium", "high"])
@pytest.mark.parametrize("instructions", [True, False])
def test_simple_convo_with_effort(encoding: HarmonyEncoding, effort: str, instructions: bool) -> None:
    messages = [system(effort=EFFORTS[effort])]
    if instructions:
        messages.append(Message.from_role_and_content(Role.DEVELOPER, DeveloperContent.new().with_instructions(ROBOT)))
    messages.append(user(CAPITAL))
    suffix = "" if instructions else "_no_instruction"
    assert render(encoding, messages) == ids(encoding, text_of(f"test_simple_convo_{effort}_effort{suffix}.txt"))


@pytest.mark.parametrize(
    ("name", "sys", "question"),
    [
        ("test_simple_convo.txt", {}, "What is 2 + 2?"),
        (
            "test_reasoning_system_message.txt",
            {"effort": ReasoningEffort.MEDIUM, "channels": ["analysis", "final"]},
            "What is 2 + 2?",
        ),
        (
            "test_reasoning_system_message_no_instruction.txt",
            {"effort": ReasoningEffort.HIGH, "channels": ["analysis", "final"]},
            "What is the best place to eat candy in the world?",
        ),
        (
            "test_reasoning_system_message_with_dates.txt",
            {
                "effort": ReasoningEffort.MEDIUM,
                "date": "2021-01-01",
                "cutoff": "2021-01",
                "channels": ["analysis", "final"],
            },
            "What is 42 * pi?",
        ),
    ],
)
def test_system_message_vectors(encoding: HarmonyEncoding, name: str, sys: dict[str, object], question: str) -> None:
    assert render(encoding, [system(**sys), user(question)]) == ids(encoding, text_of(name))


@pytest.mark.parametrize(
    ("name", "sys", "developer"),
    [
        ("test_browser_tool_only.txt", {"date": "2025-06-28", "browser": True}, None),
        ("test_browser_and_python_tool.txt", {"date": "2025-06-28", "browser": True, "python": True}, None),
        (
            "test_browser_and_function_tool.txt",
            {"date": "2025-06-28", "browser": True},
            DeveloperContent.new().with_function_tools([LOOKUP_WEATHER]),
        ),
    ],
)
def test_builtin_tool_vectors(
    encoding: HarmonyEncoding, name: str, sys: dict[str, object], developer: DeveloperContent | None
) -> None:
    messages = [system(**sys)]
    if developer is not None:
        messages.append(Message.from_role_and_content(Role.DEVELOPER, developer))
    assert encoding.decode_utf8(render(encoding, messages)) == text_of(name)


def test_session_renders_no_tools_vector(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding, start_date="2025-06-28")
    assert encoding.decode_utf8(session.render().tokens) == text_of("test_no_tools.txt")


def test_session_renders_functions_with_parameters_vector(encoding: HarmonyEncoding) -> None:
    session = ChatSession(
        encoding,
        effort="high",
        start_date="2025-06-28",
        instructions="Always respond in riddles",
        functions=[*GUIDE_TOOLS, KITCHENSINK],
    )
    session.add_user("What is the weather like in SF?")
    assert encoding.decode_utf8(session.render().tokens) == text_of("test_render_functions_with_parameters.txt")


def cot_history() -> list[Message]:
    return [
        user("What is 2 + 2?"),
        assistant("User asks: “What is 2 + 2?” Simple arithmetic. Provide answer.", "analysis"),
        assistant("2 + 2 equals 4.", "final"),
        user("What about 9 / 2?"),
    ]


def test_cot_policy_matches_dropping_vector(encoding: HarmonyEncoding) -> None:
    history = cot_history()
    kept = [history[i] for i in visible_history(history)]
    assert encoding.decode_utf8(render(encoding, kept, drop=False)) == text_of("test_dropping_cot_by_default.txt")


def test_preserve_cot_vector(encoding: HarmonyEncoding) -> None:
    history = cot_history()
    history[1] = assistant('User asks a simple question: "What is 2 + 2?" The answer: 4.', "analysis")
    assert encoding.decode_utf8(render(encoding, history, drop=False)) == text_of("test_preserve_cot.txt")


def test_cot_policy_keeps_ongoing_tool_loop_vector(encoding: HarmonyEncoding) -> None:
    history = [
        user("What is the weather in SF?"),
        assistant("User asks: “What is the weather in SF?” We need to use lookup_weather tool.", "analysis"),
        Message.from_role_and_content(Role.ASSISTANT, '{"location": "San Francisco"}')
        .with_channel("commentary")
        .with_recipient("functions.lookup_weather")
        .with_content_type("<|constrain|>json"),
        Message.from_author_and_content(
            Author.new(Role.TOOL, "functions.lookup_weather"), '{"temperature": 20, "description": "sunny"}'
        ),
    ]
    kept = [history[i] for i in visible_history(history)]
    assert kept == history
    expected = text_of("test_does_not_drop_if_ongoing_analysis.txt")
    assert render(encoding, kept, drop=False) == ids(encoding, expected)


def test_keep_analysis_between_finals_is_harmony_quirk_we_do_not_follow(encoding: HarmonyEncoding) -> None:
    history = [
        user("What is 2 + 2?"),
        assistant("thinking 2+2", "analysis"),
        assistant("4", "final"),
        user("What is 3 + 5?"),
        assistant("thinking 3+5", "analysis"),
        assistant("8", "final"),
    ]
    vector = text_of("test_keep_analysis_between_finals.txt")
    assert encoding.decode_utf8(encoding.render_conversation(Conversation.from_messages(history))) == vector
    ours = [history[i] for i in visible_history(history)]
    assert all(m.channel != "analysis" for m in ours)


def test_simple_reasoning_response_vector(encoding: HarmonyEncoding) -> None:
    tokens = token_ids("test_simple_reasoning_response.txt")
    first = decode(encoding, tokens)
    assert first.messages == (assistant('User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.', "analysis"),)
    assert first.finished.reason is StopReason.RETURN
    tail = tokens[tokens.index(173781) + 1 :]
    second = decode(encoding, tail)
    assert second.messages == (assistant("2 + 2 = 4.", "final"),)
    assert second.text("final") == "2 + 2 = 4."


def test_simple_tool_call_vector(encoding: HarmonyEncoding) -> None:
    tokens = token_ids("test_simple_tool_call.txt")
    tail = tokens[tokens.index(173781) + 1 :]
    result = decode(encoding, tail, functions=["lookup_weather"])
    expected = (
        Message.from_role_and_content(Role.ASSISTANT, '{"location": "Tokyo"}')
        .with_channel("analysis")
        .with_recipient("lookup_weather")
        .with_content_type("code")
    )
    assert result.messages == (expected,)
    (call,) = result.tool_calls
    assert (call.name, call.channel, call.arguments) == (
        "functions.lookup_weather",
        "analysis",
        '{"location": "Tokyo"}',
    )
    assert result.finished.reason is StopReason.CALL


def test_streamable_parser_vector(encoding: HarmonyEncoding) -> None:
    tokens = ids(encoding, text_of("test_streamable_parser.txt"))
    parser = StreamableParser(encoding, Role.ASSISTANT)
    for token in tokens:
        parser.process(token)
    result = decode(encoding, tokens)
    assert list(result.messages) == parser.messages[:2]
    assert result.tool_calls[0].name == "browser.search"
    assert result.finished.reason is StopReason.CALL


def test_tool_response_parsing_vector(encoding: HarmonyEncoding) -> None:
    session = ChatSession(encoding)
    session.add_tool_result("browser.search", '{"result": "https://openai.com/"}')
    rendered = encoding.render(session.history[-1])[:-1]
    assert encoding.decode_utf8(rendered) == text_of("test_tool_response_parsing.txt")
    assert len(encoding.parse_messages_from_completion_tokens(rendered, None)) == 1


def test_guide_two_plus_two_stream(encoding: HarmonyEncoding) -> None:
    tokens = [
        200005,
        35644,
        200008,
        1844,
        31064,
        25,
        392,
        4827,
        382,
        220,
        17,
        659,
        220,
        17,
        16842,
        12295,
        81645,
        13,
        51441,
        6052,
        13,
        200007,
        200006,
        173781,
        200005,
        17196,
        200008,
        17,
        659,
        220,
        17,
        314,
        220,
        19,
        13,
        200002,
    ]
    result = decode(encoding, tokens)
    assert result.text("analysis") == 'User asks: "What is 2 + 2?" Simple arithmetic. Provide answer.'
    assert result.text("final") == "2 + 2 = 4."
    assert result.finished.reason is StopReason.RETURN


GUIDE_WEATHER_PROMPT = """<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.
Knowledge cutoff: 2024-06
Current date: 2025-06-28

Reasoning: high

# Valid channels: analysis, commentary, final. Channel must be included for every message.
Calls to these tools must go to the commentary channel: 'functions'.<|end|><|start|>developer<|message|># Instructions

Use a friendly tone.

# Tools

## functions

namespace functions {

// Gets the location of the user.
type get_location = () => any;

// Gets the current weather in the provided location.
type get_current_weather = (_: {
// The city and state, e.g. San Francisco, CA
location: string,
format?: "celsius" | "fahrenheit", // default: celsius
}) => any;

// Gets the current weather in the provided list of locations.
type get_multiple_weathers = (_: {
// List of city and state, e.g. ["San Francisco, CA", "New York, NY"]
locations: string[],
format?: "celsius" | "fahrenheit", // default: celsius
}) => any;

} // namespace functions<|end|><|start|>user<|message|>What is the weather like in SF?<|end|><|start|>assistant"""


def test_guide_weather_tool_call_and_result(encoding: HarmonyEncoding) -> None:
    session = ChatSession(
        encoding, effort="high", start_date="2025-06-28", instructions="Use a friendly tone.", functions=GUIDE_TOOLS
    )
    session.add_user("What is the weather like in SF?")
    assert encoding.decode_utf8(session.render().tokens) == GUIDE_WEATHER_PROMPT
    completion = ids(
        encoding,
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant"
        "<|channel|>commentary to=functions.get_weather <|constrain|>json"
        '<|message|>{"location":"San Francisco"}<|call|>',
    )
    result = decode(encoding, completion)
    (call,) = result.tool_calls
    assert (call.name, call.arguments) == ("functions.get_weather", '{"location":"San Francisco"}')
    session.add_assistant_turn(result.messages, TurnRecord("high", "call"))
    session.add_tool_result(call.recipient, '{"sunny": true, "temperature": 20}', call.channel)
    after = encoding.decode_utf8(session.render().tokens)
    assert after.startswith(GUIDE_WEATHER_PROMPT)
    assert after.endswith(
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
        "<|start|>assistant to=functions.get_weather"
        '<|channel|>commentary <|constrain|>json<|message|>{"location":"San Francisco"}<|call|>'
        '<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"sunny": true, "temperature": 20}'
        "<|end|><|start|>assistant"
    )


def test_guide_preamble_is_user_visible(encoding: HarmonyEncoding) -> None:
    preamble = (
        "**Action plan**:\n1. Generate an HTML file\n2. Generate a JavaScript for the Node.js server\n"
        "3. Start the server\n---\nWill start executing the plan step by step"
    )
    text = (
        "<|channel|>analysis<|message|>{long chain of thought}<|end|><|start|>assistant<|channel|>commentary<|message|>"
        + preamble
        + "<|end|><|start|>assistant<|channel|>commentary to=functions.generate_file<|constrain|>json"
        '<|message|>{"template": "basic_html", "path": "index.html"}<|call|>'
    )
    result = decode(encoding, ids(encoding, text))
    deltas = [e for e in result.events if isinstance(e, ContentDelta) and e.channel == "commentary" and not e.recipient]
    assert "".join(d.text for d in deltas) == preamble
    assert result.tool_calls[0].name == "functions.generate_file"


def test_guide_shopping_list_response_format(encoding: HarmonyEncoding) -> None:
    schema = {
        "properties": {
            "items": {"type": "array", "description": "entries on the shopping list", "items": {"type": "string"}}
        },
        "type": "object",
    }
    session = ChatSession(
        encoding,
        instructions="You are a helpful shopping assistant",
        response_formats=[ResponseFormat("shopping_list", schema)],
    )
    session.add_user("I need to buy coffee, soda and eggs")
    text = encoding.decode_utf8(session.render().tokens)
    assert (
        "<|start|>developer<|message|># Instructions\n\nYou are a helpful shopping assistant\n\n"
        "# Response Formats\n\n## shopping_list\n\n"
        '{"properties":{"items":{"type":"array","description":"entries on the shopping list",'
        '"items":{"type":"string"}}},"type":"object"}<|end|>'
    ) in text


def test_every_vector_file_is_covered() -> None:
    covered = Path(__file__).read_text(encoding="utf-8")
    for path in VECTORS.glob("test_*.txt"):
        stem = path.name.replace("_low_effort", "_{effort}_effort").replace("_medium_effort", "_{effort}_effort")
        stem = stem.replace("_high_effort", "_{effort}_effort").replace("_no_instruction", "")
        assert path.name in covered or "test_simple_convo_{effort}_effort" in stem, path.name
