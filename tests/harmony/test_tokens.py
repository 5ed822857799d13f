"""The token ids harmony-chat knows by heart are the ones openai-harmony's encoding uses."""

from __future__ import annotations

from openai_harmony import HarmonyEncoding

from harmony_chat.harmony import tokens as tk


def test_named_special_tokens_are_openai_harmonys(encoding: HarmonyEncoding) -> None:
    for token, name in tk.NAMES.items():
        assert encoding.encode(name, allowed_special="all") == [token], name
        assert encoding.decode([token]) == name
    assert set(tk.NAMES) == {token for token in tk.NAMES if tk.is_special(token)}


def test_ordinary_words_and_the_stop_sets(encoding: HarmonyEncoding) -> None:
    assert encoding.encode("assistant", allowed_special="all") == [tk.ASSISTANT]
    assert encoding.encode("user", allowed_special="all") == [tk.USER]
    assert tk.GENERATION_STOPS == {*encoding.stop_tokens_for_assistant_actions(), tk.ENDOFTEXT}
    assert tk.MESSAGE_STOPS == {tk.END, *encoding.stop_tokens_for_assistant_actions()}
    assert encoding.decode([tk.FIRST_SPECIAL - 1]) != tk.special_name(tk.FIRST_SPECIAL - 1)
    assert tk.special_name(200020) == "<|reserved_200020|>" and tk.is_reserved(200020)
