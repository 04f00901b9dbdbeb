"""What the tutorial's Go program does with ``/?value=...``, ported so the answers match.

The Go program reads the gauge value with ``r.URL.Query().Get("value")`` and converts it
with ``strconv.ParseFloat(value, 64)``; any error answers 400. Python's own tools disagree
with both on the edges (``float()`` accepts ``" 1"`` and ``"1_0"`` in places Go refuses,
and rejects ``"0x1p4"`` which Go accepts; ``parse_qs`` keeps pairs with bad ``%``
escapes and splits nothing on ``;`` where Go drops the pair), so this module ports the
two Go functions. Ported from Go 1.19 (Debian's golang-1.19, the version the reference
build uses):

- :func:`parse_go_float` follows ``src/strconv/atof.go`` (``ParseFloat``, ``atof64``,
  ``special``, ``readFloat``, ``atofHex``'s range check) and ``src/strconv/atoi.go``
  (``underscoreOK``). Grammar is checked by the port; the value itself comes from
  Python's correctly rounded ``float()``/``float.fromhex``, which agree with Go's
  correctly rounded conversion.
- :func:`go_query_value` follows ``src/net/url/url.go`` (``parseQuery``, ``unescape`` in
  query-component mode, ``Values.Get``).

Pure: no I/O, no clock. The server calls these on every ``/?value=`` request, so the
common case (a plain decimal) takes a fast path checked against the port by the tests.
"""

from __future__ import annotations

import math
import re
from urllib.parse import unquote_to_bytes

__all__ = ["go_query_value", "parse_go_float"]

_PLAIN_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_HEX_LETTERS = frozenset("abcdefABCDEF")
_QUERY_SPECIALS = re.compile(rb"[&;%+]")


def parse_go_float(text: str) -> float:
    """The float64 Go's ``strconv.ParseFloat(text, 64)`` returns, or ``ValueError``.

    Accepted, as in Go: decimals with an optional exponent (``160``, ``-1.5``, ``.5``,
    ``1e3``, ``1E+3``), hexadecimal floats with a mandatory ``p`` exponent (``0x1p4``,
    ``0X1.8P1``), underscores between digits (``1_000``, ``0x_1p4``), and the specials
    ``inf``/``infinity`` (any case, optional sign) and ``nan`` (any case, no sign).
    Refused, as in Go: surrounding spaces, an empty string, hexadecimal without ``p``,
    misplaced underscores, and values out of float64 range (``1e400``; Go's range
    error), while values that underflow become 0 (``1e-400``) as in Go.
    """
    if _PLAIN_DECIMAL.fullmatch(text):
        value = float(text)
        if math.isinf(value):
            raise ValueError(f"value out of range: {text!r}")
        return value
    special = _special(text)
    if special is not None:
        value, consumed = special
        if consumed == len(text):
            return value
        raise ValueError(f"invalid syntax: {text!r}")
    consumed, is_hex, underscores = _read_float(text)
    if consumed != len(text):
        raise ValueError(f"invalid syntax: {text!r}")
    digits = text.replace("_", "") if underscores else text
    if is_hex:
        try:
            return float.fromhex(digits)
        except OverflowError:
            raise ValueError(f"value out of range: {text!r}") from None
    value = float(digits)
    if math.isinf(value):
        raise ValueError(f"value out of range: {text!r}")
    return value


def go_query_value(raw_query: bytes, key: bytes) -> bytes | None:
    """The first value of ``key`` in ``raw_query`` as Go's ``url.Values.Get`` sees it.

    ``None`` when the key is absent (Go returns ``""``; both make ``ParseFloat`` fail).
    Like Go's ``parseQuery``: pairs are split on ``&`` only, a pair holding ``;`` is
    dropped, a pair whose key or value has a bad ``%`` escape is dropped, ``+`` means a
    space, and a later pair of the same key counts only if every earlier one was dropped.
    """
    prefix = key + b"="
    if raw_query.startswith(prefix) and not _QUERY_SPECIALS.search(raw_query):
        return raw_query[len(prefix) :]
    for pair in raw_query.split(b"&"):
        if not pair or b";" in pair:
            continue
        raw_key, _, raw_value = pair.partition(b"=")
        if _query_unescape(raw_key) != key:
            continue
        value = _query_unescape(raw_value)
        if value is not None:
            return value
    return None


def _query_unescape(text: bytes) -> bytes | None:
    """Go's ``url.QueryUnescape``: ``None`` for a malformed ``%`` escape."""
    if b"%" not in text and b"+" not in text:
        return text
    if _BAD_ESCAPE.search(text):
        return None
    return unquote_to_bytes(text.replace(b"+", b" "))


def _ascii_prefix_len_ignore_case(text: str, prefix: str) -> int:
    """Go's ``commonPrefixLenIgnoreCase``: only ASCII letters fold."""
    count = 0
    for have, want in zip(text, prefix, strict=False):
        if have != want and not ("A" <= have <= "Z" and chr(ord(have) + 32) == want):
            break
        count += 1
    return count


def _special(text: str) -> tuple[float, int] | None:
    """Go's ``special``: a leading ``[+-]inf``, ``[+-]infinity`` or ``nan`` and its length."""
    if not text:
        return None
    first = text[0]
    if first in "+-iI":
        signed = first in "+-"
        rest = text[1:] if signed else text
        matched = _ascii_prefix_len_ignore_case(rest, "infinity")
        if 3 < matched < 8:
            matched = 3
        if matched in (3, 8):
            sign = -1.0 if first == "-" else 1.0
            return sign * math.inf, matched + (1 if signed else 0)
        return None
    if first in "nN" and _ascii_prefix_len_ignore_case(text, "nan") == 3:
        return math.nan, 3
    return None


def _read_float(text: str) -> tuple[int, bool, bool]:
    """Go's ``readFloat`` grammar: (characters consumed, hexadecimal, saw underscores).

    Raises ``ValueError`` where Go's ``readFloat`` reports ``ok == false``.
    """
    size = len(text)
    i = 0
    underscores = False
    if i < size and text[i] in "+-":
        i += 1
    is_hex = i + 2 < size and text[i] == "0" and text[i + 1] in "xX"
    if is_hex:
        i += 2
    saw_dot = saw_digits = False
    while i < size:
        char = text[i]
        if char == "_":
            underscores = True
        elif char == ".":
            if saw_dot:
                break
            saw_dot = True
        elif "0" <= char <= "9" or (is_hex and char in _HEX_LETTERS):
            saw_digits = True
        else:
            break
        i += 1
    if not saw_digits:
        raise ValueError(f"invalid syntax: {text!r}")
    exponent_marks = "pP" if is_hex else "eE"
    if i < size and text[i] in exponent_marks:
        i += 1
        if i < size and text[i] in "+-":
            i += 1
        if i >= size or not "0" <= text[i] <= "9":
            raise ValueError(f"invalid syntax: {text!r}")
        while i < size and ("0" <= text[i] <= "9" or text[i] == "_"):
            underscores = underscores or text[i] == "_"
            i += 1
    elif is_hex:
        raise ValueError(f"invalid syntax: {text!r}")
    if underscores and not _underscore_ok(text[:i]):
        raise ValueError(f"invalid syntax: {text!r}")
    return i, is_hex, underscores


def _underscore_ok(text: str) -> bool:
    """Go's ``underscoreOK``: every ``_`` sits between digits (a base prefix counts as one)."""
    if text[:1] in ("+", "-"):
        text = text[1:]
    saw = "^"
    i = 0
    is_hex = False
    if len(text) >= 2 and text[0] == "0" and text[1] in "bBoOxX":
        i = 2
        saw = "0"
        is_hex = text[1] in "xX"
    while i < len(text):
        char = text[i]
        if "0" <= char <= "9" or (is_hex and char in _HEX_LETTERS):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
        i += 1
    return saw != "_"
