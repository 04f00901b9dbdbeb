"""One bad input, run through the real command line in process, and what must hold for it.

Issue 11's contract for every bad input a user can give any command: a documented
non-zero exit code, exactly one ``gpuscale: error:`` line on stderr (warnings and
progress lines aside) that names where the problem is (file:line, key or flag) and the
fix, no traceback, and no file created, changed or half-written.

Each ``cases_<area>.py`` module beside this one holds a ``CASES`` list of :class:`Bad`;
``test_bad_inputs.py`` runs them all. Files are written into a fresh directory, which is
also the working directory; ``{d}`` in an argument stands for that directory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from gpuscale.cli.main import main

#: Words that show a message carries its fix: our ``(fix: …)``, Click's usage errors
#: (``see gpuscale … --help``), and suggestions.
FIX_MARKERS = ("(fix:", "--help", "did you mean")

#: stderr lines that are not errors: warnings, notes and progress.
QUIET_PREFIXES = ("gpuscale: warning:", "gpuscale: note:", "gpuscale: progress:")


@dataclass(frozen=True)
class Bad:
    """A bad input and what its one error line must name."""

    id: str
    """The case's test id: area-what, e.g. ``profile-zero-scrape-interval``."""
    argv: tuple[str, ...]
    """The command line after ``gpuscale``; ``{d}`` is the case's directory."""
    files: dict[str, str | bytes] = field(default_factory=dict)
    """Files to write first, by path relative to the case's directory."""
    names: tuple[str, ...] = ()
    """Substrings the error line must contain: the file:line, the key, the flag."""
    exit: int = 2
    """The exit code the command must return."""
    stdin: str | None = None
    """Text fed on standard input, for commands that read ``-``."""
    fix: bool = True
    """Whether the line must carry one of :data:`FIX_MARKERS`."""
    lint_json: bool = False
    """The case is ``gpuscale lint ... -o json`` exiting 1 for findings: its error line is
    the one finding of severity error in the JSON report on stdout, read as
    ``gpuscale: error: file:line: rule: message (fix: ...)``, as ``deploy`` prints it."""


def _lint_errors(out: str) -> list[str]:
    """The error findings of a ``gpuscale lint -o json`` report, one line each."""
    import json

    report = json.loads(out)
    return [
        f"gpuscale: error: {f['location']['file']}:{f['location']['line']}: {f['rule']}: "
        f"{' '.join(f['message'].split())} (fix: {' '.join(f['fix'].split())})"
        for f in report["findings"]
        if f["severity"] == "error"
    ]


def _snapshot(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def run_bad(
    case: Bad,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """Run ``case`` and assert the contract; returns the error line for further checks."""
    for name, content in case.files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    if case.stdin is not None:
        import io

        monkeypatch.setattr("sys.stdin", io.StringIO(case.stdin))
    before = _snapshot(tmp_path)
    argv = [arg.replace("{d}", str(tmp_path)) for arg in case.argv]
    code = main(argv)
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err, err
    assert "Traceback" not in captured.out, captured.out
    errors = [line for line in err.splitlines() if line.startswith("gpuscale: error:")]
    if case.lint_json:
        assert not errors, f"lint reports findings on stdout, not stderr: {err!r}"
        errors = _lint_errors(captured.out)
    others = [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith(QUIET_PREFIXES) and line not in errors
    ]
    assert code == case.exit, f"exit {code}, expected {case.exit}; stderr: {err!r}"
    assert len(errors) == 1, f"expected one error line, got: {err!r}"
    assert not others, f"stray stderr lines besides the error: {others!r}"
    line = errors[0]
    for name in case.names:
        assert name in line, f"{name!r} not named in: {line}"
    if case.fix:
        assert any(marker in line for marker in FIX_MARKERS), f"no fix in: {line}"
    assert _snapshot(tmp_path) == before, "files were created or changed by a failed command"
    return line
