"""The root command in-process: ``--version`` and an unknown command (the entry point in a
new interpreter is tested in tests/integration/cli/test_entry_point.py)."""

from __future__ import annotations

import pytest

from gpuscale import __version__
from gpuscale.cli.main import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"gpuscale {__version__}"


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "where", "words"),
    [
        (["init", "--bogus"], "gpuscale init", "No such option: --bogus"),
        (["render"], "gpuscale render", "Missing argument"),
        (["profile", "check"], "gpuscale profile check", "Missing argument"),
        (["lint", "-o", "xml", "x.yaml"], "gpuscale lint", "'xml' is not one of 'text'"),
        (["simulate", "x.yaml", "--seed", "abc"], "gpuscale simulate", "valid integer"),
        (["demo", "extra"], "gpuscale demo", "unexpected extra argument(s) (extra)"),
        (["nosuch"], "gpuscale", "No such command 'nosuch'"),
        (["init", "--gpu"], "gpuscale init", "Option '--gpu' requires an argument"),
        (["profile", "show", "-o"], "gpuscale profile show", "requires an argument"),
    ],
    ids=[
        "unknown-option",
        "missing-argument",
        "missing-sub-argument",
        "bad-choice",
        "bad-integer",
        "extra-argument",
        "unknown-command",
        "option-without-value",
        "sub-command-option-without-value",
    ],
)
def test_usage_errors_are_one_line_with_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], where: str, words: str
) -> None:
    """Typer draws Click's usage errors as a boxed panel under the usage line; gpuscale
    prints them as its other errors: one line on stderr, naming the command's --help."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith(f"gpuscale: error: {where}: "), line
    assert words in line
    assert line.endswith(f"(fix: see {where} --help)")
    assert "Value error" not in line
    assert "╭" not in line


def test_help_and_no_arguments_keep_their_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--help"]) == 0
    assert "Usage: gpuscale render" in capsys.readouterr().out
    assert main([]) == 2  # no_args_is_help: the help, exit 2, as Click does
    assert "Usage: gpuscale" in capsys.readouterr().out
    assert main(["profile"]) == 2
    assert "check" in capsys.readouterr().out
