"""The README's config reference is generated from the settings' docstrings and stays in step."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from harmony_chat.config import ChatSettings, HistorySettings, ModelSettings, Settings, UiSettings
from harmony_chat.config_reference import END, README, START, main, render_reference, replace_reference


def test_the_readme_holds_the_generated_reference() -> None:
    readme = README.read_text(encoding="utf-8")
    section = readme[readme.index(START) : readme.index(END) + len(END)]
    assert section == render_reference(), "run: python -m harmony_chat.config_reference --write"


@pytest.mark.parametrize("section", [ModelSettings, ChatSettings, UiSettings, HistorySettings, Settings])
def test_every_setting_has_a_docstring_and_a_row(section: type[BaseModel]) -> None:
    reference = render_reference()
    for name, field in section.model_fields.items():
        assert field.description, f"{section.__name__}.{name} has no docstring"
        if section is not Settings:
            assert f"| `{name}` |" in reference and field.description.split("`")[0] in reference


def test_a_changed_docstring_changes_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ModelSettings.model_fields["context"], "description", "Tokens the model can see at once.")
    row = "| `context` | integer, ≥ 256, ≤ 1048576 | `16384` | Tokens the model can see at once. |"
    assert row in render_reference()


def test_write_replaces_only_between_the_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n\n{START}\nstale\n{END}\n\nafter\n", encoding="utf-8")
    monkeypatch.setattr("harmony_chat.config_reference.README", readme)
    assert main(["--write"]) == 0
    assert readme.read_text(encoding="utf-8") == f"# Title\n\nbefore\n\n{render_reference()}\n\nafter\n"
    with pytest.raises(ValueError, match="markers"):
        replace_reference("# no markers")
