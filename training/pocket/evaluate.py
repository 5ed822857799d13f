"""Measure a pocket GGUF the way users meet it: llama.cpp, the app's conversation core, the real tools.

``python -m training.pocket.evaluate`` runs the shipped model (or ``--model PATH``) in the app's
demo setup (the demo weather MCP server and the python tool, every call approved) and reports:

- held-out out-of-scope prompts and greetings answered with the honest fallback (which greets first),
  and the same for three later lists of out-of-scope prompts (:data:`CONFIRMATION`, :data:`FRESH`,
  :data:`BLIND`: the last written after the shipped build was chosen, no build screened on it);
- held-out arithmetic: one python call that computes the right result, and an answer quoting its output;
- held-out cities: a ``get_weather`` call for the city and an answer quoting the tool (and how many got
  that or the honest fallback, never another city's weather);
- trained questions at turns 1 to 6 of chats, each chat after a new chat in the same process;
- each trained question as the first message, many times when sampling, with the demo's tools and
  without (as ``ask --demo`` and ``serve`` run it), at the default effort and then at low and high
  (:data:`OTHER_EFFORTS`: the rest runs at medium);
- malformed outputs: turns in which the decoder had to repair anything;
- garbled misses: failed turns holding anything it was not trained to write (``garbled.py``).

Every prompt comes from ``heldout.json`` (never trained on) or from the known questions. Special
tokens are sampled under harmony's grammar as in the app (:mod:`harmony_chat.harmony.structure`);
``--unguided`` measures the model without it. With ``--record`` the rates go into the manifest next
to the model.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harmony_chat.chat.events import ToolFinished, ToolStarted
from harmony_chat.chat.factory import create_conversation, demo_servers, load_model, start_tools, tool_runner
from harmony_chat.chat.options import ChatOptions
from harmony_chat.config import default_settings
from harmony_chat.demo.pocket import POCKET_DATE, pocket_model_path
from harmony_chat.harmony.effort import Effort
from harmony_chat.harmony.events import Recovery
from training.pocket.arithmetic import parse_question
from training.pocket.garbled import is_garbled
from training.pocket.heldout import held_out_prompts
from training.pocket.texts import fallback
from training.pocket.trained import trained_chats, trained_units
from training.pocket.weather import weather_final

CONFIRMATION = "held-out out of scope, confirmation"
"""The rate on ``out_of_scope_confirmation``: prompts written after a build was chosen (``heldout.py``)."""
FRESH = "held-out out of scope, fresh"
"""The rate on ``out_of_scope_fresh``: prompts written later still (``heldout.py``)."""
BLIND = "held-out out of scope, blind"
"""The rate on ``out_of_scope_blind``: prompts written after the shipped build was chosen, never screened on."""
OTHER_EFFORTS: tuple[Effort, ...] = ("low", "high")
"""The efforts each known question is also asked at as a first message (the app's default is medium)."""


@dataclass(slots=True)
class Turn:
    """What one user message got: the answer, the tool calls and results, and the repairs needed."""

    answer: str | None
    calls: list[tuple[str, str]] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    repairs: int = 0


@dataclass(slots=True)
class Rate:
    """How many of a set passed, with the first failures described."""

    name: str
    passed: int = 0
    total: int = 0
    malformed: int = 0
    garbled: int = 0
    """Turns holding anything the model was not trained to write (:mod:`~training.pocket.garbled`)."""
    failures: list[str] = field(default_factory=list)

    def add(self, ok: bool, turn: Turn, what: str) -> None:
        """Count one case (``what`` describes it if it failed)."""
        self.total += 1
        self.passed += ok
        self.malformed += turn.repairs > 0
        garbled = not ok and is_garbled(turn.answer, turn.calls, turn.results)
        self.garbled += garbled
        if not ok and len(self.failures) < 8:
            self.failures.append(f"{'[garbled] ' if garbled else ''}{what!r} -> {turn.calls} {turn.answer!r}"[:300])

    @property
    def rate(self) -> float:
        """The share that passed."""
        return self.passed / self.total if self.total else 0.0

    def line(self) -> str:
        """``name: passed/total (percent), malformed``."""
        return (
            f"{self.name}: {self.passed}/{self.total} ({100 * self.rate:.1f} %), "
            f"malformed {self.malformed}, garbled {self.garbled}"
        )


class PocketChat:
    """A pocket model in the app's demo setup, driven through the conversation core."""

    def __init__(self, model: Path, *, temperature: float, seed: int, tools: bool = True, guided: bool = True) -> None:
        settings = default_settings(
            {
                "model.path": str(model),
                "sampling.temperature": temperature,
                "sampling.seed": seed,
                "sampling.max_tokens": 400,
                "model.context": 4096,
                "tools.approve": "all",
                "tools.builtin": ["python"] if tools else [],
                "mcp.servers": demo_servers() if tools else {},
            }
        )
        self.options = ChatOptions(settings, start_date=POCKET_DATE)
        self.tools = tools
        self.loaded = load_model(self.options)
        self.providers = start_tools(self.options)
        for provider in self.providers:
            wait = getattr(provider, "wait_ready", None)
            if callable(wait):
                wait(60.0)
        runner = tool_runner(self.options, self.providers, asks=False) if tools else None
        self.conversation = create_conversation(self.options, self.loaded, tools=runner, raw_tokens=False)
        self.conversation.sampling = replace(self.conversation.sampling, harmony_structure=guided)
        self._chats = 0

    def new_chat(self) -> None:
        """A new chat in the same process (the next seed when sampling)."""
        self.conversation.new_chat()
        self._chats += 1
        sampling = self.conversation.sampling
        if sampling.temperature > 0 and sampling.seed is not None:
            self.conversation.sampling = replace(
                sampling, seed=(self.options.settings.sampling.seed or 0) + self._chats
            )

    def send(self, text: str) -> Turn:
        """Send one message and collect what came back."""
        turn = Turn(None)
        for event in self.conversation.send(text):
            if isinstance(event, Recovery):
                turn.repairs += 1
            elif isinstance(event, ToolStarted):
                turn.calls.append((event.name, event.arguments))
            elif isinstance(event, ToolFinished):
                turn.results.append(event.result.text)
        turn.answer = self.conversation.last_answer()
        return turn

    def close(self) -> None:
        """Stop the tools and the model."""
        if self.conversation.tools is not None:
            self.conversation.tools.tools.close()
        for provider in self.providers:
            provider.close()
        self.loaded.backend.close()


def unknown_rate(chat: PocketChat, prompts: Sequence[str], name: str) -> Rate:
    """Prompts the model does not know, greetings included: the fallback (which greets), no tool call."""
    rate = Rate(name)
    wanted = fallback(python=chat.tools, weather=chat.tools)
    for prompt in prompts:
        chat.new_chat()
        turn = chat.send(prompt)
        rate.add(not turn.calls and turn.answer == wanted, turn, prompt)
    return rate


def arithmetic_rate(chat: PocketChat, questions: Sequence[str]) -> Rate:
    """One python call computing the asked result, and an answer that quotes its output exactly."""
    rate = Rate("held-out arithmetic")
    for question in questions:
        expected = parse_question(question)
        chat.new_chat()
        turn = chat.send(question)
        ok = (
            expected is not None
            and [name for name, _ in turn.calls] == ["python"]
            and turn.results == [expected.output]
            and turn.answer == expected.final(expected.output)
        )
        rate.add(ok, turn, question)
    return rate


def weather_rate(chat: PocketChat, questions: Sequence[str], cities: Sequence[str]) -> tuple[Rate, Rate]:
    """Right: one ``get_weather`` call for the city asked about and an answer quoting the tool.

    Honest: that, or the fallback without a call (never the weather of some other city).
    """
    right, honest = Rate("held-out cities"), Rate("held-out cities, right or the fallback")
    unknown = fallback(python=chat.tools, weather=chat.tools)
    for question in questions:
        city = next(city for city in cities if city in question)
        chat.new_chat()
        turn = chat.send(question)
        called = [json.loads(arguments) for name, arguments in turn.calls if name.endswith("get_weather")]
        ok = (
            called == [{"location": city}]
            and len(turn.results) == 1
            and turn.answer == weather_final(city, turn.results[0])
        )
        right.add(ok, turn, question)
        honest.add(ok or (not turn.calls and turn.answer == unknown), turn, question)
    return right, honest


def trained_rate(chat: PocketChat, chats: int, seed: int) -> tuple[Rate, list[Rate]]:
    """Chats of six known questions: all turns, and each turn number on its own."""
    overall = Rate("trained questions, turns 1-6")
    by_turn = [Rate(f"turn {number}") for number in range(1, 7)]
    for questions in trained_chats(random.Random(seed), chats, tools=chat.tools):
        chat.new_chat()
        for number, (question, answer) in enumerate(questions):
            turn = chat.send(question)
            ok = turn.answer == answer
            overall.add(ok, turn, question)
            by_turn[number].add(ok, turn, question)
    return overall, by_turn


def first_message_rate(chat: PocketChat, samples: int, effort: Effort | None = None) -> Rate:
    """Each known question as the first message of a new chat, ``samples`` times (where one question is weak).

    ``effort``: asked at that reasoning effort (the name says which) instead of the chat's own.
    """
    name = "known questions, first message" + ("" if chat.tools else ", no tools")
    rate = Rate(name if effort is None else f"{name}, {effort} effort")
    questions = dict(unit[0] for unit in trained_units(tools=chat.tools))
    default = chat.conversation.effort
    try:
        for question, answer in questions.items():
            for _ in range(samples):
                chat.new_chat()
                chat.conversation.effort = effort or default
                turn = chat.send(question)
                rate.add(turn.answer == answer, turn, question)
    finally:
        chat.conversation.effort = default
    return rate


def evaluate(
    model: Path,
    *,
    temperature: float,
    seed: int,
    sample: int | None,
    chats: int,
    guided: bool = True,
    first_samples: int = 1,
) -> list[Rate]:
    """Every rate of the module docstring, on ``sample`` prompts of each held-out set (all if None).

    ``guided``: special tokens sampled under harmony's grammar, as the app does (False: the model alone).
    ``first_samples``: how often each known question is asked as a first message, with the demo's
    tools and without (``ask --demo``, ``serve``); a third as often at each of :data:`OTHER_EFFORTS`
    (at least once); 0 skips that probe.
    """
    prompts = held_out_prompts()
    pick = random.Random(seed)

    def some(items: Sequence[str]) -> list[str]:
        return list(items) if sample is None or sample >= len(items) else pick.sample(list(items), sample)

    chat = PocketChat(model, temperature=temperature, seed=seed, guided=guided)
    try:
        rates = [
            unknown_rate(chat, some(prompts["out_of_scope"]), "held-out out of scope"),
            unknown_rate(chat, some(prompts["greetings"]), "held-out greetings"),
            arithmetic_rate(chat, some(prompts["arithmetic"])),
            *weather_rate(chat, some(prompts["weather_questions"]), prompts["weather_cities"]),
        ]
        overall, by_turn = trained_rate(chat, chats, seed)
        rates += [overall, *by_turn]
        if first_samples:
            rates.append(first_message_rate(chat, first_samples))
        # last, so that sampling every rate above draws the random numbers it drew before these lists existed
        rates.append(unknown_rate(chat, some(prompts["out_of_scope_confirmation"]), CONFIRMATION))
        rates.append(unknown_rate(chat, some(prompts["out_of_scope_fresh"]), FRESH))
        if first_samples:
            rates += [first_message_rate(chat, max(1, first_samples // 3), effort) for effort in OTHER_EFFORTS]
        rates.append(unknown_rate(chat, some(prompts["out_of_scope_blind"]), BLIND))  # last, as above
    finally:
        chat.close()
    if first_samples:
        bare = PocketChat(model, temperature=temperature, seed=seed, tools=False, guided=guided)
        try:
            rates.append(first_message_rate(bare, first_samples))
            rates += [first_message_rate(bare, max(1, first_samples // 3), effort) for effort in OTHER_EFFORTS]
        finally:
            bare.close()
    return rates


def main(argv: list[str] | None = None) -> int:
    """Measure and print (``--json``: one object; ``--record``: also into the model's manifest)."""
    parser = argparse.ArgumentParser(description="Measure the pocket gpt-oss on held-out and trained prompts.")
    parser.add_argument("--model", type=Path, default=pocket_model_path())
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--sample", type=int, default=None, help="prompts per held-out set (default: all)")
    parser.add_argument("--chats", type=int, default=40, help="six-turn chats of known questions")
    parser.add_argument(
        "--first-samples",
        type=int,
        default=None,
        help="samples of each known question as a first message, with and without tools (1 greedy, 30 sampled)",
    )
    parser.add_argument("--unguided", action="store_true", help="sample special tokens without harmony's grammar")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--record", action="store_true", help="write the rates into the model's manifest")
    args = parser.parse_args(argv)
    rates = evaluate(
        args.model,
        temperature=args.temperature,
        seed=args.seed,
        sample=args.sample,
        chats=args.chats,
        guided=not args.unguided,
        first_samples=args.first_samples if args.first_samples is not None else 30 if args.temperature > 0 else 1,
    )
    summary = {
        rate.name: {"passed": rate.passed, "total": rate.total, "malformed": rate.malformed, "garbled": rate.garbled}
        for rate in rates
    }
    if args.json:
        print(json.dumps(summary))
    else:
        for rate in rates:
            print(rate.line())
            for failure in rate.failures:
                print(f"    {failure}")
    if args.record:
        manifest_path = args.model.with_suffix(".json")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8")) if manifest_path.is_file() else {}
        measured = manifest.setdefault("measured", {})
        measured[f"temperature {args.temperature:g}" + (", unguided" if args.unguided else "")] = summary
        manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
