"""Read what a widget puts on the screen: its characters, and any actions its segments carry."""

from __future__ import annotations

from textual.geometry import Region
from textual.widget import Widget


def shown(widget: Widget) -> str:
    """The characters ``widget`` draws inside its border (not its children), lines joined, padding removed."""
    lines = widget.render_lines(Region(0, 0, *widget.region.size).shrink(widget.styles.gutter))
    return "\n".join("".join(segment.text for segment in strip).strip() for strip in lines).strip("\n")


def shown_all(widget: Widget) -> str:
    """The characters ``widget`` and every displayed widget inside it draw, in document order."""
    widgets = [widget, *(child for child in widget.query("*") if child.display)]
    return "\n".join(shown(part) for part in widgets)


def squeezed(text: str) -> str:
    """``text`` without whitespace, to compare characters across wrapping and padding."""
    return "".join(text.split())


def actions(widget: Widget) -> list[str]:
    """Every ``@click`` (or other ``@`` event) action in the segments ``widget`` draws."""
    found: list[str] = []
    for strip in widget.render_lines(Region(0, 0, *widget.region.size)):
        for segment in strip:
            meta = segment.style.meta if segment.style is not None else {}
            found += [str(value) for key, value in meta.items() if key.startswith("@")]
    return found
