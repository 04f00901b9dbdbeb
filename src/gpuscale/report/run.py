"""One run as the report shows it: a label, its timeline and, when known, its summary.

Also reads a timeline file for the CLI and anything else that starts from a path; the
decoding and its one-line errors are :func:`gpuscale.timeline.decode_lines`'.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuscale.errors import InputError
from gpuscale.report.tables import Summary
from gpuscale.timeline import Timeline, decode_lines

__all__ = ["ReportRun", "read_timeline"]


@dataclass(frozen=True, slots=True)
class ReportRun:
    """A timeline to report on, with what to call it."""

    label: str
    """The name in legends and column headings: ``tutorial``, ``fixed``, ``simulate``, ``live``."""
    timeline: Timeline
    """The run's timeline."""
    summary: Summary | None = None
    """The simulator's summary of the run; None falls back to
    :func:`gpuscale.report.tables.timeline_basics`."""
    source: str = ""
    """Where the timeline came from (a file path), shown in the provenance table."""


def read_timeline(path: Path | str) -> Timeline:
    """Read and decode a timeline file; a missing or unreadable file is an ``InputError``."""
    where = str(path)
    fix = "pass a timeline written by gpuscale simulate --timeline or watch --timeline"
    try:
        with Path(path).open(encoding="utf-8") as handle:
            return decode_lines(handle, source=where)
    except FileNotFoundError:
        raise InputError("no such file", where=where, fix=fix) from None
    except IsADirectoryError:
        raise InputError("is a directory, not a timeline file", where=where, fix=fix) from None
    except PermissionError:
        raise InputError("permission denied", where=where, fix="make the file readable") from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", where=where, fix=fix) from None
