"""docs/commands/lint.md shows real outputs: each block marked ``<!-- output: CMD -->`` is
what CMD prints now (run from the repository root, 80 columns, as when piped).

Regenerate the blocks after changing a rule's wording or a fixture:
``.venv/bin/python -m tests.unit.lint.test_docs``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from gpuscale.cli.main import main

ROOT = Path(__file__).parents[3]
DOC = ROOT / "docs" / "commands" / "lint.md"
BLOCK = re.compile(
    r"<!-- (?P<what>output|sarif-excerpt): (?P<command>[^>]*?) -->\n"
    r"```(?P<lang>\w*)\n(?P<body>.*?)```\n",
    re.S,
)


def _run(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    argv = shlex.split(command)
    assert argv[0] == "gpuscale"
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("COLUMNS", raising=False)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        main(argv[1:])
    return buffer.getvalue()


def _sarif_excerpt(log_text: str) -> str:
    """The first result of the log and the catalogue entry of its rule."""
    [run] = json.loads(log_text)["runs"]
    result = run["results"][0]
    rule = run["tool"]["driver"]["rules"][result["ruleIndex"]]
    return json.dumps({"rule": rule, "result": result}, indent=2, ensure_ascii=False) + "\n"


def _expected(what: str, command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    out = _run(command, monkeypatch)
    return _sarif_excerpt(out) if what == "sarif-excerpt" else out


def _blocks() -> list[re.Match[str]]:
    return list(BLOCK.finditer(DOC.read_text()))


def test_the_doc_has_output_blocks() -> None:
    commands = [m["command"] for m in _blocks()]
    assert "gpuscale lint examples/tutorial/ --profile examples/tutorial/gpuscale.yaml" in commands
    assert len(commands) >= 5


@pytest.mark.parametrize("block", _blocks(), ids=lambda m: m["command"])
def test_output_blocks_are_current(block: re.Match[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert block["body"] == _expected(block["what"], block["command"], monkeypatch), (
        "regenerate: .venv/bin/python -m tests.unit.lint.test_docs"
    )


def regenerate() -> None:
    """Rewrite every output block of the doc with the command's current output."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        text = DOC.read_text()

        def fill(match: re.Match[str]) -> str:
            body = _expected(match["what"], match["command"], monkeypatch)
            head = f"<!-- {match['what']}: {match['command']} -->\n```{match['lang']}\n"
            return f"{head}{body}```\n"

        DOC.write_text(BLOCK.sub(fill, text))


if __name__ == "__main__":
    regenerate()
    sys.stdout.write(f"regenerated {DOC.relative_to(ROOT)}\n")
