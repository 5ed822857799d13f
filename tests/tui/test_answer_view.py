"""Finished answer blocks are drawn once, as lines, and look exactly like Textual's Markdown widgets.

Each check puts Textual's own ``Markdown`` (the reference, styled like an answer) and an
:class:`Answer` side by side in one app and compares what the screen shows, cell by cell:
character, colours, bold/italic/underline/strike and the click action of links.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock, MarkdownFence

from harmony_chat.backends.base import SamplingParams
from harmony_chat.harmony.events import ContentDelta, RawToken
from harmony_chat.tui.bench import PacedReplay, long_answer
from harmony_chat.tui.widgets.answer import Answer, answer_parser
from harmony_chat.tui.widgets.finished_blocks import FinishedBlocks
from harmony_chat.tui.widgets.turn import AssistantTurn
from tests.tui.harness import make_app, settle

SECTION = long_answer.__globals__["_SECTION"]
KITCHEN_SINK = """# Title one

Intro with **bold**, *italic*, ~~strike~~, `code`, a [link](https://example.com) and an ![image](x.png).
It is long enough to wrap in a narrow view, 東京 🙂 too.

## Second

### Third

#### Fourth

##### Fifth

###### Sixth

---

1. one
2. two
   - nested *a*
   - nested b
     - deeper
3. three

9. nine
10. ten

- loose item one

- loose item two

  with a second paragraph

  ```python
  print("in item")
  ```

> A quote with **bold**
>
> - and a list

```
plain code
\twith a tab
```

| Left | Center with `code` | Right |
|:-----|:------:|------:|
| a **b** | [l](http://x) | 3 |
| longer cell text here | c | d |

Setext heading
==============

Soft break line
and a hard one.\\
End.
"""
WIDE_TABLE = (
    "| a very long header name that goes on | another quite long header | third header that is long |\n"
    "|---|---|---|\n"
    "| some cell content that is rather long and should wrap or shrink | more content in the second cell | x |\n"
)
EDGES = "- a\n-\n- b\n\n1. x\n2.\n3. y\n\n###\n\n> \n\nafter"
CORPUS = {"sections": SECTION.format(n=1) + SECTION.format(n=2), "kitchen sink": KITCHEN_SINK, "wide table": WIDE_TABLE}
Cell = tuple[str, str, str, bool, bool, bool, bool, object]


class Reference(Markdown):
    """Textual's Markdown styled like an answer: what an answer looked like before it drew blocks itself."""

    DEFAULT_CSS = "Reference { margin: 0; padding: 0 1; background: transparent; }"

    def __init__(self) -> None:
        super().__init__("", open_links=False, parser_factory=answer_parser)


class SideBySide(App[None]):
    """The reference above an answer, in a scroll view like the chat's."""

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Reference()
            yield Answer()


def _cells(strip: Strip) -> list[Cell]:
    found: list[Cell] = []
    for segment in strip:
        style = Segment(segment.text, segment.style).style
        for char in segment.text:
            found.append(
                (
                    char,
                    str(style.bgcolor) if style else "",
                    str(style.color) if style and char != " " else "",
                    bool(style and style.bold),
                    bool(style and style.italic),
                    bool(style and style.underline),
                    bool(style and style.strike),
                    style.meta.get("@click") if style else None,
                )
            )
    return found


def _drawn(app: App[Any], widget: Markdown) -> list[list[Cell]]:
    region = widget.region
    strips = app.screen._compositor.render_strips()
    return [_cells(strip.crop(region.x, region.right)) for strip in strips[region.y : region.bottom]]


def _text(rows: list[list[Cell]]) -> str:
    return "\n".join("".join(cell[0] for cell in row) for row in rows)


async def _both(pilot: Any) -> tuple[list[list[Cell]], list[list[Cell]]]:
    await pilot.pause()
    await pilot.pause()
    app = pilot.app
    return _drawn(app, app.query_one(Reference)), _drawn(app, app.query_one(Answer))


@pytest.mark.parametrize("name", CORPUS)
@pytest.mark.parametrize(("width", "theme"), [(72, "textual-dark"), (40, "textual-light")])
async def test_finished_blocks_draw_like_textuals_markdown(name: str, width: int, theme: str) -> None:
    app = SideBySide()
    async with app.run_test(size=(width, 300)) as pilot:
        app.theme = theme
        await app.query_one(Reference).update(CORPUS[name])
        answer = app.query_one(Answer)
        await answer.write(CORPUS[name])
        await answer.finish()
        reference, drawn = await _both(pilot)
        assert _text(drawn) == _text(reference)
        assert drawn == reference
        shown = [type(child) for child in answer.children if child.display]
        assert FinishedBlocks in shown and set(shown) <= {FinishedBlocks, MarkdownFence}  # code wider than the view
        assert answer.live_widgets == []


async def test_the_block_being_written_draws_like_textuals_live_widgets() -> None:
    """Streamed one piece at a time, the answer shows what Textual's own streaming shows at every step."""
    source = KITCHEN_SINK + "\n" + EDGES
    app = SideBySide()
    async with app.run_test(size=(60, 300)) as pilot:
        reference, answer = app.query_one(Reference), app.query_one(Answer)
        for start in range(0, len(source), 11):
            piece = source[start : start + 11]
            await reference.append(piece)
            await answer.append(piece)
            expected, drawn = await _both(pilot)
            assert drawn == expected, source[: start + 11]


async def test_edge_blocks_draw_like_textuals_markdown() -> None:
    app = SideBySide()
    async with app.run_test(size=(50, 100)) as pilot:
        await app.query_one(Reference).update(EDGES)
        answer = app.query_one(Answer)
        await answer.write(EDGES)
        await answer.finish()
        reference, drawn = await _both(pilot)
        assert drawn == reference


async def test_theme_change_and_resize_draw_again() -> None:
    app = SideBySide()
    async with app.run_test(size=(80, 200)) as pilot:
        await app.query_one(Reference).update(KITCHEN_SINK)
        answer = app.query_one(Answer)
        await answer.write(KITCHEN_SINK)
        await answer.finish()
        before, _ = await _both(pilot)
        app.theme = "textual-light"
        await pilot.resize_terminal(50, 200)
        await pilot.pause(0.1)
        reference, drawn = await _both(pilot)
        assert reference != before
        assert drawn == reference


async def test_code_too_wide_for_the_view_stays_a_scrollable_fence() -> None:
    code = "```python\nvalue = " + " + ".join(f"item_{n}" for n in range(30)) + "\n```\n\nAfter.\n"
    app = SideBySide()
    async with app.run_test(size=(60, 60)) as pilot:
        await app.query_one(Reference).update(code)
        answer = app.query_one(Answer)
        await answer.write(code)
        await answer.finish()
        reference, drawn = await _both(pilot)
        assert drawn == reference
        assert [type(child) for child in answer.children if child.display] == [MarkdownFence, FinishedBlocks]


async def test_code_keeps_its_highlighting() -> None:
    app = SideBySide()
    async with app.run_test(size=(80, 40)) as pilot:
        answer = app.query_one(Answer)
        await answer.write("```python\ndef f(x):\n    return 'text'\n```\n")
        await answer.finish()
        _, drawn = await _both(pilot)
        colours = {cell[2] for row in drawn for cell in row if cell[0] not in " "}
        assert len(colours) >= 3, colours  # keyword, name, string (and punctuation) differ


async def test_widgets_do_not_grow_with_the_answer() -> None:
    """Memory follows the structure: a long answer is as many widgets as a short one."""
    counts = []
    for sections in (3, 30):
        app = SideBySide()
        async with app.run_test(size=(80, 40)) as pilot:
            answer = app.query_one(Answer)
            for n in range(sections):
                await answer.write(SECTION.format(n=n))
                await pilot.pause()
            await answer.finish()
            await pilot.pause()
            counts.append(len(list(answer.query("*"))))
            assert all(not block.display for block in answer.query(MarkdownBlock))  # only hidden stand-ins
    assert counts[0] == counts[1]


async def test_a_batch_of_tokens_is_one_write() -> None:
    """Token counts between the deltas of a batch do not split the answer into one write per token."""
    writes: list[str] = []
    app = make_app()
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        turn = AssistantTurn(1, "low")
        await app.chat.log_view.mount(turn)
        original = Answer.write

        async def counted(self: Answer, fragment: str) -> None:
            writes.append(fragment)
            await original(self, fragment)

        Answer.write = counted  # type: ignore[method-assign]
        try:
            events: list[Any] = []
            for word in ("one ", "two ", "three"):
                events += [RawToken(1, word, False, "final"), ContentDelta("final", word)]
            await turn.apply(events)
            await pilot.pause()
        finally:
            Answer.write = original  # type: ignore[method-assign]
    assert writes == ["one two three"]


def test_paced_replay_keeps_to_its_schedule() -> None:
    tokens = list(range(1, 41))
    backend = PacedReplay([tokens], rate=400.0, name="paced")
    backend.load()
    started = time.perf_counter()
    out = list(backend.generate([1], SamplingParams(max_tokens=100), set(), lambda: False))
    elapsed = time.perf_counter() - started
    assert out == tokens
    assert elapsed >= (len(tokens) - 1) / 400.0 - PacedReplay.QUANTUM_S


async def test_mouse_selection_in_finished_blocks_is_highlighted_and_copied() -> None:
    app = SideBySide()
    async with app.run_test(size=(72, 60)) as pilot:
        answer = app.query_one(Answer)
        await answer.write(SECTION.format(n=7))
        await answer.finish()
        await pilot.pause()
        finished = answer.query_one(FinishedBlocks)
        app.screen.selections = {finished: Selection.from_offsets(Offset(0, 0), Offset(5, 4))}
        await pilot.pause()
        assert app.screen.get_selected_text() == "Step 7\n\nSome bold text, inline code and a list:\n\n• fir"
        highlighted = app.screen.get_component_rich_style("screen--selection").bgcolor
        row = _drawn(app, answer)[6]  # under the heading's 2-line margin: "• first item", selected up to "• fir"
        assert _text([row]).startswith(" • first item")
        assert [cell[1] == str(highlighted) for cell in row[:8]] == [False] + [True] * 5 + [False] * 2
