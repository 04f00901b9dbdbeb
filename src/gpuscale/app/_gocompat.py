"""What the tutorial's Go program does with ``/?value=...``, ported so the answers match.

The Go program reads the gauge value with ``r.URL.Query().Get("value")`` and converts it
with ``strconv.ParseFloat(value, 64)``; any error answers 400. Python's own tools disagree
with both on the edges (``float()`` accepts ``" 1"`` and ``"1_0"`` in places Go refuses,
and rejects ``"0x1p4"`` which Go accepts; ``parse_qs`` keeps pairs with bad ``%``
escapes and splits nothing on ``;`` where Go drops the pair), so this module ports the
two Go functions, from Go 1.19 (Debian's golang-1.19, the version the reference build
uses):

- :func:`parse_go_float` is ``gpuscale._gomath.parse_go_float`` (``src/strconv/atof.go``
  and ``atoi.go``'s ``underscoreOK``), which the other models share; its errors are
  ``ValueError``s. Plain decimals take a fast path there.
- :func:`go_query_value` follows ``src/net/url/url.go`` (``parseQuery``, ``unescape`` in
  query-component mode, ``Values.Get``).

Pure: no I/O, no clock. The server calls these on every ``/?value=`` request.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_to_bytes

from gpuscale._gomath import parse_go_float

__all__ = ["go_query_value", "parse_go_float"]

_BAD_ESCAPE = re.compile(rb"%(?![0-9A-Fa-f]{2})")
_QUERY_SPECIALS = re.compile(rb"[&;%+]")


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
