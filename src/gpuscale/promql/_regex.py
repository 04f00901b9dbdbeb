"""Go RE2 regular expressions, as PromQL matchers and ``label_replace`` use them, on ``re``.

Prometheus anchors every matcher regex (``^(?:re)$``; ``^(?s:re)$`` from 3.0, where ``.``
also matches a newline) and runs it with Go's RE2 engine (model/labels/regexp.go,
promql/functions.go ``funcLabelReplace``). Python's ``re`` reads most RE2 syntax the same
way; this module translates the differences that would otherwise change a match silently
and rejects what RE2 rejects but Python would accept:

- ``$`` is end of text in RE2 (Python also matches before a final newline): becomes ``\\Z``
  unless the ``m`` flag is used; ``\\z`` becomes ``\\Z``; ``\\Q...\\E`` is quoted.
- ``\\d \\w \\s \\b`` are ASCII-only in RE2 and become explicit ASCII classes (``(?i)``
  still folds Unicode case, as RE2 does); RE2's ``\\s`` excludes ``\\v``.
- POSIX classes ``[[:alpha:]]`` and friends are expanded; ``x{,n}`` is a literal in RE2.
- Lookarounds, backreferences, atomic groups and possessive quantifiers are errors in RE2
  and raise ``ValueError`` here; so do Unicode classes (``\\pL``), which ``re`` lacks.
"""

from __future__ import annotations

import re

__all__ = ["compile_go_regex", "go_expand"]

_POSIX = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_RE2_SPACE = "\\t\\n\\f\\r "
_WORD = "0-9A-Za-z_"
_ASCII_CLASSES = {
    "d": ("0-9", False),
    "D": ("0-9", True),
    "w": (_WORD, False),
    "W": (_WORD, True),
    "s": (_RE2_SPACE, False),
    "S": (_RE2_SPACE, True),
}
_WORD_BOUNDARY = f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"
_NOT_WORD_BOUNDARY = f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))"
_QUANTIFIER_BRACES = re.compile(r"\{\d+(?:,\d*)?\}")
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z-]+)\)")


def _translate(pattern: str) -> str:
    multiline = re.search(r"\(\?[a-zA-Z]*m", pattern) is not None
    out: list[str] = []
    i = 0
    n = len(pattern)
    in_class = False
    last_was_quantifier = False
    # Closing parentheses owed per open group: RE2 lets ``(?i)`` switch flags for the rest
    # of the enclosing group; Python only scopes flags as ``(?i:...)``, closed at group end.
    owed = [0]
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("trailing backslash")
            e = pattern[i + 1]
            if e == "Q":
                end = pattern.find("\\E", i + 2)
                literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
                out.append(re.escape(literal))
                i = n if end < 0 else end + 2
                last_was_quantifier = False
                continue
            if e in "123456789":
                raise ValueError(f"backreference \\{e} is not supported by RE2")
            if e in "pP":
                raise ValueError(f"Unicode class \\{e} is not supported here")
            if e == "z":
                out.append("\\Z")
            elif e in _ASCII_CLASSES:
                inner, negated = _ASCII_CLASSES[e]
                if in_class and negated:
                    raise ValueError(f"\\{e} inside a character class is not supported here")
                out.append(inner if in_class else f"[{'^' if negated else ''}{inner}]")
            elif e in "bB":
                if in_class:
                    raise ValueError(f"\\{e} inside a character class is not supported here")
                out.append(_WORD_BOUNDARY if e == "b" else _NOT_WORD_BOUNDARY)
            else:
                out.append(pattern[i : i + 2])
            i += 2
            last_was_quantifier = False
            continue
        if in_class:
            if c == "[" and pattern.startswith("[:", i):
                end = pattern.find(":]", i + 2)
                if end > 0:
                    name = pattern[i + 2 : end]
                    negate = name.startswith("^")
                    name = name.lstrip("^")
                    if name not in _POSIX:
                        raise ValueError(f"unknown POSIX class [:{name}:]")
                    if negate:
                        raise ValueError("negated POSIX classes are not supported here")
                    out.append(_POSIX[name])
                    i = end + 2
                    continue
            if c == "[":
                out.append("\\[")
                i += 1
                continue
            if c == "]":
                in_class = False
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < n and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < n and pattern[i] == "]":
                out.append("\\]")
                i += 1
            last_was_quantifier = False
            continue
        if c == "(" and pattern.startswith("(?", i):
            rest = pattern[i + 2 : i + 4]
            if rest[:1] in ("=", "!", ">", "#") or rest in ("<=", "<!"):
                raise ValueError(f"'(?{rest[:2]}' is not supported by RE2")
            flags = _INLINE_FLAGS.match(pattern, i)
            if flags is not None:
                if set(flags.group(1)) - set("ims-"):
                    raise ValueError(f"flags (?{flags.group(1)}) are not supported here")
                out.append(f"(?{flags.group(1)}:")
                owed[-1] += 1
                i = flags.end()
                last_was_quantifier = False
                continue
        if c == "(":
            owed.append(0)
        elif c == ")":
            if len(owed) > 1:
                out.append(")" * owed.pop())
            out.append(c)
            i += 1
            last_was_quantifier = False
            continue
        if c in "*+?":
            if last_was_quantifier and c == "+":
                raise ValueError("possessive quantifiers are not supported by RE2")
            if last_was_quantifier and c != "?":
                raise ValueError("invalid nested repetition operator")
            out.append(c)
            i += 1
            last_was_quantifier = c != "?" or not last_was_quantifier
            continue
        if c == "{":
            m = _QUANTIFIER_BRACES.match(pattern, i)
            if m is None:
                out.append("\\{")
                i += 1
                last_was_quantifier = False
                continue
            out.append(m.group(0))
            i = m.end()
            last_was_quantifier = True
            continue
        if c == "$" and not multiline:
            out.append("\\Z")
            i += 1
            last_was_quantifier = False
            continue
        out.append(c)
        i += 1
        last_was_quantifier = False
    if in_class:
        raise ValueError("missing closing ]")
    out.append(")" * owed[0])
    return "".join(out)


def compile_go_regex(pattern: str, *, dotall: bool) -> re.Pattern[str]:
    """Compile an RE2 pattern as Prometheus anchors it; ``dotall`` for Prometheus 3.x.

    Use ``fullmatch`` on the result. Raises ``ValueError`` for what cannot be honoured.
    """
    translated = _translate(pattern)
    flags = re.DOTALL if dotall else 0
    try:
        return re.compile(f"(?:{translated})", flags)
    except re.error as exc:
        raise ValueError(str(exc)) from exc


def _is_name_char(ch: str) -> bool:
    return ch == "_" or ch.isalpha() or ch.isdecimal()


def go_expand(template: str, match: re.Match[str]) -> str:
    """``regexp.Regexp.ExpandString``: ``$1``, ``${1}``, ``$name``, ``${name}``, ``$$``.

    As in Go, ``$1x`` names the group ``1x`` (which does not exist, so it expands to
    nothing), and a malformed ``$`` is kept literally.
    """
    out: list[str] = []
    i = 0
    n = len(template)
    groups = match.re.groupindex
    while i < n:
        c = template[i]
        if c != "$":
            j = template.find("$", i)
            j = n if j < 0 else j
            out.append(template[i:j])
            i = j
            continue
        i += 1
        if i < n and template[i] == "$":
            out.append("$")
            i += 1
            continue
        brace = i < n and template[i] == "{"
        j = i + 1 if brace else i
        k = j
        while k < n and _is_name_char(template[k]):
            k += 1
        if k == j or (brace and (k >= n or template[k] != "}")):
            out.append("$")
            continue
        name = template[j:k]
        i = k + 1 if brace else k
        if name.isascii() and name.isdigit() and not (name[0] == "0" and len(name) > 1):
            num = int(name) if len(name) < 9 else -1
            if 0 <= num <= match.re.groups:
                value = match.group(num)
                if value is not None:
                    out.append(value)
        elif name in groups:
            value = match.group(name)
            if value is not None:
                out.append(value)
    return "".join(out)
