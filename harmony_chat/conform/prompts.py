"""What the checks ask: questions, a tool, a schema, and the earlier turns they send back.

The defaults work on a real gpt-oss and on the pocket model alike (they are conversations the
pocket model was trained on: a sum and its follow-up, the weather in Oslo, a shopping list). A
JSON file given with ``--prompts`` replaces any of them by field name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from harmony_chat.conform.transport import ConformError


def _weather_tool() -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Gets the current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        },
    }


def _shopping_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"type": "string"}}},
        "required": ["items"],
    }


@dataclass(frozen=True, slots=True)
class Prompts:
    """Everything the probes say to the model."""

    question: str = "What is 2 + 2?"
    """A plain question: the model reasons, then answers."""
    answer: str = "2 + 2 = 4."
    """The answer to :attr:`question`, sent back as the earlier turn."""
    reasoning: str = "User asks 2 + 2. Two plus two is four."
    """The reasoning sent back with :attr:`answer` (the CoT checks count it)."""
    follow_up: str = "And what is that times 3?"
    """The next user turn after :attr:`answer`."""
    effort_question: str = "What is 7 times 8?"
    """Asked at low and high effort (and cut off short) to compare how long the model reasons."""
    tool_question: str = "What's the weather in Oslo?"
    """A question the model answers by calling :attr:`tool`."""
    tool: dict[str, Any] = field(default_factory=_weather_tool)
    """A Chat Completions function tool (the Responses probes flatten it)."""
    tool_arguments: str = '{"location": "Oslo"}'
    """The arguments of the earlier call sent back in the tool-loop probes."""
    tool_result: str = '{"temperature": 3, "condition": "snowing"}'
    """What the tool answers."""
    tool_reasoning: str = (
        "User wants the weather in Oslo. Call get_weather with the location Oslo, then report the temperature "
        "and the condition briefly."
    )
    """The reasoning before the earlier call (it must stay in the prompt while the tool loop runs)."""
    schema_instructions: str = "Turn requests into shopping lists."
    """The system message of the structured-output probe."""
    schema_request: str = "I need to buy coffee, soda and eggs."
    """The user message of the structured-output probe."""
    schema_name: str = "shopping_list"
    schema: dict[str, Any] = field(default_factory=_shopping_schema)
    """The JSON schema the structured answer must follow."""
    cutoff_tokens: int = 16
    """The token limit of the cut-off probe: reached while the model is still reasoning."""

    @property
    def tool_name(self) -> str:
        """The function's name."""
        return str(self.tool["function"]["name"])

    def responses_tool(self) -> dict[str, Any]:
        """:attr:`tool` as the Responses API declares a function (flat)."""
        function = self.tool["function"]
        return {"type": "function", **{key: function[key] for key in ("name", "description", "parameters")}}


def load_prompts(path: Path | None) -> Prompts:
    """The default prompts with the fields a JSON file gives replaced.

    Raises:
        ConformError: the file cannot be read, is not a JSON object, or names an unknown field or a wrong type.
    """
    prompts = Prompts()
    if path is None:
        return prompts
    try:
        given = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ConformError(f"cannot read the prompts file {path}: {error}") from None
    if not isinstance(given, dict):
        raise ConformError(f"{path} must hold a JSON object of prompt fields")
    known = {item.name: type(getattr(prompts, item.name)) for item in fields(Prompts)}
    for key, value in given.items():
        if key not in known:
            raise ConformError(f"{path}: unknown prompt field {key!r} (known: {', '.join(sorted(known))})")
        if not isinstance(value, known[key]) or isinstance(value, bool):
            raise ConformError(f"{path}: {key} must be a {known[key].__name__}")
    return replace(prompts, **given)
