"""The pocket model's documented rates are the ones its shipped manifest records."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harmony_chat.demo.pocket import pocket_manifest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "pocket-model.md"
README = ROOT / "README.md"
OUT_OF_SCOPE = ("", ", confirmation", ", fresh", ", blind")
ROWS = {
    "Held-out out-of-scope prompts → the honest fallback": ("held-out out of scope",),
    "The confirmation list → the fallback": ("held-out out of scope, confirmation",),
    "The fresh list → the fallback": ("held-out out of scope, fresh",),
    "The blind list → the fallback": ("held-out out of scope, blind",),
    "Held-out greetings → the honest fallback, which opens with *Hi!*": ("held-out greetings",),
    "Held-out arithmetic → python call, answer quoting its output exactly": ("held-out arithmetic",),
    "Held-out cities → `get_weather` call, answer quoting it": ("held-out cities",),
    "Held-out cities → that, or the fallback (never another city)": ("held-out cities, right or the fallback",),
    "Known questions at turns 1 to 6 (40 chats, 240 turns)": ("trained questions, turns 1-6",),
    "Known questions as the first message, demo tools (18 questions)": ("known questions, first message",),
    "Known questions as the first message, no tools (14 questions)": ("known questions, first message, no tools",),
    "Known questions as the first message at low and at high effort, demo tools": (
        "known questions, first message, low effort",
        "known questions, first message, high effort",
    ),
    "Known questions as the first message at low and at high effort, no tools": (
        "known questions, first message, no tools, low effort",
        "known questions, first message, no tools, high effort",
    ),
}
TEMPERATURES = ("temperature 0", "temperature 1")


def table(text: str) -> dict[str, list[str]]:
    """The Markdown table rows of ``text`` by their first cell."""
    rows = [line.strip().strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [cell.strip() for cell in cells[1:]] for cells in rows}


def measured(temperature: str, names: tuple[str, ...]) -> tuple[int, int]:
    runs = pocket_manifest()["measured"]
    assert isinstance(runs, dict)
    rates = runs[temperature]
    return sum(rates[name]["passed"] for name in names), sum(rates[name]["total"] for name in names)


def percent(passed: int, total: int) -> float:
    return round(100 * passed / total, 1)


@pytest.mark.parametrize("row", ROWS)
def test_each_rate_in_the_document_is_the_manifests(row: str) -> None:
    cells = table(DOC.read_text(encoding="utf-8"))[row]
    for cell, temperature in zip(cells, TEMPERATURES, strict=False):
        passed, total = measured(temperature, ROWS[row])
        found = re.fullmatch(r"(\d+)/(\d+) \(([\d.]+) %\)", cell)
        assert found is not None, cell
        assert (int(found[1]), int(found[2])) == (passed, total)
        assert float(found[3]) == percent(passed, total)


def test_malformed_and_garbled_rows_are_the_manifests() -> None:
    runs = pocket_manifest()["measured"]
    assert isinstance(runs, dict)
    rows = table(DOC.read_text(encoding="utf-8"))
    for column, temperature in enumerate(TEMPERATURES):
        guided, unguided = runs[temperature], runs[f"{temperature}, unguided"]
        assert rows["Malformed turns (decoder repairs), all of the above"][column] == str(
            sum(rate["malformed"] for rate in guided.values())
        )
        assert rows["The same model unguided: malformed turns"][column].split()[0] == str(
            sum(rate["malformed"] for rate in unguided.values())
        )
        garbled = [str(guided[f"held-out out of scope{name}"]["garbled"]) for name in OUT_OF_SCOPE]
        assert rows["Garbled out-of-scope misses: held-out, confirmation, fresh, blind"][column] == ", ".join(garbled)


def test_the_readmes_headline_rates_are_the_manifests() -> None:
    readme = README.read_text(encoding="utf-8")
    section = readme.split("## The pocket gpt-oss", 1)[1].split("\n## ", 1)[0]
    assert "docs/pocket-model.md" in section and "training/pocket/README.md" in section
    rows = table(section)
    for column, temperature in enumerate(TEMPERATURES):
        lists = [percent(*measured(temperature, (f"held-out out of scope{name}",))) for name in OUT_OF_SCOPE]
        totals = sum(measured(temperature, (f"held-out out of scope{name}",))[1] for name in OUT_OF_SCOPE)
        (scope,) = [row for row in rows if row.startswith("Out-of-scope prompts")]
        assert f"{totals} prompts" in scope
        assert rows[scope][column] == f"{min(lists):.1f} to {max(lists):.1f} %"
        arithmetic = percent(*measured(temperature, ("held-out arithmetic",)))
        assert rows["Held-out arithmetic → a python call and its exact result"][column] == f"{arithmetic:.1f} %"
        known = percent(*measured(temperature, ("trained questions, turns 1-6",)))
        assert rows["Known questions at turns 1 to 6 of a chat"][column] == f"{known:g} %"
