"""A small Dockerfile reader for the tests: instructions by stage, continuations joined.

It understands what our Dockerfile uses (comments, ``\\`` continuations, ``FROM ... AS``,
JSON exec form, ``ENV k=v ...``); it is not a general parser.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parents[3] / "Dockerfile"


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [args for key, args in self.instructions if key == keyword]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for args in self.all("ENV"):
            for pair in shlex.split(args):
                key, _, value = pair.partition("=")
                values[key] = value
        return values


def instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) for each instruction, continuation lines joined."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        keyword, _, args = line.partition(" ")
        result.append((keyword.upper(), args.strip()))
    return result


def stages(text: str) -> list[Stage]:
    """The build stages in order; ``ARG`` defaults before the first ``FROM`` are expanded."""
    args: dict[str, str] = {}
    found: list[Stage] = []
    for keyword, rest in instructions(text):
        if keyword == "ARG" and not found:
            name, _, default = rest.partition("=")
            args[name] = default
        elif keyword == "FROM":
            words = rest.split()
            base = words[0]
            for name, value in args.items():
                base = base.replace("${" + name + "}", value)
            found.append(Stage(base, words[2] if len(words) >= 3 else None))
        elif found:
            found[-1].instructions.append((keyword, rest))
    return found


def exec_form(args: str) -> list[str]:
    value = json.loads(args)
    assert isinstance(value, list)
    assert all(isinstance(word, str) for word in value)
    return value
