"""Key names in notices are text: the quit hint names a remapped key as it is, never as markup."""

from __future__ import annotations

from harmony_chat.config import Settings
from tests.tui.harness import make_app, settle


async def test_the_quit_hint_names_the_remapped_key_as_text() -> None:
    app = make_app(Settings(keymap={"quit": "ctrl+w"}))
    async with app.run_test(size=(110, 36), notifications=True) as pilot:
        await settle(pilot)
        app.action_help_quit()  # what ctrl+c says where it does not copy
        await pilot.pause(0.1)
        shown = [str(notice.message) for notice in app._notifications]
        assert shown == ["Press ctrl+w to quit the app"]
        await pilot.press("ctrl+w")
        await pilot.pause(0.2)
        assert not app.is_running  # the remapped key quits
