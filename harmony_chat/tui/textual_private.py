"""Every use of Textual's private names, in this one module, each with a public way when they are missing.

harmony-chat reaches past Textual's public API in a few places:

- **Answers drawn as lines** (:mod:`~harmony_chat.tui.block_render`): finished Markdown blocks are drawn
  with Textual's own line renderer (``textual._styles_cache.StylesCache``), grid resolver
  (``textual._resolve.resolve``), inline conversion (``MarkdownBlock._token_to_content``), block
  parser (``Markdown._parse_markdown``), in-place update (``MarkdownBlock._update_from_block``),
  source (``Markdown._markdown``) and three widgets ``textual.widgets._markdown`` does not export.
  Without them answers stream through Textual's public ``MarkdownStream`` into plain ``Markdown``
  widgets: the same on screen, slower on long answers.
- **Pastes read as text** (:mod:`~harmony_chat.tui.pasted_text`): the POSIX driver's input loop makes
  its parser by the module name ``linux_driver.XTermParser`` (``textual._xterm_parser``); a paste-safe
  subclass is put there. Without it the paste filter is skipped (pastes holding escape characters
  may arrive as key presses again).
- **Output that survives the terminal going away** (:mod:`~harmony_chat.tui.terminal_driver`): the
  driver's output is ``LinuxDriver._file``. Without it writes are not guarded.
- **Caches of removed widgets** (:mod:`~harmony_chat.tui.render_caches`): ``StylesCache.get_inner_outer``.
- **Frame times** in the TUI benchmark: ``App._display``.

Everything is looked up once, when this module is imported (:func:`probe`); a feature whose names are
missing (or whose signatures changed) is turned off, with a logged notice, and its public way taken.
``pyproject.toml`` pins the Textual versions the private way was tested with.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from rich.style import Style as RichStyle
from textual.app import App
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

if TYPE_CHECKING:
    from markdown_it.token import Token
    from textual.css.scalar import Scalar
    from textual.drivers.linux_driver import LinuxDriver

log = logging.getLogger(__name__)

AppType = TypeVar("AppType", bound=App[Any])


@dataclass(frozen=True, slots=True)
class _LineDrawing:
    """Textual's private pieces that drawing answers as lines needs."""

    styles_cache: Callable[[], Any]
    native_ansi: bool
    """Whether ``StylesCache.render`` takes ``native_ansi`` (Textual 8.2.7 on; before, text is drawn without it)."""
    resolve: Callable[..., list[tuple[int, int]]]
    bullet: Callable[[], Widget]
    table_grid: Callable[[list[Any], list[Any]], Widget]
    table_cell: Callable[..., Widget]


_line_drawing: _LineDrawing | None = None
line_drawing_missing: str | None = "not probed"
"""Why answers cannot be drawn as lines (None: they can)."""
_parser_class: type | None = None
paste_filter_missing: str | None = "not probed"
"""Why the paste filter cannot be put in front of Textual's input parser (None: it can)."""
driver_output_missing: str | None = "not probed"
"""Why the driver's output cannot be guarded (None: it can)."""


class PrivateApiMissing(RuntimeError):
    """A private-way function was called although :func:`probe` found its names missing."""


def _has_parameters(function: Callable[..., Any], names: Iterable[str]) -> None:
    parameters = inspect.signature(function).parameters
    missing = [name for name in names if name not in parameters]
    if missing:
        raise AttributeError(f"{function.__qualname__} has no parameter {', '.join(missing)}")


def _reads(function: Callable[..., Any], name: str) -> None:
    if name not in function.__code__.co_names:
        raise AttributeError(f"{function.__qualname__} no longer uses {name}")


def _probe_line_drawing() -> _LineDrawing:
    from textual._resolve import resolve
    from textual._styles_cache import StylesCache
    from textual.widgets._markdown import MarkdownBullet, MarkdownTableCellContents, MarkdownTableContent

    _has_parameters(StylesCache.render, ("content_size", "padding", "opacity", "ansi_theme"))
    native_ansi = "native_ansi" in inspect.signature(StylesCache.render).parameters
    _has_parameters(resolve, ("expand", "shrink", "minimums"))
    for owner, name in (
        (MarkdownBlock, "_token_to_content"),
        (MarkdownBlock, "_update_from_block"),
        (Markdown, "_parse_markdown"),
    ):
        if not callable(getattr(owner, name, None)):
            raise AttributeError(f"{owner.__name__}.{name} is missing")
    source = inspect.getattr_static(Markdown, "source", None)
    if not isinstance(source, property) or source.fget is None:
        raise AttributeError("Markdown.source is no longer a property")
    _reads(source.fget, "_markdown")
    return _LineDrawing(
        StylesCache, native_ansi, resolve, MarkdownBullet, MarkdownTableContent, MarkdownTableCellContents
    )


def _probe_parser() -> type:
    from textual._xterm_parser import XTermParser
    from textual.drivers import linux_driver

    if getattr(linux_driver, "XTermParser", None) is not XTermParser:
        raise AttributeError("textual.drivers.linux_driver no longer imports XTermParser")
    for name in ("feed", "tick"):
        if not callable(getattr(XTermParser, name, None)):
            raise AttributeError(f"XTermParser.{name} is missing")
    _reads(linux_driver.LinuxDriver.run_input_thread, "XTermParser")
    return XTermParser


def _probe_driver_output() -> None:
    from textual.drivers.linux_driver import LinuxDriver

    _reads(LinuxDriver.__init__, "_file")


def probe() -> None:
    """Look up Textual's private names; turn off each feature whose names are missing.

    A missing line renderer is logged here; the driver's parts are logged when the POSIX driver
    asks for them (Windows has no such driver, and nothing to say).
    """
    global _line_drawing, line_drawing_missing, _parser_class, paste_filter_missing, driver_output_missing
    try:
        _line_drawing, line_drawing_missing = _probe_line_drawing(), None
    except (ImportError, AttributeError, TypeError, ValueError) as error:
        _line_drawing, line_drawing_missing = None, f"{type(error).__name__}: {error}"
        log.warning("Answers are drawn by Textual's Markdown widgets (slower): %s", line_drawing_missing)
    try:
        _parser_class, paste_filter_missing = _probe_parser(), None
    except (ImportError, AttributeError, TypeError, ValueError) as error:
        _parser_class, paste_filter_missing = None, f"{type(error).__name__}: {error}"
    try:
        _probe_driver_output()
        driver_output_missing = None
    except (ImportError, AttributeError, TypeError, ValueError) as error:
        driver_output_missing = f"{type(error).__name__}: {error}"


def _drawing() -> _LineDrawing:
    if _line_drawing is None:
        raise PrivateApiMissing(f"answers cannot be drawn as lines: {line_drawing_missing}")
    return _line_drawing


# -- answers drawn as lines ------------------------------------------------------------------


def draw_box(widget: Widget, content: list[Strip], width: int, height: int) -> list[Strip]:
    """``content`` inside ``widget``'s padding, border and background, as Textual draws the widget."""
    styles = widget.styles
    base, background = widget.background_colors
    gutter = styles.gutter
    app = widget.app
    # a container's own content is Textual's ``Blank`` of its background colour
    blank = Strip.blank(max(0, width - gutter.width), RichStyle.from_color(bgcolor=background.rich_color))
    drawing = _drawing()
    # as Textual's own ``StylesCache.render_widget`` calls it in the Textual installed
    ansi = {"native_ansi": app.native_ansi_color} if drawing.native_ansi else {}
    lines: list[Strip] = drawing.styles_cache().render(
        styles,
        Size(width, height),
        base,
        background,
        lambda y: content[y] if y < len(content) else blank,
        [],
        None,
        None,
        content_size=Size(max(0, width - gutter.width), max(0, height - gutter.height)),
        padding=styles.padding,
        opacity=widget.opacity,
        ansi_theme=app.ansi_theme,
        **ansi,
    )
    return lines


def resolve_spans(
    sizes: list[Scalar], total: int, gutter: int, size: Size, viewport: Size, minimums: list[int]
) -> list[tuple[int, int]]:
    """Offsets and widths of grid columns, as Textual's grid layout resolves them (expanding and shrinking)."""
    return _drawing().resolve(sizes, total, gutter, size, viewport, expand=True, shrink=True, minimums=minimums)


def inline_content(block: Widget, token: Token) -> Content:
    """Textual's conversion of an inline token to content (it reads nothing of the block it is called on)."""
    _drawing()
    content: Content = MarkdownBlock._token_to_content(block, token)  # type: ignore[arg-type]
    return content


def block_widgets(markdown: Markdown, tokens: Iterable[Token]) -> list[MarkdownBlock]:
    """The block widgets Textual's ``Markdown`` makes of ``tokens``."""
    _drawing()
    return list(markdown._parse_markdown(tokens))


async def update_block(block: MarkdownBlock, new: MarkdownBlock) -> None:
    """Update ``block`` in place from ``new`` (raises ``IndexError`` where Textual cannot)."""
    _drawing()
    await block._update_from_block(new)


def set_source(markdown: Markdown, source: str) -> None:
    """Set what ``markdown.source`` returns, without parsing it."""
    _drawing()
    markdown._markdown = source


def bullet_widget() -> Widget:
    """A list bullet, as Textual's lists make them."""
    return _drawing().bullet()


def table_grid_widget() -> Widget:
    """An empty table grid, as Textual's tables make them."""
    return _drawing().table_grid([], [])


def table_cell_widget(classes: str) -> Widget:
    """An empty table cell, as Textual's tables make them."""
    return _drawing().table_cell("", classes=classes)


# -- caches of removed widgets -----------------------------------------------------------------


def release_styles_cache() -> None:
    """Drop Textual's cache of widgets' rendered lines (it keeps removed widgets alive); nothing if it is gone."""
    try:
        from textual._styles_cache import StylesCache
    except ImportError:
        return
    cache_clear = getattr(getattr(StylesCache, "get_inner_outer", None), "cache_clear", None)
    if cache_clear is not None:
        cache_clear()


# -- the POSIX driver ---------------------------------------------------------------------------


class InputParser(Protocol):
    """What the driver's input loop uses of its parser."""

    def feed(self, data: str) -> Iterable[Message]:
        """Parse ``data`` (``""``: the input ended)."""
        ...

    def tick(self) -> Iterable[Message]:
        """Messages due by now (an escape key on its own, once no sequence follows)."""
        ...


def input_parser(debug: bool = False) -> InputParser:
    """Textual's own input parser (``textual._xterm_parser.XTermParser``)."""
    if _parser_class is None:
        raise PrivateApiMissing(f"Textual's input parser is not reachable: {paste_filter_missing}")
    parser: InputParser = _parser_class(debug)
    return parser


def use_input_parser(parser: Callable[[bool], InputParser]) -> bool:
    """Make the POSIX driver's input loop parse with ``parser(debug)`` (False: not possible in this Textual)."""
    if _parser_class is None:
        log.warning("The paste filter is skipped (pastes holding escapes may arrive as keys): %s", paste_filter_missing)
        return False
    from textual.drivers import linux_driver

    linux_driver.XTermParser = parser  # type: ignore[attr-defined,assignment]
    return True


def guard_driver_output(driver: LinuxDriver, wrap: Callable[[Any], Any]) -> bool:
    """Replace the driver's output file with ``wrap(file)`` (False: not possible in this Textual)."""
    if driver_output_missing is not None:
        log.warning("Output to a terminal that went away is not guarded: %s", driver_output_missing)
        return False
    file = getattr(driver, "_file", None)
    if file is None:  # no terminal to write to
        return False
    driver._file = wrap(file)
    return True


# -- the TUI benchmark ----------------------------------------------------------------------------


def frame_timed(app_class: type[AppType], frames: list[float], clock: Callable[[], float]) -> type[AppType]:
    """``app_class`` noting ``clock()`` in ``frames`` as it puts each frame on the screen (unchanged if it cannot)."""
    if not callable(getattr(App, "_display", None)):
        log.warning("Frame times are not recorded: App._display is missing")
        return app_class

    class FrameTimed(app_class):  # type: ignore[valid-type,misc]
        """The app, noting when it puts each frame on the screen."""

        def _display(self, screen: Any, renderable: Any) -> None:
            if renderable is not None:
                frames.append(clock())
            super()._display(screen, renderable)

    return FrameTimed


probe()
