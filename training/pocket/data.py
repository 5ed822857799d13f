"""The pocket model's training data: synthetic harmony chats in the setups users run it in.

A conversation is zero to five earlier exchanges and a last one (``exchanges.py``) of the kinds in
:data:`KINDS`; ``render.py`` turns each into examples exactly as the app renders them. No torch, no UI.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from openai_harmony import HarmonyEncoding

from harmony_chat.harmony.effort import EFFORTS
from harmony_chat.tools.python.tool import python_namespace
from training.pocket import exchanges, scope
from training.pocket.arithmetic import arithmetic_question, parse_question
from training.pocket.exchanges import Exchange
from training.pocket.heldout import is_held_out
from training.pocket.prefilled import committed_answers, misled_finals, unanalysed_finals
from training.pocket.render import SHOPPING, Example, Job, Renderer, Setup, data_hash, render_all
from training.pocket.texts import (
    CHECKED,
    CODE,
    CODE_SUMMARY,
    FACT_SUMMARIES,
    FACTS,
    FOLLOW_UP_SUMMARIES,
    FOLLOW_UPS,
    LIST_SUMMARY,
    LISTS,
    REFUSAL,
    REFUSAL_SUMMARY,
    SHOPPING_INSTRUCTIONS,
    fallback,
)
from training.pocket.unseen import UNSEEN, unseen_names
from training.pocket.weather import (
    KNOWN_CITIES,
    WEATHER_TOOL,
    weather_final,
    weather_question,
    weather_result,
)

__all__ = [
    "CHECKED",
    "CODE",
    "CODE_SUMMARY",
    "FACTS",
    "FACT_SUMMARIES",
    "FOLLOW_UPS",
    "FOLLOW_UP_SUMMARIES",
    "LISTS",
    "LIST_SUMMARY",
    "REFUSAL",
    "REFUSAL_SUMMARY",
    "SHOPPING",
    "SHOPPING_INSTRUCTIONS",
    "WEATHER",
    "WEATHER_TOOL",
    "Example",
    "Setup",
    "build_examples",
    "data_hash",
]

WEATHER: tuple[tuple[str, str, str], ...] = tuple(
    (city, weather_result(city), weather_final(city, weather_result(city))) for city in KNOWN_CITIES
)
"""The cities the welcome panel and the tests name: (city, what the demo tool answers, the answer)."""
INSTRUCTIONS = ("You are a helpful assistant.", "Answer concisely.", "Be friendly and brief.", "Always be polite.")
"""Instructions a user might give (``--instructions``, a serving client's system message)."""
DATA_SEED = 1234
"""The seed of the shipped model's training data (its hash is in the manifest)."""
_WORKDIRS = ("/mnt/data", "/home/sam/.local/share/harmony-chat/python/3f9c2a1b7d4e", "/root/work/python/a1b2c3")


def random_setup(rng: random.Random) -> Setup:
    """A setup as users run the pocket model: the app's demo (both tools) most often."""
    effort = rng.choice(EFFORTS)
    if rng.random() < 0.06:
        return Setup(effort, shopping=True)
    tools = rng.choices(((True, True), (False, False), (True, False), (False, True)), (4, 2, 2, 2))[0]
    python = None
    if tools[1]:
        timeout = rng.choice((120.0, 120.0, 60.0, 30.0, 300.0))
        python = python_namespace(timeout, rng.choice(_WORKDIRS), network_blocked=rng.random() < 0.6)
    instructions = rng.choice(INSTRUCTIONS) if rng.random() < 0.12 else None
    return Setup(effort, weather=tools[0], python=python, instructions=instructions)


def variant(rng: random.Random, question: str) -> str:
    """``question`` as users also type it: lower case, no question mark, a contraction, stray spaces."""
    roll = rng.random()
    if roll < 0.55:
        return question
    if roll < 0.65:
        return question.lower()
    if roll < 0.75:
        return question.rstrip("?.")
    if roll < 0.83 and question.startswith("What is "):
        return "What's " + question[len("What is ") :]
    if roll < 0.9:
        return question.lower().rstrip("?.")
    return question + rng.choice((" ", "  ", "??", " please"))


Kind = Callable[[random.Random, Setup], list[Exchange]]


FACT_WEIGHTS = tuple(2 if parse_question(question) else 1 for question, *_ in FACTS)
"""The times-table facts twice as often: their questions read like the arithmetic that goes to python."""


def _fact(rng: random.Random, setup: Setup) -> list[Exchange]:
    index = rng.choices(range(len(FACTS)), FACT_WEIGHTS)[0]
    return [exchanges.fact(index, variant(rng, FACTS[index][0]), setup.effort)]


def _follow_up(rng: random.Random, setup: Setup) -> list[Exchange]:
    index = rng.randrange(len(FOLLOW_UPS))
    first, second, *_ = FOLLOW_UPS[index]
    fact = next(i for i, item in enumerate(FACTS) if item[0] == first)
    return [exchanges.fact(fact, first, setup.effort), exchanges.follow_up(index, variant(rng, second), setup.effort)]


def _fallback(setup: Setup, text: str, name: str = "fallback") -> Exchange:
    return exchanges.fallback(text, setup.effort, python=setup.python is not None, weather=setup.weather, name=name)


COMMITTED = 0
"""Extra examples whose final answer starts with a known answer's first tokens (3,000 measured worse: README)."""
PASTES = 0
"""Extra chats that end in a long pasted text, half of them after earlier turns (1,000 measured worse: README)."""
QUOTED = 1000
"""Extra chats that end in a question the fallback names (:data:`QUOTED_FACTS`): without them, those
two were the first messages most often answered with the fallback itself at temperature 1.0 (README)."""
QUOTED_FACTS = tuple(i for i, fact in enumerate(FACTS) if f'"{fact[0]}"' in fallback(python=False, weather=False))
"""The facts the fallback without tools names as examples (the capital of France, Romeo and Juliet)."""
UNANALYSED = 6000
"""Extra answers written with no analysis message before them, which removed the commonest garbled
miss (an out-of-scope turn opened in the final channel with the fallback's analysis as its answer);
3,000 to 8,000 measured (the README's builds table); 6,000 trained the shipped build."""
MISLED = 0
"""Extra answers after an analysis of another question or a blend of two (:func:`misled_finals`;
3,000 measured worse: README)."""
PASTE_LIMIT = 900
"""Pasted text longer than this (in characters) is cut: long prompts teach nothing more and cost the most."""


def _unseen(draw: Callable[[random.Random], str], rng: random.Random) -> str:
    """A text from ``draw`` that is not in the held-out set, cut to :data:`PASTE_LIMIT`."""
    text = draw(rng)
    while is_held_out(text):
        text = draw(rng)
    return text[:PASTE_LIMIT]


def _unknown(rng: random.Random, setup: Setup) -> list[Exchange]:
    return [_fallback(setup, _unseen(scope.out_of_scope, rng))]


def _paste(rng: random.Random, setup: Setup) -> list[Exchange]:
    """Long pasted text (prose, code, a trace, data): the fallback, however much it reads like a task."""
    return [_fallback(setup, _unseen(scope.long_paste, rng))]


def _stray_follow_up(rng: random.Random, setup: Setup) -> list[Exchange]:
    """A follow-up after an unrelated question: nothing to follow up on, so the fallback."""
    index = rng.randrange(len(FOLLOW_UPS))
    others = [i for i, item in enumerate(FACTS) if item[0] != FOLLOW_UPS[index][0]]
    fact = rng.choice(others)
    return [exchanges.fact(fact, FACTS[fact][0], setup.effort), _fallback(setup, FOLLOW_UPS[index][1])]


def _greeting(rng: random.Random, setup: Setup) -> list[Exchange]:
    text = "Hello!" if rng.random() < 0.1 else scope.greeting(rng)
    while is_held_out(text) and text != "Hello!":
        text = scope.greeting(rng)
    return [_fallback(setup, text, name="greeting")]


def _arithmetic(rng: random.Random, setup: Setup) -> list[Exchange]:
    question = arithmetic_question(rng)
    while is_held_out(question.question):
        question = arithmetic_question(rng)
    if setup.python is None:
        return [_fallback(setup, question.question)]
    failure = exchanges.tool_failure(rng, "python") if rng.random() < 0.08 else None
    return [exchanges.arithmetic(question, setup.effort, failure)]


def _weather(rng: random.Random, setup: Setup) -> list[Exchange]:
    known = rng.random() < 0.3
    question, city = weather_question(rng, rng.choice(KNOWN_CITIES) if known else None)
    if known and rng.random() < 0.5:
        question = f"What's the weather in {city}?"
    if not setup.weather:
        return [_fallback(setup, question)]
    failure = exchanges.tool_failure(rng, "weather") if rng.random() < 0.08 else None
    return [exchanges.weather(question, city, weather_result(city), setup.effort, failure)]


def _refusal(rng: random.Random, setup: Setup) -> list[Exchange]:
    return [exchanges.refusal(variant(rng, REFUSAL[0]), setup.effort)]


def _code(rng: random.Random, setup: Setup) -> list[Exchange]:
    return [exchanges.code(variant(rng, CODE[0]), setup.effort)]


def _shopping(rng: random.Random, setup: Setup) -> list[Exchange]:
    if not setup.shopping:
        return _unknown(rng, setup)
    return [exchanges.shopping_list(rng.randrange(len(LISTS)), setup.effort)]


KINDS: dict[str, tuple[Kind, float]] = {
    "fact": (_fact, 16),
    "follow-up": (_follow_up, 5),
    "stray-follow-up": (_stray_follow_up, 2),
    "refusal": (_refusal, 3),
    "code": (_code, 3),
    "greeting": (_greeting, 7),
    "fallback": (_unknown, 24),
    "arithmetic": (_arithmetic, 18),
    "weather": (_weather, 12),
    "shopping": (_shopping, 4),
}
"""What a user turn asks, with how often the training data asks it."""
KNOWN_KINDS = ("fact", "follow-up", "code", "refusal")
"""The known questions that need no tool (the shopping list comes with its own setup)."""


def random_exchanges(rng: random.Random, setup: Setup, kind: str | None = None) -> list[Exchange]:
    """The exchanges of one user request (two for a follow-up: its first question and itself)."""
    names = list(KINDS)
    if kind is None:
        kind = rng.choices(names, [weight for _, weight in KINDS.values()])[0]
    if setup.shopping and kind not in ("shopping", "greeting", "fallback", "fact"):
        kind = "shopping"
    return KINDS[kind][0](rng, setup)


def random_conversation(rng: random.Random, setup: Setup, last: str | None = None) -> list[Exchange]:
    """Zero to five earlier exchanges, then one of kind ``last`` (any kind if None)."""
    history: list[Exchange] = []
    for _ in range(rng.choices(range(6), (30, 20, 15, 13, 11, 11))[0]):
        history += random_exchanges(rng, setup)
    return [*history, *random_exchanges(rng, setup, last)]


def _quoted(count: int, rng: random.Random) -> list[Job]:
    """``count`` chats that end in a question the fallback names (odd ones after earlier turns; half without tools)."""
    jobs = []
    for number in range(count):
        setup = random_setup(rng)
        if number % 4 < 2:
            setup = replace(setup, weather=False, python=None, shopping=False)
        index = rng.choice(QUOTED_FACTS)
        asked = exchanges.fact(index, variant(rng, FACTS[index][0]), setup.effort)
        jobs.append(Job(setup, [*random_conversation(rng, setup), asked] if number % 2 else [asked]))
    return jobs


def build_examples(
    encoding: HarmonyEncoding,
    conversations: int = 10000,
    copies: int = 6000,
    bare_copies: int = 40000,
    unseen: int = 1500,
    greetings: int = 0,
    known: int = 0,
    unknown: int = 0,
    pastes: int = PASTES,
    committed: int = COMMITTED,
    quoted: int = QUOTED,
    unanalysed: int = UNANALYSED,
    misled: int = MISLED,
    seed: int = DATA_SEED,
    workers: int = 1,
) -> list[Example]:
    """Every training example, in a fixed order, from ``seed`` (``workers`` processes render them: same result).

    ``conversations`` random chats of every kind; ``copies`` chats that end in a python or weather
    call; ``bare_copies`` first turns that call python (three in four) or the weather tool, rendered
    bare; ``greetings``, ``known`` and ``unknown`` extra chats that end in a greeting, a known
    question (:data:`KNOWN_KINDS`) or out-of-scope text, half of them starting with it (none in the
    shipped build: README.md says what each did to the rates); ``pastes`` extra
    chats that end in a long pasted text (:data:`PASTES`) and ``committed`` final answers begun with a
    known answer (:func:`committed_answers`), none shipped either; ``quoted`` extra chats that end
    in a question the fallback names (:data:`QUOTED`, half of them first messages, half without
    tools, from their own random stream so the rest stays as it was); ``unanalysed`` answers written
    straight into the final channel (:func:`unanalysed_finals`, :data:`UNANALYSED`) and ``misled`` ones
    after an analysis gone astray (:data:`MISLED`). Copying numbers and
    names is only learned from many fresh examples (a few hundred seen again and again are learned
    by heart instead), and bare ones are cheap.
    """
    rng = random.Random(seed)
    renderer = Renderer(encoding)
    jobs: list[Job] = []
    for _ in range(conversations):
        setup = random_setup(rng)
        jobs.append(Job(setup, random_conversation(rng, setup), summaries=0.15))
    for number in range(copies):
        setup = random_setup(rng)
        while setup.python is None and not setup.weather:
            setup = random_setup(rng)
        kind = "weather" if setup.python is None or (setup.weather and rng.random() < 0.4) else "arithmetic"
        chat = random_exchanges(rng, setup, kind) if number % 2 else random_conversation(rng, setup, kind)
        jobs.append(Job(setup, chat, summaries=0.05))
    demo = Setup("medium", weather=True, python=python_namespace(120.0, "/mnt/data", network_blocked=True))
    for _ in range(bare_copies):
        setup = replace(demo, effort=rng.choice(EFFORTS))
        kind = "arithmetic" if rng.random() < 0.75 else "weather"
        jobs.append(Job(setup, random_exchanges(rng, setup, kind), bare=True))
    for count, kinds in ((greetings, ("greeting",)), (known, KNOWN_KINDS), (unknown, ("fallback",))):
        for number in range(count):
            setup = random_setup(rng)
            kind = rng.choices(kinds, [KINDS[name][1] for name in kinds])[0]
            chat = random_conversation(rng, setup, kind) if number % 2 else random_exchanges(rng, setup, kind)
            jobs.append(Job(setup, chat))
    for number in range(pastes):
        setup = random_setup(rng)
        history = random_conversation(rng, setup) if number % 2 else []
        jobs.append(Job(setup, [*history, *_paste(rng, setup)]))
    found = render_all(renderer, jobs, workers)
    used = {token for example in found for token in (*example.prompt, *example.completion)}
    jobs = []
    for number, place in enumerate(unseen_names(encoding, used, unseen, seed)):
        setup = random_setup(rng)
        while not setup.weather or setup.shopping:
            setup = random_setup(rng)
        asked = replace(_fallback(setup, weather_question(rng, place)[0]), kind=UNSEEN)
        jobs.append(Job(setup, [*(random_conversation(rng, setup) if number % 2 else []), asked]))
    found += render_all(renderer, jobs, workers)
    found += render_all(renderer, _quoted(quoted, random.Random(seed + 2)), workers)
    found += committed_answers(renderer, found, committed, random.Random(seed + 1))
    found += unanalysed_finals(renderer, found, unanalysed, random.Random(seed + 3))
    return found + misled_finals(renderer, found, misled, random.Random(seed + 4))
