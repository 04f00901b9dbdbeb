"""Every ``gpuscale ...`` command the documentation shows is one the parser accepts.

A new user copies commands from the pages; a renamed or removed option must fail here,
not on their machine. Scanned: the fenced code blocks of ``docs/**/*.md``,
``examples/*/README.md`` and ``README.md``:

- in ``sh``/``bash``/``console`` blocks, each ``gpuscale ...`` command (also after
  ``$ ``, ``&&``, ``|``, ``;``), and in other blocks each ``$ gpuscale ...`` line, is
  parsed by Click (``make_context``, nothing runs): unknown options, missing or badly
  typed values and extra arguments fail;
- a synopsis block (an unlabeled block starting with ``gpuscale <command>``, with
  ``[--option VALUE]`` placeholders) is checked option by option: each one it names must
  be an option of that command.

And each ``docs/commands/<command>.md`` page names every option ``--help`` lists (by one
of its names), so the pages cannot fall behind the parser either. Whether the outputs
shown are current is checked page by page elsewhere (``tests/unit/lint/test_docs.py``,
``tests/integration/live/test_command_docs.py``, ``test_doks_docs.py``).
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from gpuscale.cli.main import app

# Click's exceptions, wherever this Typer takes Click from (as gpuscale.cli.main does).
click_errors: Any = sys.modules[typer.BadParameter.__module__]

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(
    [
        *(ROOT / "docs").rglob("*.md"),
        *(ROOT / "examples").glob("*/README.md"),
        ROOT / "README.md",
    ]
)
FENCE = re.compile(r"^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.S | re.M)
SHELL = {"sh", "bash", "console", "shell"}
OPERATORS = {"&&", "||", "|", ";", ">", ">>", "<", "2>", "&"}
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")


def _root() -> Any:
    return typer.main.get_command(app)


def _is_group(command: Any) -> bool:
    return hasattr(command, "get_command")


def _resolve(words: list[str]) -> tuple[Any, list[str]]:
    """The (sub)command ``gpuscale words...`` names and the words left for it."""
    command = _root()
    rest = list(words)
    while _is_group(command) and rest and not rest[0].startswith("-"):
        with typer.Context(command) as ctx:
            found = command.get_command(ctx, rest[0])
        if found is None:
            raise click_errors.UsageError(f"no command {rest[0]!r}")
        command, rest = found, rest[1:]
    return command, rest


def _option_names(command: Any) -> set[str]:
    names: set[str] = set()
    for param in command.params:
        if param.param_type_name == "option":
            names.update(param.opts, param.secondary_opts)
    return names


def _shell_commands(line: str) -> list[list[str]]:
    """The ``gpuscale`` commands of one shell line, without redirections and pipes."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    found: list[list[str]] = []
    current: list[str] = []
    skip_next = False
    for token in lexer:
        if skip_next:
            skip_next = False
        elif token in OPERATORS:
            found.append(current)
            current = []
            skip_next = token in {">", ">>", "<", "2>"}
        else:
            current.append(token)
    found.append(current)
    return [words[1:] for words in found if words[:1] == ["gpuscale"]]


def _documented() -> tuple[list[tuple[str, list[str]]], list[tuple[str, str]]]:
    """(where, argv) of every runnable command and (where, text) of every synopsis."""
    runnable: list[tuple[str, list[str]]] = []
    synopses: list[tuple[str, str]] = []
    commands = set(_root().commands)
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in FENCE.finditer(text):
            lang, body = block["lang"], block["body"]
            first = text.count("\n", 0, block.start()) + 2
            lines = body.replace("\\\n", " ").splitlines()
            where = f"{page.relative_to(ROOT)}:{first}"
            if lang in SHELL or any(line.startswith("$ gpuscale ") for line in lines):
                for line in lines:
                    shell = line.removeprefix("$ ")
                    if lang in SHELL or line.startswith("$ "):
                        runnable += [(where, argv) for argv in _shell_commands(shell)]
            elif not lang and lines:
                words = lines[0].split()
                if words[:1] == ["gpuscale"] and len(words) > 1 and words[1] in commands:
                    current = ""
                    for line in lines:
                        if line.startswith("gpuscale ") and current:
                            synopses.append((where, current))
                            current = ""
                        if line.startswith("gpuscale ") or current:
                            current += " " + line.strip()
                    synopses.append((where, current))
    return runnable, synopses


RUNNABLE, SYNOPSES = _documented()


def _ids(items: list[tuple[str, Any]]) -> list[str]:
    return [
        f"{where} {' '.join(x) if isinstance(x, list) else x.split('[')[0].strip()}"
        for where, x in items
    ]


def test_the_docs_show_commands() -> None:
    assert len(RUNNABLE) > 40, RUNNABLE
    assert len(SYNOPSES) > 15, SYNOPSES


@pytest.mark.parametrize(("where", "argv"), RUNNABLE, ids=_ids(RUNNABLE))
def test_a_documented_command_parses(where: str, argv: list[str]) -> None:
    try:
        command, rest = _resolve(argv)
        if "--help" in rest or "-h" in rest:
            return
        with command.make_context("gpuscale", list(rest), resilient_parsing=False):
            pass
    except click_errors.ClickException as exc:
        pytest.fail(f"{where}: gpuscale {shlex.join(argv)}: {exc.format_message()}")


@pytest.mark.parametrize(("where", "synopsis"), SYNOPSES, ids=_ids(SYNOPSES))
def test_a_synopsis_names_only_real_options(where: str, synopsis: str) -> None:
    words = synopsis.split()[1:]
    path = []
    for word in words:
        if word.startswith(("-", "[", "(")) or not word.islower() or "." in word:
            break
        path.append(word)
    command, _ = _resolve(path)
    unknown = sorted(set(OPTION.findall(synopsis)) - _option_names(command))
    assert not unknown, f"{where}: gpuscale {' '.join(path)} has no option {unknown}"


def _leaf_commands() -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    for name in sorted(_root().commands):
        command, _ = _resolve([name])
        if _is_group(command):
            found += [(f"{name} {sub}", _resolve([name, sub])[0]) for sub in command.commands]
        else:
            found.append((name, command))
    return found


LEAVES = _leaf_commands()


@pytest.mark.parametrize(("name", "command"), LEAVES, ids=[name for name, _ in LEAVES])
def test_the_command_page_names_every_option(name: str, command: Any) -> None:
    page = ROOT / "docs" / "commands" / f"{name.split(maxsplit=1)[0]}.md"
    text = page.read_text(encoding="utf-8")
    missing = sorted(
        param.opts[0]
        for param in command.params
        if param.param_type_name == "option"
        and "--help" not in param.opts
        and not any(
            re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text)
            for opt in (*param.opts, *param.secondary_opts)
        )
    )
    assert not missing, f"docs/commands/{page.name} does not mention {missing} of gpuscale {name}"


@pytest.mark.parametrize(
    "argv",
    [
        ["install", "--kube-context", "x"],
        ["init", "DIR", "--replicas", "2"],
        ["render", "a.yaml", "--out", "x"],
    ],
)
def test_the_check_refuses_what_the_parser_refuses(argv: list[str]) -> None:
    command, rest = _resolve(argv)
    with pytest.raises(click_errors.NoSuchOption):
        command.make_context("gpuscale", rest, resilient_parsing=False)
