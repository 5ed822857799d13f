"""The pocket gpt-oss's measured rates, on a sample that runs in CI (``training/pocket/evaluate.py`` measures all).

Every prompt here is held out (``training/pocket/heldout.json``: written by hand, never trained on) or a known
question asked at turns 1 to 6 of a chat, each chat after a new chat in the same process. The model
runs as users meet it: llama.cpp, the app's conversation core, the real python tool and the demo
weather MCP server, every call approved. Sampling at temperature 1.0 uses fixed seeds.

Special tokens are sampled under harmony's grammar, as in the app. Where the shipped model misses
a target (the held-out cities), the target is a strict expected failure: it turns red once a model
meets it, so the mark goes with the gap. The sampled runs take minutes: they are the ``slow`` tier
(``pytest -m slow``); the checks of the manifest's full measurement run in every test run.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence

import pytest

from harmony_chat.demo.pocket import pocket_manifest, pocket_model_path
from training.pocket.evaluate import (
    BLIND,
    CONFIRMATION,
    FRESH,
    OTHER_EFFORTS,
    PocketChat,
    Rate,
    arithmetic_rate,
    first_message_rate,
    trained_rate,
    unknown_rate,
    weather_rate,
)
from training.pocket.heldout import held_out_prompts
from training.pocket.trained import trained_units

pytestmark = pytest.mark.llama


def some(kind: str, count: int) -> list[str]:
    """``count`` held-out prompts of ``kind``, the same ones every run."""
    return random.Random(kind).sample(list(held_out_prompts()[kind]), count)


def at_least(rate: Rate, share: float) -> bool:
    """Whether ``rate`` passed at least ``share`` of its cases (rounded up) with nothing malformed."""
    return rate.passed >= math.ceil(share * rate.total) and rate.malformed == 0


@pytest.fixture(scope="module")
def greedy() -> Iterator[PocketChat]:
    chat = PocketChat(pocket_model_path(), temperature=0.0, seed=7)
    yield chat
    chat.close()


@pytest.fixture(scope="module")
def sampled() -> Iterator[PocketChat]:
    chat = PocketChat(pocket_model_path(), temperature=1.0, seed=11)
    yield chat
    chat.close()


@pytest.fixture(scope="module")
def greedy_without_tools() -> Iterator[PocketChat]:
    """As ``ask --demo`` and ``serve`` run it: no tools declared."""
    chat = PocketChat(pocket_model_path(), temperature=0.0, seed=7, tools=False)
    yield chat
    chat.close()


def explain(rates: Sequence[Rate]) -> str:
    return "\n".join(f"{rate.line()}: {rate.failures}" for rate in rates)


@pytest.mark.slow
def test_held_out_unknown_prompts_get_the_honest_fallback(greedy: PocketChat) -> None:
    """Out of scope, greetings included (as the targets count them): every greeting and 60 other prompts."""
    prompts = [*some("out_of_scope", 60), *held_out_prompts()["greetings"]]
    rate = unknown_rate(greedy, prompts, "out of scope and greetings")
    assert at_least(rate, 0.95), explain([rate])


@pytest.mark.slow
def test_out_of_scope_prompts_written_after_a_choice_get_the_honest_fallback(greedy: PocketChat) -> None:
    """The confirmation list (written after the shipped build was chosen on the first list): 30 of them."""
    rate = unknown_rate(greedy, some("out_of_scope_confirmation", 30), "out of scope, confirmation")
    assert at_least(rate, 0.95), explain([rate])


@pytest.mark.slow
def test_out_of_scope_prompts_written_later_get_the_honest_fallback(greedy: PocketChat) -> None:
    """The fresh list (written after the confirmation list): all 150.

    The whole list, not a sample: a build shipped before missed 3 (2 %), 2 of which fell in a sample of 30.
    """
    rate = unknown_rate(greedy, list(held_out_prompts()["out_of_scope_fresh"]), "out of scope, fresh")
    assert at_least(rate, 0.95), explain([rate])


@pytest.fixture(scope="module")
def blind(greedy: PocketChat) -> Rate:
    """The blind list (written after the shipped build was chosen, before anything was measured on it): all 150."""
    return unknown_rate(greedy, list(held_out_prompts()["out_of_scope_blind"]), "out of scope, blind")


@pytest.mark.slow
def test_out_of_scope_prompts_no_build_was_screened_on_get_the_honest_fallback(blind: Rate) -> None:
    assert blind.passed >= math.ceil(0.95 * blind.total) and blind.garbled == 0, explain([blind])


@pytest.mark.slow
def test_out_of_scope_prompts_no_build_was_screened_on_are_well_formed(blind: Rate) -> None:
    assert blind.malformed == 0, explain([blind])


@pytest.mark.slow
def test_held_out_greetings_get_the_greeting_fallback(greedy: PocketChat) -> None:
    """The fallback opens with *Hi!*: every held-out greeting gets it (in any language)."""
    rate = unknown_rate(greedy, some("greetings", 12), "greetings")
    assert at_least(rate, 0.95), explain([rate])
    greedy.new_chat()
    assert (greedy.send("hi").answer or "").startswith("Hi! I'm the pocket gpt-oss")


@pytest.mark.slow
def test_held_out_arithmetic_runs_python_and_quotes_its_output(greedy: PocketChat) -> None:
    rate = arithmetic_rate(greedy, some("arithmetic", 10))
    assert at_least(rate, 0.9), explain([rate])


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="our target beyond the shipped targets: 0/45 held-out cities (a name it never saw is not copied)",
)
def test_held_out_cities_call_the_weather_tool(greedy: PocketChat) -> None:
    right, _ = weather_rate(greedy, some("weather_questions", 5), held_out_prompts()["weather_cities"])
    assert at_least(right, 0.9), explain([right])


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True, reason="our target beyond the shipped targets: 18 of 45 held-out cities get another city's weather"
)
def test_held_out_cities_never_get_another_citys_weather(greedy: PocketChat) -> None:
    _, honest = weather_rate(greedy, some("weather_questions", 8), held_out_prompts()["weather_cities"])
    assert at_least(honest, 1.0), explain([honest])


@pytest.mark.slow
def test_known_questions_at_any_turn_greedy(greedy: PocketChat) -> None:
    overall, by_turn = trained_rate(greedy, 3, seed=5)
    assert overall.total == 18 and at_least(overall, 1.0), explain(by_turn)


@pytest.mark.slow
def test_each_known_question_as_the_first_message_with_and_without_tools(
    greedy: PocketChat, greedy_without_tools: PocketChat
) -> None:
    for chat in (greedy, greedy_without_tools):
        rate = first_message_rate(chat, 1)
        assert rate.total == len({unit[0] for unit in trained_units(tools=chat.tools)}), rate.name
        assert at_least(rate, 1.0), explain([rate])


@pytest.mark.slow
def test_each_known_question_as_the_first_message_at_low_and_high_effort(
    greedy: PocketChat, greedy_without_tools: PocketChat
) -> None:
    """Users switch the effort with a key: each known question right at the other two efforts too."""
    for chat in (greedy, greedy_without_tools):
        for effort in OTHER_EFFORTS:
            rate = first_message_rate(chat, 1, effort)
            assert rate.total == len({unit[0] for unit in trained_units(tools=chat.tools)}), rate.name
            assert at_least(rate, 1.0), explain([rate])
        assert chat.conversation.effort == "medium"  # the chat's own effort is back


@pytest.mark.slow
def test_known_questions_at_any_turn_sampled_at_temperature_1(sampled: PocketChat) -> None:
    overall, by_turn = trained_rate(sampled, 3, seed=6)
    assert at_least(overall, 0.99), explain(by_turn)
    unknown = unknown_rate(sampled, some("out_of_scope", 8), "out of scope, sampled")
    assert unknown.malformed == 0, explain([unknown])


GUIDED = ("temperature 0", "temperature 1")
"""The manifest's measurements as the app samples (``, unguided`` ones measure the model alone)."""


def _measured() -> dict[str, dict[str, dict[str, int]]]:
    measured = pocket_manifest()["measured"]
    assert isinstance(measured, dict)
    return {temperature: measured[temperature] for temperature in GUIDED}


def test_the_manifest_records_the_full_measurement() -> None:
    for temperature, rates in _measured().items():
        assert rates["held-out out of scope"]["total"] == len(held_out_prompts()["out_of_scope"])
        assert rates[CONFIRMATION]["total"] == len(held_out_prompts()["out_of_scope_confirmation"])
        assert rates[FRESH]["total"] == len(held_out_prompts()["out_of_scope_fresh"])
        assert rates[BLIND]["total"] == len(held_out_prompts()["out_of_scope_blind"])
        assert rates["held-out arithmetic"]["total"] == len(held_out_prompts()["arithmetic"])
        assert rates["trained questions, turns 1-6"]["total"] == 240
        assert rates["trained questions, turns 1-6"]["malformed"] == 0, temperature
        assert all(isinstance(rate.get("garbled"), int) for rate in rates.values()), temperature


def test_nothing_measured_was_malformed() -> None:
    assert all(rate["malformed"] == 0 for rates in _measured().values() for rate in rates.values())


def test_the_full_measurement_got_every_known_question_right_greedy() -> None:
    rate = _measured()["temperature 0"]["trained questions, turns 1-6"]
    assert rate["passed"] == rate["total"] == 240


def test_the_full_measurement_meets_the_held_out_targets() -> None:
    for rates in _measured().values():
        for name, share in (
            ("held-out out of scope", 0.95),
            (CONFIRMATION, 0.95),
            (FRESH, 0.95),
            (BLIND, 0.95),
            ("held-out greetings", 0.95),
            ("held-out arithmetic", 0.9),
        ):
            assert rates[name]["passed"] >= math.ceil(share * rates[name]["total"]), name


def test_the_full_measurement_has_no_garbled_out_of_scope_answer() -> None:
    """Issue 15: out-of-scope prompts get the fallback, *none garbled* (``pocket/garbled.py`` tells which are)."""
    lists = ("held-out out of scope", CONFIRMATION, FRESH, BLIND)
    assert all(rates[name]["garbled"] == 0 for rates in _measured().values() for name in lists)


def test_the_full_measurement_got_known_questions_right_sampled() -> None:
    rate = _measured()["temperature 1"]["trained questions, turns 1-6"]
    assert rate["passed"] >= math.ceil(0.99 * rate["total"])


FIRST_MESSAGES = ("known questions, first message", "known questions, first message, no tools")
"""The manifest's probe of each known question as the first message, with the demo's tools and without."""


def test_the_full_measurement_asked_each_known_question_as_a_first_message() -> None:
    measured = _measured()
    for name, tools in zip(FIRST_MESSAGES, (True, False), strict=True):
        questions = len({unit[0] for unit in trained_units(tools=tools)})
        greedy, sampled = measured["temperature 0"][name], measured["temperature 1"][name]
        assert greedy["passed"] == greedy["total"] == questions, name
        assert sampled["total"] == 30 * questions, name


def test_the_full_measurement_reproduces_first_messages_with_tools_at_temperature_1() -> None:
    rate = _measured()["temperature 1"][FIRST_MESSAGES[0]]
    assert rate["passed"] >= math.ceil(0.99 * rate["total"])


def test_the_full_measurement_reproduces_first_messages_without_tools_at_temperature_1() -> None:
    """Issue 15's robust sampling (>= 99 % at 1.0) as ``ask --demo`` and ``serve`` run the model."""
    rate = _measured()["temperature 1"][FIRST_MESSAGES[1]]
    assert rate["passed"] >= math.ceil(0.99 * rate["total"])


def test_the_full_measurement_asked_each_known_question_at_low_and_high_effort() -> None:
    """Greedy all right; at 1.0 (10 samples of each) >= 99 %, with the demo's tools and without."""
    measured = _measured()
    for name, tools in zip(FIRST_MESSAGES, (True, False), strict=True):
        questions = len({unit[0] for unit in trained_units(tools=tools)})
        for effort in OTHER_EFFORTS:
            greedy = measured["temperature 0"][f"{name}, {effort} effort"]
            sampled = measured["temperature 1"][f"{name}, {effort} effort"]
            assert greedy["passed"] == greedy["total"] == questions, (name, effort)
            assert sampled["total"] == 10 * questions, (name, effort)
            assert sampled["passed"] >= math.ceil(0.99 * sampled["total"]), (name, effort)
