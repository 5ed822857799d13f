"""The README's config reference and the CLI's digest are generated from the settings and stay in step."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from harmony_chat.config import ChatSettings, HistorySettings, ModelSettings, Settings, UiSettings
from harmony_chat.config_reference import (
    DIGEST,
    END,
    README,
    START,
    main,
    render_digest,
    render_reference,
    replace_reference,
)


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


def test_the_cli_digest_holds_the_generated_settings() -> None:
    assert DIGEST.read_text(encoding="utf-8") == render_digest(), "run: python -m harmony_chat.config_reference --write"


def test_a_changed_docstring_changes_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ModelSettings.model_fields["context"], "description", "Tokens the model can see at once.")
    namespace: dict[str, object] = {}
    exec(render_digest(), namespace)
    assert namespace["SETTINGS"]["model.context"] == ("int", (), "Tokens the model can see at once.")  # type: ignore[index]


def test_write_replaces_only_between_the_markers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    readme, digest = tmp_path / "README.md", tmp_path / "settings_digest.py"
    readme.write_text(f"# Title\n\nbefore\n\n{START}\nstale\n{END}\n\nafter\n", encoding="utf-8")
    monkeypatch.setattr("harmony_chat.config_reference.README", readme)
    monkeypatch.setattr("harmony_chat.config_reference.DIGEST", digest)
    assert main(["--write"]) == 0
    assert readme.read_text(encoding="utf-8") == f"# Title\n\nbefore\n\n{render_reference()}\n\nafter\n"
    assert digest.read_text(encoding="utf-8") == render_digest()
    with pytest.raises(ValueError, match="markers"):
        replace_reference("# no markers")
