"""Durations as users write them, parsed once at the edge, as seconds (a float).

The spelling is the one users know from Go's ``time.ParseDuration`` (which Kubernetes'
``metav1.Duration`` fields such as a ServiceMonitor's ``interval`` take) and Prometheus'
``model.ParseDuration`` (``2d``, ``1w``): ``30s``, ``5m``, ``1h30m``, ``250ms``; a bare
number means seconds. Unlike Go, a negative duration is refused: every duration gpuscale
reads is a delay, a period or a window.
"""

from __future__ import annotations

import math
import re

__all__ = ["format_duration", "parse_duration"]

_DURATION_UNITS = {
    "ms": 0.001,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")


def parse_duration(value: str | float | int) -> float:
    """Seconds in ``value``: ``"90s"``, ``"1m30s"``, ``"5m"``, ``"250ms"`` or a number of seconds.

    Raises ``ValueError`` with the accepted forms for anything else, including negatives.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a duration such as 30s or 5m, got {value!r}")
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        text = value.strip()
        try:
            seconds = float(text)
        except ValueError:
            seconds = _parse_duration_text(text)
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"expected a non-negative duration such as 30s or 5m, got {value!r}")
    return seconds


def _parse_duration_text(text: str) -> float:
    position, total = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != position:
            break
        total += float(match.group(1)) * _DURATION_UNITS[match.group(2)]
        position = match.end()
    if position == 0 or position != len(text):
        raise ValueError(f"expected a duration such as 30s, 5m, 1h30m or 250ms, got {text!r}")
    return total


def format_duration(seconds: float) -> str:
    """A short human form of ``seconds``: ``45s``, ``5m``, ``1h2m3s``, ``0.25s``."""
    if seconds < 0:
        return "-" + format_duration(-seconds)
    if seconds != int(seconds) and seconds < 60:
        return f"{seconds:g}s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
        f"{secs}s" if secs else "",
    ]
    return "".join(parts) or "0s"
