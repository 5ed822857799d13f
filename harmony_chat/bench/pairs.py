"""Ratios of runs measured side by side: the machine's speed drifts between pairs more than within one."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def paired_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of the pairs' ratios, pair ``i`` being ``numerators[i] / denominators[i]`` (0 if that is 0)."""
    ratios = [top / bottom if bottom else 0.0 for top, bottom in zip(numerators, denominators, strict=True)]
    return statistics.median(ratios) if ratios else 0.0
