"""Bad inputs of ``simulate`` (scenarios, each trace format, flags, trigger queries, runs
too long to start) and of ``lint`` (queries over the PromQL text limits).

The system is examples/tutorial-fixed with a request capacity added to its profile, in
``app/``; scenarios and traces sit beside it (a YAML file inside ``app/`` would be read as
a manifest).
"""

from __future__ import annotations

from pathlib import Path

from tests.unit.badinput._harness import Bad

_EXAMPLE = Path(__file__).parents[3] / "examples" / "tutorial-fixed"
_RESOURCES = (_EXAMPLE / "resources.yaml").read_text(encoding="utf-8")
_PROFILE = (_EXAMPLE / "gpuscale.yaml").read_text(encoding="utf-8")
_PROFILE_WITH_CAPACITY = _PROFILE.replace(
    "    startup_time: 3s\n", "    startup_time: 3s\n    service_time: 0.2s\n    concurrency: 4\n"
)
assert _PROFILE_WITH_CAPACITY != _PROFILE, "examples/tutorial-fixed/gpuscale.yaml changed"
_QUERY = 'sum(my_custom_gauge{namespace="gpu-demo", service="go-from-configmap"})'
_QUERY_LINE = next(
    number for number, line in enumerate(_RESOURCES.splitlines(), 1) if "query: " + _QUERY in line
)
_APP = {"app/resources.yaml": _RESOURCES, "app/gpuscale.yaml": _PROFILE_WITH_CAPACITY}
_GOOD_SCENARIO = "until: 10m\nsteps:\n  - at: 0s\n    request_rate: 2\n"
_GOOD_TRACE = "timestamp,prompt_tokens,output_tokens\n0,10,5\n1.5,12,7\n"


def _scenario(id: str, text: str | bytes, *names: str, extra: tuple[str, ...] = ()) -> Bad:
    return Bad(
        id=f"simulate-scenario-{id}",
        argv=("simulate", "app", "--scenario", "s.yaml", *extra),
        files={**_APP, "s.yaml": text},
        names=names or ("s.yaml",),
    )


def _step(id: str, step: str, *names: str) -> Bad:
    """One step, written at line 3 of the scenario."""
    return _scenario(id, "until: 30m\nsteps:\n" + step, *(names or ("s.yaml:3",)))


def _trace(id: str, name: str, text: str | bytes, *names: str, extra: tuple[str, ...] = ()) -> Bad:
    return Bad(
        id=f"simulate-trace-{id}",
        argv=("simulate", "app", "--trace", name, *extra),
        files={**_APP, name: text},
        names=names or (name,),
    )


def _flag(id: str, *flags: str, names: tuple[str, ...], trace: bool = False) -> Bad:
    driver = ("--trace", "t.csv") if trace else ("--scenario", "s.yaml")
    return Bad(
        id=f"simulate-flag-{id}",
        argv=("simulate", "app", *driver, *flags),
        files={**_APP, "s.yaml": _GOOD_SCENARIO, "t.csv": _GOOD_TRACE},
        names=names,
    )


def _query(command: str, id: str, query: str) -> Bad:
    resources = _RESOURCES.replace("query: " + _QUERY, "query: " + query)
    assert resources != _RESOURCES
    argv = ("simulate", "app", "--scenario", "s.yaml") if command == "simulate" else ("lint", "app")
    return Bad(
        id=f"{command}-query-{id}",
        argv=argv,
        files={
            "app/resources.yaml": resources,
            "app/gpuscale.yaml": _PROFILE_WITH_CAPACITY,
            "s.yaml": _GOOD_SCENARIO,
        },
        names=(f"resources.yaml:{_QUERY_LINE}",),
    )


_DEEP_JSON = '{"timestamp": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n"
_HUGE = "9" * 5_000
_AZURE = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
_MOON = '{"timestamp": 0, "input_length": 5, "output_length": 3}\n'

SCENARIO_CASES = [
    _scenario("yaml-syntax", "steps: [\n", "s.yaml:2"),
    _scenario("empty", ""),
    _scenario("only-comment", "# nothing here\n"),
    _scenario("steps-not-a-list", "steps: 5\n", "s.yaml:1"),
    _scenario("steps-empty", "steps: []\n", "s.yaml:1"),
    _scenario("no-steps", "until: 5m\n", "s.yaml:1"),
    _scenario("unknown-top-key", "stpes:\n  - at: 0s\n    request_rate: 1\n", "s.yaml:1", "stpes"),
    _scenario("until-zero", "until: 0s\nsteps:\n  - at: 0s\n    request_rate: 1\n", "s.yaml:1"),
    _scenario(
        "until-words", "until: forever\nsteps:\n  - at: 0s\n    request_rate: 1\n", "s.yaml:1"
    ),
    _scenario("until-list", "until: [1]\nsteps:\n  - at: 0s\n    request_rate: 1\n", "s.yaml:1"),
    _scenario(
        "until-huge-number",
        f"until: {_HUGE}\nsteps:\n  - at: 0s\n    request_rate: 1\n",
        "s.yaml:1",
    ),
    _scenario(
        "step-after-until", "until: 5m\nsteps:\n  - at: 10m\n    request_rate: 1\n", "s.yaml:3"
    ),
    _scenario(
        "workload-not-a-name",
        "workload: [a]\nsteps:\n  - at: 0s\n    request_rate: 1\n",
        "s.yaml:1",
    ),
    _scenario("duplicate-key", "until: 5m\nuntil: 6m\nsteps:\n  - at: 0s\n    request_rate: 1\n"),
    _scenario(
        "billion-laughs",
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "steps: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
    ),
    _scenario("deep-nesting", "steps: " + "[" * 5_000 + "]" * 5_000 + "\n"),
    _scenario("not-utf8", b"steps:\n  - at: 0s\n    request_rate: \xff\xfe\n"),
    _scenario(
        "until-100000d",
        "until: 100000d\nsteps:\n  - at: 60s\n    set_gauge: {name: my_custom_gauge, value: 160}\n",
        "s.yaml",
        "--max-work",
    ),
    _scenario(
        "rate-for-hours",
        "until: 1000d\nsteps:\n  - at: 0s\n    request_rate: 1000\n",
        "--max-work",
    ),
    _step("step-not-a-mapping", "  - 5\n"),
    _step("step-no-at", "  - request_rate: 1\n"),
    _step("at-words", "  - at: soon\n    request_rate: 1\n"),
    _step("at-negative", "  - at: -5s\n    request_rate: 1\n"),
    _step("at-list", "  - at: [1]\n    request_rate: 1\n"),
    _step("at-mapping", "  - at: {s: 1}\n    request_rate: 1\n"),
    _step("at-bool", "  - at: true\n    request_rate: 1\n"),
    _step("at-inf", "  - at: .inf\n    request_rate: 1\n"),
    _step("at-nan", "  - at: .nan\n    request_rate: 1\n"),
    _step("at-huge-number", f"  - at: {_HUGE}\n    request_rate: 1\n"),
    _step("two-kinds", "  - at: 0s\n    request_rate: 1\n    ramp: {from: 0, to: 1, over: 1m}\n"),
    _step("no-kind", "  - at: 0s\n    workload: go-from-configmap\n"),
    _step("unknown-step-key", "  - at: 0s\n    request_rat: 1\n", "s.yaml:4", "request_rat"),
    _step("rate-string", "  - at: 0s\n    request_rate: lots\n", "s.yaml:4"),
    _step("rate-negative", "  - at: 0s\n    request_rate: -1\n", "s.yaml:4"),
    _step("rate-nan", "  - at: 0s\n    request_rate: .nan\n", "s.yaml:4"),
    _step("rate-inf", "  - at: 0s\n    request_rate: .inf\n", "s.yaml:4"),
    _step("rate-bool", "  - at: 0s\n    request_rate: true\n", "s.yaml:4"),
    _step("step-workload-list", "  - at: 0s\n    workload: [a]\n    request_rate: 1\n", "s.yaml:4"),
    _step("gauge-not-mapping", "  - at: 0s\n    set_gauge: 160\n", "s.yaml:4"),
    _step("gauge-no-name", "  - at: 0s\n    set_gauge: {value: 160}\n", "s.yaml:4"),
    _step("gauge-empty-name", "  - at: 0s\n    set_gauge: {name: '', value: 1}\n", "s.yaml:4"),
    _step("gauge-no-value", "  - at: 0s\n    set_gauge: {name: g}\n", "s.yaml:4"),
    _step("gauge-value-text", "  - at: 0s\n    set_gauge: {name: g, value: high}\n", "s.yaml:4"),
    _step("gauge-value-nan", "  - at: 0s\n    set_gauge: {name: g, value: .nan}\n", "s.yaml:4"),
    _step("gauge-value-inf", "  - at: 0s\n    set_gauge: {name: g, value: -.inf}\n", "s.yaml:4"),
    _step(
        "gauge-pods-zero", "  - at: 0s\n    set_gauge: {name: g, value: 1, pods: 0}\n", "s.yaml:4"
    ),
    _step(
        "gauge-pods-words",
        "  - at: 0s\n    set_gauge: {name: g, value: 1, pods: some}\n",
        "s.yaml:4",
    ),
    _step("gauge-unknown-key", "  - at: 0s\n    set_gauge: {name: g, value: 1, pod: 1}\n", "pod"),
    _step("ramp-not-mapping", "  - at: 0s\n    ramp: fast\n", "s.yaml:4"),
    _step("ramp-no-over", "  - at: 0s\n    ramp: {from: 0, to: 5}\n", "s.yaml:4", "over"),
    _step("ramp-over-zero", "  - at: 0s\n    ramp: {from: 0, to: 5, over: 0s}\n", "s.yaml:4"),
    _step("ramp-from-negative", "  - at: 0s\n    ramp: {from: -1, to: 5, over: 1m}\n", "s.yaml:4"),
    _step("ramp-to-nan", "  - at: 0s\n    ramp: {from: 0, to: .nan, over: 1m}\n", "s.yaml:4"),
    _step(
        "ramp-unknown-key",
        "  - at: 0s\n    ramp: {from: 0, to: 5, over: 1m, by: 2}\n",
        "s.yaml:4",
        "by",
    ),
    Bad(
        id="simulate-scenario-missing",
        argv=("simulate", "app", "--scenario", "nope.yaml"),
        files=_APP,
        names=("nope.yaml",),
    ),
    Bad(
        id="simulate-scenario-directory",
        argv=("simulate", "app", "--scenario", "dir"),
        files={**_APP, "dir/x.txt": "x"},
        names=("dir",),
    ),
]

TRACE_CASES = [
    # generic CSV
    _trace("csv-empty", "t.csv", ""),
    _trace("csv-blank-lines", "t.csv", "\n\n  \n"),
    _trace("csv-header-only", "t.csv", "timestamp,prompt_tokens\n"),
    _trace("csv-bom-header-only", "t.csv", "\ufefftimestamp\n"),
    _trace("csv-no-timestamp-column", "t.csv", "time,tokens\n0,1\n", "t.csv:1"),
    _trace("csv-column-count", "t.csv", "timestamp,prompt_tokens\n0,1,2\n", "t.csv:2"),
    _trace("csv-timestamp-words", "t.csv", "timestamp\nyesterday\n", "t.csv:2"),
    _trace("csv-timestamp-nan", "t.csv", "timestamp\n0\nnan\n", "t.csv:3"),
    _trace("csv-timestamp-inf", "t.csv", "timestamp\n0\ninf\n", "t.csv:3"),
    _trace("csv-timestamp-long", "t.csv", "timestamp\n" + "1" * 5_000 + "\n", "t.csv:2"),
    _trace("csv-span-overflows", "t.csv", "timestamp\n-1e308\n1e308\n"),
    _trace("csv-span-1e15", "t.csv", "timestamp\n0\n1e15\n", "t.csv", "--max-work"),
    _trace("csv-tokens-negative", "t.csv", "timestamp,output_tokens\n0,-3\n", "t.csv:2"),
    _trace("csv-tokens-fraction", "t.csv", "timestamp,prompt_tokens\n0,2.5\n", "t.csv:2"),
    _trace("csv-tokens-words", "t.csv", "timestamp,prompt_tokens\n0,many\n", "t.csv:2"),
    _trace("csv-tokens-nan", "t.csv", "timestamp,prompt_tokens\n0,nan\n", "t.csv:2"),
    _trace("csv-tokens-huge", "t.csv", f"timestamp,prompt_tokens\n0,{_HUGE}\n", "t.csv:2"),
    _trace("csv-tokens-over-limit", "t.csv", "timestamp,prompt_tokens\n0,1e12\n", "t.csv:2"),
    _trace("csv-bom-bad-row", "t.csv", "\ufefftimestamp\n0\nx\n", "t.csv:3"),
    _trace("csv-not-utf8", "t.csv", b"timestamp\n0\n\xff\n"),
    # Azure LLM CSV
    _trace("azure-bad-date", "a.csv", _AZURE + "2023-13-45 18:15:46.68,1,2\n", "a.csv:2"),
    _trace("azure-bad-clock", "a.csv", _AZURE + "2023-11-16 18-15-46,1,2\n", "a.csv:2"),
    _trace("azure-seconds-nan", "a.csv", _AZURE + "2023-11-16 18:15:nan,1,2\n", "a.csv:2"),
    _trace("azure-seconds-inf", "a.csv", _AZURE + "2023-11-16 18:15:inf,1,2\n", "a.csv:2"),
    _trace("azure-two-columns", "a.csv", _AZURE + "2023-11-16 18:15:46.68,1\n", "a.csv:2"),
    _trace("azure-tokens-negative", "a.csv", _AZURE + "2023-11-16 18:15:46.68,-1,2\n", "a.csv:2"),
    _trace("azure-header-only", "a.csv", _AZURE),
    _trace("azure-bom-bad-row", "a.csv", "\ufeff" + _AZURE + "2023-11-16 x,1,2\n", "a.csv:2"),
    # Mooncake JSON lines
    _trace("mooncake-not-json", "m.jsonl", _MOON + "{timestamp: 1}\n", "m.jsonl:2"),
    _trace("mooncake-deep-json", "m.jsonl", _MOON + _DEEP_JSON, "m.jsonl:2"),
    _trace("mooncake-huge-int", "m.jsonl", '{"timestamp": ' + _HUGE + "}\n", "m.jsonl:1"),
    _trace("mooncake-no-timestamp", "m.jsonl", '{"input_length": 5}\n', "m.jsonl:1"),
    _trace("mooncake-array-line", "m.jsonl", _MOON + "[1, 2]\n", "m.jsonl:2"),
    _trace("mooncake-timestamp-string", "m.jsonl", '{"timestamp": "noon"}\n', "m.jsonl:1"),
    _trace("mooncake-timestamp-bool", "m.jsonl", '{"timestamp": true}\n', "m.jsonl:1"),
    _trace("mooncake-timestamp-nan", "m.jsonl", '{"timestamp": NaN}\n', "m.jsonl:1"),
    _trace("mooncake-timestamp-inf", "m.jsonl", '{"timestamp": Infinity}\n', "m.jsonl:1"),
    _trace(
        "mooncake-length-list", "m.jsonl", '{"timestamp": 1, "input_length": [5]}\n', "m.jsonl:1"
    ),
    _trace(
        "mooncake-length-negative",
        "m.jsonl",
        '{"timestamp": 1, "output_length": -5}\n',
        "m.jsonl:1",
    ),
    _trace(
        "mooncake-length-huge",
        "m.jsonl",
        '{"timestamp": 1, "output_length": 1e300}\n',
        "m.jsonl:1",
    ),
    _trace(
        "mooncake-length-nan", "m.jsonl", '{"timestamp": 1, "input_length": NaN}\n', "m.jsonl:1"
    ),
    _trace(
        "mooncake-span-overflows",
        "m.jsonl",
        '{"timestamp": -1.7e308}\n{"timestamp": 1.7e308}\n',
        "m.jsonl",
    ),
    # the file and its format
    Bad(
        id="simulate-trace-missing",
        argv=("simulate", "app", "--trace", "nope.csv"),
        files=_APP,
        names=("nope.csv",),
    ),
    Bad(
        id="simulate-trace-directory",
        argv=("simulate", "app", "--trace", "dir"),
        files={**_APP, "dir/x.csv": "timestamp\n0\n"},
        names=("dir",),
    ),
    _trace("format-unknown", "t.csv", _GOOD_TRACE, "--trace-format", extra=("--trace-format", "x")),
    _trace(
        "format-azure-on-csv",
        "t.csv",
        _GOOD_TRACE,
        "t.csv:2",
        "give --trace-format csv",
        extra=("--trace-format", "azure"),
    ),
    _trace(
        "format-mooncake-on-csv",
        "t.csv",
        _GOOD_TRACE,
        "t.csv:1",
        "give --trace-format csv",
        extra=("--trace-format", "mooncake"),
    ),
]

FLAG_CASES = [
    _flag("speedup-zero", "--speedup", "0", names=("--speedup",), trace=True),
    _flag("speedup-negative", "--speedup", "-2", names=("--speedup",), trace=True),
    _flag("speedup-nan", "--speedup", "nan", names=("--speedup",), trace=True),
    _flag("speedup-inf", "--speedup", "inf", names=("--speedup",), trace=True),
    _flag("speedup-words", "--speedup", "fast", names=("--speedup",), trace=True),
    _flag("speedup-1e-9", "--speedup", "1e-9", names=("--speedup", "--max-work"), trace=True),
    _flag("speedup-1e-300", "--speedup", "1e-300", names=("--speedup",), trace=True),
    _flag("speedup-1e300", "--speedup", "1e300", names=("--max-work",), trace=True),
    _flag("until-zero", "--until", "0s", names=("--until",)),
    _flag("until-words", "--until", "later", names=("--until",)),
    _flag("until-negative", "--until", "-5m", names=("--until",)),
    _flag("until-100000d", "--until", "100000d", names=("--until", "--max-work")),
    _flag("until-trace-100000d", "--until", "100000d", names=("--until",), trace=True),
    _flag("until-1e400", "--until", "1e400", names=("--until",)),
    _flag("max-work-zero", "--max-work", "0", names=("--max-work",)),
    _flag("max-work-words", "--max-work", "lots", names=("--max-work",)),
    _flag("max-work-nan", "--max-work", "nan", names=("--max-work",)),
    _flag("max-work-negative", "--max-work", "-5", names=("--max-work",)),
    _flag("max-work-too-low", "--max-work", "10", names=("--max-work",)),
    _flag("workload-unknown", "--workload", "nope", names=("--workload",), trace=True),
    _flag("output-yaml", "-o", "yaml", names=("--output",)),
    _flag("trace-format-unknown", "--trace-format", "tsv", names=("--trace-format",), trace=True),
    _flag("seed-words", "--seed", "lucky", names=("--seed",)),
    Bad(
        id="simulate-flag-no-load",
        argv=("simulate", "app"),
        files=_APP,
        names=("--scenario",),
    ),
]

_CHAIN = " + ".join(["my_custom_gauge"] * 1_000)  # over the length limit
_SHORT_CHAIN = " + ".join(["g"] * 1_000)  # RecursionError before the depth limit
_PARENS = "(" * 5_000 + "my_custom_gauge" + ")" * 5_000
_SEGFAULT = " + ".join(["x"] * 25_000)  # ~100 KB: promql-parser would overflow its stack
_LONG = 'my_custom_gauge{pod="' + "a" * 20_000 + '"}'
_SUMS = "sum(" * 300 + "my_custom_gauge" + ")" * 300

QUERY_CASES = [
    _query("simulate", "plus-chain", _CHAIN),
    _query("simulate", "short-plus-chain", _SHORT_CHAIN),
    _query("simulate", "nested-parens", _PARENS),
    _query("simulate", "100kb", _SEGFAULT),
    _query("simulate", "long-selector", _LONG),
    _query("simulate", "nested-sums", _SUMS),
    _query("lint", "plus-chain", _CHAIN),
    _query("lint", "short-plus-chain", _SHORT_CHAIN),
    _query("lint", "nested-parens", _PARENS),
    _query("lint", "100kb", _SEGFAULT),
    _query("lint", "long-selector", _LONG),
    _query("lint", "nested-sums", _SUMS),
]

CASES = SCENARIO_CASES + TRACE_CASES + FLAG_CASES + QUERY_CASES
