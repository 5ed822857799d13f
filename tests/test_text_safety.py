"""The one neutraliser of terminal-bound text: every control character visible, JSON exact and inert."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harmony_chat.text_safety import terminal_json, visible

ROOT = Path(__file__).resolve().parents[1]
RAW_CONTROLS = "".join(chr(code) for code in [*range(0x20), *range(0x7F, 0xA0)] if chr(code) not in "\t\n")
TEXT = st.lists(st.characters(max_codepoint=0x2FF) | st.sampled_from(["\r\n", "\x1b]0;x\x07", "\x9b2J"])).map("".join)


def test_escape_sequences_become_pictures() -> None:
    assert visible("a\x1b]0;title\x07b") == "a␛]0;title␇b"
    assert visible("\x1b[2K\x1b[1Gx") == "␛[2K␛[1Gx"
    assert visible("\x9b31m\x85\x7f") == "\ufffd31m\ufffd\u2421"
    assert visible("tab\there\r\nline\rover") == "tab\there\nline␍over"


BIDI_AND_SEPARATORS = "\u061c\u200e\u200f\u2028\u2029" + "".join(
    map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)])
)


def test_bidi_controls_and_line_separators_are_written_as_escapes() -> None:
    trap = 'if access == "none\u202e\u2066# check\u2069\u2066":'
    assert visible(trap) == 'if access == "none\\u202e\\u2066# check\\u2069\\u2066":'
    assert visible("one\u2028two\u2029") == "one\\u2028two\\u2029"
    for char in BIDI_AND_SEPARATORS:
        assert visible(char) == f"\\u{ord(char):04x}"


@given(TEXT)
def test_no_control_character_but_tab_and_newline_is_left(text: str) -> None:
    shown = visible(text)
    assert not set(shown) & set(RAW_CONTROLS)
    assert shown.count("\n") == text.count("\n") and shown.count("\t") == text.count("\t")


@given(st.recursive(st.none() | TEXT | st.integers(), lambda inner: st.lists(inner) | st.dictionaries(TEXT, inner)))
def test_terminal_json_decodes_to_the_same_value_with_no_raw_control(value: object) -> None:
    for indent in (None, 2):
        text = terminal_json(value, indent=indent)
        assert json.loads(text) == value
        assert not set(text) & set(RAW_CONTROLS)


def test_terminal_json_is_json_dumps_where_no_del_or_c1_is_present() -> None:
    value = {"text": '東京 \x1b[31m "q" \n', "n": [1, None]}
    assert terminal_json(value) == json.dumps(value, ensure_ascii=False)
    assert terminal_json({"t": "a\x9bb\x7f"}) == '{"t": "a\\u009bb\\u007f"}'


def test_one_definition_and_no_ui_library() -> None:
    code = (
        "import sys\n"
        "import harmony_chat.text_safety\n"
        "assert not [m for m in sys.modules if m == 'textual' or m.startswith(('textual.', 'rich'))]\n"
        "from harmony_chat.tui import literal\n"
        "assert literal.visible is harmony_chat.text_safety.visible\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
