"""The demo's made-up weather: fixed for the cities the pocket model names, derived from the name for any other."""

from __future__ import annotations

KNOWN = {
    "paris": (18, "sunny"),
    "tokyo": (24, "cloudy"),
    "oslo": (3, "snowing"),
}
CONDITIONS = ("sunny", "cloudy", "raining", "windy", "snowing", "foggy")


def weather(location: str) -> dict[str, object]:
    """The made-up weather in ``location`` (the same every time)."""
    known = KNOWN.get(location.strip().lower())
    if known is not None:
        temperature, condition = known
    else:
        seed = sum(location.strip().lower().encode("utf-8"))
        temperature, condition = seed % 35 - 5, CONDITIONS[seed % len(CONDITIONS)]
    return {"temperature": temperature, "condition": condition}
