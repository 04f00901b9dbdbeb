"""Bad input to ``gpuscale report`` (timeline files, labels, outputs) and ``gpuscale demo``
(its flags): one error line each, and nothing written."""

from __future__ import annotations

from tests.unit.badinput._harness import Bad
from tests.unit.report import timelines

GOOD = timelines.lines(timelines.tutorial())
HEADER = GOOD.splitlines()[0] + "\n"
RECORD = GOOD.splitlines()[1] + "\n"

CASES = [
    # --- report: the timeline files --------------------------------------------------------
    Bad(id="report-no-timeline", argv=("report",), names=("FILE",)),
    Bad(id="report-missing-file", argv=("report", "nope.jsonl"), names=("nope.jsonl",)),
    Bad(
        id="report-a-directory",
        argv=("report", "sub"),
        files={"sub/keep.txt": "x"},
        names=("sub", "directory"),
    ),
    Bad(
        id="report-empty-file",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": ""},
        names=("t.jsonl",),
    ),
    Bad(
        id="report-header-only",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": HEADER},
        names=("t.jsonl", "no records"),
    ),
    Bad(
        id="report-header-only-beside-a-good-one",
        argv=("report", "good.jsonl", "t.jsonl", "--html", "page.html"),
        files={"good.jsonl": GOOD, "t.jsonl": HEADER},
        names=("t.jsonl", "no records"),
    ),
    Bad(
        id="report-not-json",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": "hello\n"},
        names=("t.jsonl:1",),
    ),
    Bad(
        id="report-not-a-timeline-header",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": '{"format": "something-else"}\n' + RECORD},
        names=("t.jsonl:1",),
    ),
    Bad(
        id="report-broken-record-line",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": HEADER + "{\n"},
        names=("t.jsonl:2",),
    ),
    Bad(
        id="report-record-time-not-a-number",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": HEADER + '{"t": "soon", "workloads": []}\n'},
        names=("t.jsonl:2",),
    ),
    Bad(
        id="report-record-is-a-list",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": HEADER + "[1, 2]\n"},
        names=("t.jsonl:2",),
    ),
    Bad(
        id="report-not-utf8",
        argv=("report", "t.jsonl"),
        files={"t.jsonl": b"\xff\xfe\x00garbage\n"},
        names=("t.jsonl",),
    ),
    # --- report: flags ---------------------------------------------------------------------
    Bad(
        id="report-one-label-for-two-timelines",
        argv=("report", "a.jsonl", "b.jsonl", "--label", "only"),
        files={"a.jsonl": GOOD, "b.jsonl": GOOD},
        names=("--label",),
    ),
    Bad(
        id="report-three-labels-for-one-timeline",
        argv=("report", "a.jsonl", "--label", "x", "--label", "y", "--label", "z"),
        files={"a.jsonl": GOOD},
        names=("--label",),
    ),
    Bad(
        id="report-unknown-output-format",
        argv=("report", "a.jsonl", "-o", "yaml"),
        files={"a.jsonl": GOOD},
        names=("--output",),
    ),
    Bad(
        id="report-threshold-not-a-number",
        argv=("report", "a.jsonl", "--threshold", "high"),
        files={"a.jsonl": GOOD},
        names=("--threshold",),
    ),
    Bad(
        id="report-threshold-nan",
        argv=("report", "a.jsonl", "--threshold", "nan", "--plots", "plots"),
        files={"a.jsonl": GOOD},
        names=("--threshold",),
    ),
    Bad(
        id="report-threshold-infinite",
        argv=("report", "a.jsonl", "--threshold", "inf", "--plots", "plots"),
        files={"a.jsonl": GOOD},
        names=("--threshold",),
    ),
    Bad(
        id="report-html-in-a-missing-directory",
        argv=("report", "a.jsonl", "--html", "nowhere/page.html"),
        files={"a.jsonl": GOOD},
        names=("nowhere/page.html",),
    ),
    Bad(
        id="report-html-is-a-directory",
        argv=("report", "a.jsonl", "--html", "sub"),
        files={"a.jsonl": GOOD, "sub/keep.txt": "x"},
        names=("sub",),
    ),
    Bad(
        id="report-plots-is-a-file",
        argv=("report", "a.jsonl", "--plots", "a.jsonl"),
        files={"a.jsonl": GOOD},
        names=("a.jsonl",),
    ),
    Bad(
        id="report-plots-below-a-file",
        argv=("report", "a.jsonl", "--plots", "a.jsonl/plots"),
        files={"a.jsonl": GOOD},
        names=("a.jsonl/plots",),
    ),
    Bad(
        id="report-html-below-a-file",
        argv=("report", "a.jsonl", "--html", "a.jsonl/page.html"),
        files={"a.jsonl": GOOD},
        names=("a.jsonl/page.html",),
    ),
    Bad(
        id="report-empty-label",
        argv=("report", "a.jsonl", "--label", " "),
        files={"a.jsonl": GOOD},
        names=("--label",),
    ),
    Bad(
        id="report-unknown-flag",
        argv=("report", "a.jsonl", "--colour"),
        files={"a.jsonl": GOOD},
        names=("--colour",),
    ),
    # --- demo: flags -----------------------------------------------------------------------
    Bad(id="demo-unknown-output-format", argv=("demo", "-o", "yaml"), names=("--output",)),
    Bad(id="demo-seed-not-a-number", argv=("demo", "--seed", "lucky"), names=("--seed",)),
    Bad(
        id="demo-out-is-a-file",
        argv=("demo", "--out", "taken"),
        files={"taken": "a file, not a directory"},
        names=("taken",),
    ),
    Bad(
        id="demo-out-below-a-file",
        argv=("demo", "--out", "taken/demo"),
        files={"taken": "a file, not a directory"},
        names=("taken/demo",),
    ),
    Bad(
        id="demo-timeline-name-taken-by-a-directory",
        argv=("demo", "--out", "out"),
        files={"out/tutorial.jsonl/keep.txt": "x"},
        names=("tutorial.jsonl",),
    ),
    Bad(id="demo-extra-argument", argv=("demo", "examples/"), names=("examples/",)),
    Bad(id="demo-unknown-flag", argv=("demo", "--fast"), names=("--fast",)),
]
