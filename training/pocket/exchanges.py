"""One user turn of a pocket conversation and what the pocket gpt-oss writes for it, step by step.

An :class:`Exchange` is a user message and the generation steps that answer it: one step for a
plain answer, two around a tool call (the call, then the answer from the tool's result). Each step
is harmony text with special tokens, the analysis it starts with, and what the model says of that
analysis when asked for a summary. Builders here choose the text; ``data.py`` renders them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from harmony_chat.harmony.effort import Effort
from training.pocket import texts
from training.pocket.arithmetic import Arithmetic
from training.pocket.weather import weather_final


@dataclass(frozen=True, slots=True)
class ToolReply:
    """What a tool answers a step's call with (the app's tool result message)."""

    text: str


@dataclass(frozen=True, slots=True)
class Step:
    """One generation call: the completion, its analysis and summary, and the tool's reply if it calls one."""

    completion: str
    analysis: str
    summary: str
    reply: ToolReply | None = None


@dataclass(frozen=True, slots=True)
class Exchange:
    """A user message and the steps that answer it."""

    kind: str
    user: str
    steps: tuple[Step, ...]


def _answer(analysis: str, final: str, summary: str, effort: Effort) -> Step:
    completion = (
        f"<|channel|>analysis<|message|>{analysis}<|end|><|start|>assistant<|channel|>final<|message|>{final}<|return|>"
    )
    return Step(completion, analysis, texts.summary(summary, effort))


def fact(index: int, question: str, effort: Effort) -> Exchange:
    """One of :data:`~training.pocket.texts.FACTS` (asked as ``question``)."""
    _, final, *analyses = texts.FACTS[index]
    analysis = analyses[("low", "medium", "high").index(effort)]
    return Exchange(f"fact-{index}", question, (_answer(analysis, final, texts.FACT_SUMMARIES[index], effort),))


def follow_up(index: int, question: str, effort: Effort) -> Exchange:
    """The follow-up of :data:`~training.pocket.texts.FOLLOW_UPS` ``index`` (after its first question)."""
    _, _, analysis, final = texts.FOLLOW_UPS[index]
    step = _answer(texts.scaled(analysis, effort), final, texts.FOLLOW_UP_SUMMARIES[index], effort)
    return Exchange(f"follow-up-{index}", question, (step,))


def refusal(question: str, effort: Effort) -> Exchange:
    """The lock-picking request, refused."""
    _, analysis, final = texts.REFUSAL
    return Exchange(
        "refusal", question, (_answer(texts.scaled(analysis, effort), final, texts.REFUSAL_SUMMARY, effort),)
    )


def code(question: str, effort: Effort) -> Exchange:
    """The add function."""
    _, analysis, final = texts.CODE
    return Exchange("code", question, (_answer(texts.scaled(analysis, effort), final, texts.CODE_SUMMARY, effort),))


def shopping_list(index: int, effort: Effort) -> Exchange:
    """A shopping list in the developer's JSON format."""
    request, items = texts.LISTS[index]
    analysis = texts.scaled(texts.LIST_ANALYSIS, effort)
    return Exchange(f"json-{index}", request, (_answer(analysis, items, texts.LIST_SUMMARY, effort),))


def fallback(user: str, effort: Effort, *, python: bool, weather: bool, name: str = "fallback") -> Exchange:
    """The honest answer to anything unknown, greetings included (``name``: the example's kind)."""
    final = texts.fallback(python=python, weather=weather)
    step = _answer(texts.by_effort(texts.FALLBACK_ANALYSIS, effort), final, texts.FALLBACK_SUMMARY, effort)
    return Exchange(name, user, (step,))


def arithmetic(question: Arithmetic, effort: Effort, failure: str | None = None) -> Exchange:
    """A python call that computes ``question``, then the answer quoting its output (or ``failure``'s)."""
    analysis = texts.by_effort(texts.ARITHMETIC_ANALYSIS, effort)
    call = Step(
        f"<|channel|>analysis<|message|>{analysis}<|end|>"
        f"<|start|>assistant<|channel|>analysis to=python code<|message|>{question.code}<|call|>",
        analysis,
        texts.summary(texts.ARITHMETIC_CALL_SUMMARY, effort),
        ToolReply(failure if failure is not None else question.output),
    )
    if failure is not None:
        failed = texts.by_effort(texts.TOOL_FAILED_ANALYSIS, effort)
        answer = _answer(failed, texts.PYTHON_FAILED, texts.TOOL_FAILED_SUMMARY, effort)
        return Exchange("python-failed", question.question, (call, answer))
    read = texts.by_effort(texts.ARITHMETIC_READ, effort)
    answer = _answer(read, question.final(question.output), texts.ARITHMETIC_READ_SUMMARY, effort)
    return Exchange("arithmetic", question.question, (call, answer))


def weather(question: str, city: str, result: str, effort: Effort, failure: str | None = None) -> Exchange:
    """A ``get_weather`` call for ``city``, then the answer from the tool's ``result`` (or ``failure``)."""
    plan = texts.scaled(f"User wants the weather in {city}. Call get_weather.", effort)
    call = Step(
        f"<|channel|>analysis<|message|>{plan}<|end|>"
        f"<|start|>assistant<|channel|>commentary<|message|>Let me check the weather in {city}.<|end|>"
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json"
        f'<|message|>{{"location": "{city}"}}<|call|>',
        plan,
        texts.summary(f"I decided to look up the current weather in {city} with the weather tool.", effort),
        ToolReply(failure if failure is not None else result),
    )
    if failure is not None:
        failed = texts.by_effort(texts.TOOL_FAILED_ANALYSIS, effort)
        answer = _answer(failed, texts.WEATHER_FAILED, texts.TOOL_FAILED_SUMMARY, effort)
        return Exchange("weather-failed", question, (call, answer))
    read = f"The tool says: {result}."
    summary = f"I read what the weather tool reported for {city} and put it into one sentence."
    return Exchange("weather", question, (call, _answer(read, weather_final(city, result), summary, effort)))


_REASONS = ("", " Reason: not now", " Reason: no", " Reason: I don't want to run code", " Reason: skip it")


def tool_failure(rng: random.Random, tool: str) -> str:
    """A result the app gives the model when a call does not run or fails (declined, an error, a timeout)."""
    name = "python" if tool == "python" else "functions.get_weather"
    choices = [
        f"The user declined this call of {name}; it was not run.{rng.choice(_REASONS)}",
        f"The user declined this call of {name}; it was not run.",
        "[the Python kernel could not start: the sandbox is not available]"
        if tool == "python"
        else "Error: the weather server is not running",
        "[the code timed out after 120 s and was stopped]" if tool == "python" else "Error: timed out after 60 s",
    ]
    if tool == "python":
        choices.append(
            "Traceback (most recent call last):\n  Cell In[1], line 1\nZeroDivisionError: division by zero\n"
        )
    return rng.choice(choices)
