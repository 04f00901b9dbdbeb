"""Label sets as the engine holds them: a tuple of ``(name, value)`` pairs sorted by name.

Tuples are hashable (series lookup, grouping, vector matching) and compare the way
Prometheus' ``labels.Compare`` does (name, then value, pair by pair, then length), so sorting
series by their tuple gives Prometheus' series order. An empty value means "no such label",
as in Prometheus, so it is never stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = [
    "METRIC_NAME",
    "Labels",
    "drop_name",
    "get_label",
    "is_valid_label_name",
    "labels_from_mapping",
    "with_label",
]

METRIC_NAME = "__name__"

Labels = tuple[tuple[str, str], ...]
"""A label set: ``(name, value)`` pairs sorted by name, no empty values."""

_LEGACY_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def labels_from_mapping(mapping: Mapping[str, str] | Iterable[tuple[str, str]]) -> Labels:
    """A label set from a mapping or pairs; empty values are dropped, as Prometheus does."""
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    return tuple(sorted((str(k), str(v)) for k, v in items if v != ""))


def get_label(labels: Labels, name: str) -> str:
    """The value of ``name``, or ``""`` when absent (Prometheus' ``Labels.Get``)."""
    for k, v in labels:
        if k == name:
            return v
    return ""


def drop_name(labels: Labels) -> Labels:
    """The label set without ``__name__``."""
    if labels and any(k == METRIC_NAME for k, _ in labels):
        return tuple(p for p in labels if p[0] != METRIC_NAME)
    return labels


def with_label(labels: Labels, name: str, value: str) -> Labels:
    """The label set with ``name`` set to ``value`` (removed when ``value`` is empty)."""
    rest = [p for p in labels if p[0] != name]
    if value != "":
        rest.append((name, value))
        rest.sort()
    return tuple(rest)


def is_valid_label_name(name: str, *, utf8: bool) -> bool:
    """Prometheus' ``LabelName.IsValid``: legacy names in 2.x, any non-empty UTF-8 in 3.x."""
    if utf8:
        return name != ""
    return _LEGACY_LABEL_NAME.fullmatch(name) is not None
