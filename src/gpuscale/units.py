"""Durations and quantities as users write them, parsed once at the edge.

Durations follow the Go/Kubernetes/Prometheus spelling users already know: ``30s``,
``5m``, ``1h30m``, ``250ms``, ``2d``; a bare number means seconds. Quantities follow the
Kubernetes resource quantity grammar (``500m``, ``1``, ``2Gi``, ``1.5``). Both return
plain floats in base units (seconds; cores, bytes or counts), which is what the models
use internally.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

__all__ = ["format_duration", "parse_duration", "parse_quantity", "quantity_or_none"]

_DURATION_UNITS = {
    "ms": 0.001,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
    "w": 604800.0,
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w)")

_QUANTITY_SUFFIX = {
    "": Decimal(1),
    "m": Decimal("0.001"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$"
)


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


def parse_quantity(value: str | float | int) -> float:
    """A Kubernetes resource quantity (``"500m"``, ``"2Gi"``, ``1``) as a float in base units."""
    if isinstance(value, bool):
        raise ValueError(f"expected a quantity such as 1, 500m or 2Gi, got {value!r}")
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(value.strip())
    if not match:
        raise ValueError(f"expected a quantity such as 1, 500m or 2Gi, got {value!r}")
    try:
        number = Decimal(match.group(1))
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only valid decimals
        raise ValueError(f"expected a quantity such as 1, 500m or 2Gi, got {value!r}") from exc
    return float(number * _QUANTITY_SUFFIX[match.group(2) or ""])


def quantity_or_none(value: object) -> float | None:
    """:func:`parse_quantity` of a field read from a live object (its text form), or None
    when the field is absent or holds no quantity: a status to show, not input to refuse."""
    if value is None:
        return None
    try:
        return parse_quantity(str(value))
    except ValueError:
        return None
