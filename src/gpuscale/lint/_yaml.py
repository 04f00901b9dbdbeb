"""Small YAML snippets for the fixes lint suggests.

Fix snippets are nested mappings rendered in block style with two-space indents, the way
Kubernetes manifests are written. This tiny emitter is enough for them and much faster
than a full YAML dumper (lint renders one per finding); :func:`scalar` quotes a value only
when YAML would otherwise read it as something else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["scalar", "snippet"]

_PLAIN_FORBIDDEN_START = set("-?:,[]{}#&*!|>'\"%@` ")
_RESERVED = {"", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n"}


def scalar(value: Any) -> str:
    """``value`` as a YAML scalar: numbers and booleans plain, strings quoted when needed."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if value is None:
        return "null"
    text = str(value)
    if _needs_quotes(text):
        return json.dumps(text, ensure_ascii=False)
    return text


def _needs_quotes(text: str) -> bool:
    if text.lower() in _RESERVED or text[0] in _PLAIN_FORBIDDEN_START or text != text.strip():
        return True
    if ": " in text or " #" in text or text.endswith(":") or "\n" in text:
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def snippet(value: Mapping[str, Any]) -> str:
    """``value`` as block-style YAML (no trailing newline)."""
    return "\n".join(_lines(value, 0))


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if _is_block(item):
                out.append(f"{pad}{scalar(key)}:")
                out.extend(_lines(item, indent + 2))
            else:
                out.append(f"{pad}{scalar(key)}: {_inline(item)}")
        return out
    for item in value:
        if isinstance(item, Mapping) and item:
            first, *rest = _lines(item, indent + 2)
            out.append(f"{pad}- {first.lstrip()}")
            out.extend(rest)
        elif _is_block(item):
            out.append(f"{pad}-")
            out.extend(_lines(item, indent + 2))
        else:
            out.append(f"{pad}- {_inline(item)}")
    return out


def _is_block(value: Any) -> bool:
    return isinstance(value, Mapping | list | tuple) and bool(value)


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[]"
    return scalar(value)
