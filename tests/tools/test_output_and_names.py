"""The output cap with its marker, and unique, stable tool names."""

from __future__ import annotations

import pytest

from harmony_chat.tools.naming import ToolNames, safe_name
from harmony_chat.tools.output import OUTPUT_LIMIT_BYTES, cap_output


def test_short_output_is_untouched() -> None:
    capped = cap_output("héllo", 64)
    assert (capped.text, capped.truncated, capped.total_bytes) == ("héllo", False, 6)
    exact = "x" * OUTPUT_LIMIT_BYTES
    assert cap_output(exact).text == exact and not cap_output(exact).truncated


def test_long_output_is_cut_on_a_character_boundary_with_a_marker() -> None:
    text = "ab€" * 10  # 5 bytes each
    capped = cap_output(text, 13)  # byte 13 falls inside the third "€"
    body, marker = capped.text.split("\n", 1)
    assert body == "ab€ab€ab" and capped.truncated and capped.total_bytes == 50
    assert marker == "[output cut: 38 of 50 bytes left out; only the first 12 bytes are shown]"


def test_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError):
        cap_output("x", -1)


@pytest.mark.parametrize(
    ("raw", "safe"),
    [
        ("get_weather", "get_weather"),
        ("read-file", "read_file"),
        ("fs.list dir", "fs_list_dir"),
        ("2fa", "_2fa"),
        ("--", "tool"),
    ],
)
def test_safe_names(raw: str, safe: str) -> None:
    assert safe_name(raw) == safe


def test_later_servers_get_a_prefix_and_names_never_change_meaning() -> None:
    names = ToolNames()
    assert names.name_for("local", "search") == "search"
    assert names.name_for("web", "search") == "web_search"
    assert names.name_for("web", "fetch") == "fetch"
    assert names.name_for("local", "search") == "search"
    # A clash that the prefix does not settle gets a number.
    assert names.name_for("web", "web_search") == "web_web_search"
    assert names.name_for("web-x", "search") == "web_x_search"
    assert names.name_for("web.x", "search") == "web_x_search_2"
    assert names.owner("web_search") == ("web", "search") and names.owner("nothing") is None
