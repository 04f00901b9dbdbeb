"""Random series and a random query corpus for the differential suite.

Everything here is a pure function of a seed (and of ``t0_ms``, the start of the data):
the same seed gives the same series and the same queries, so a CI failure can be replayed
with ``--promql-seed=<seed>`` (or ``GPUSCALE_PROMQL_SEED=<seed>``).

The series imitate what the engine meets in practice: the tutorial's ``my_custom_gauge`` and
``kube_deployment_status_replicas``, DCGM and AMD GPU exporter gauges, vLLM queue gauges,
counters with resets, a classic latency histogram, special values (NaN, ±Inf, -0, 1e±300),
label values with quotes and newlines, series that stop, restart and start late (gaps longer
than the 5-minute lookback stand in for staleness markers, which OpenMetrics text cannot
carry), and two metrics with the same labels (to provoke duplicate label sets).

The queries cover every supported function, aggregation and operator, each many times with
random arguments, plus the tutorial's query and typical GPU/LLM queries.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

from gpuscale.promql import SUPPORTED_AGGREGATIONS, SUPPORTED_FUNCTIONS

__all__ = [
    "TUTORIAL_QUERY",
    "Check",
    "SeriesSpec",
    "build_corpus",
    "generate_series",
    "to_openmetrics",
]

MIN = 60_000
TUTORIAL_QUERY = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)
SPAN_MS = 135 * MIN


@dataclass
class SeriesSpec:
    """One generated series: labels (with ``__name__``) and ``(t_ms, value)`` samples."""

    labels: dict[str, str]
    samples: list[tuple[int, float]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.labels["__name__"]


@dataclass(frozen=True)
class Check:
    """One query to compare: at instants (``times_ms``) and, when ``range_`` is set, as a
    range query ``(start_ms, end_ms, step_ms)``."""

    query: str
    times_ms: tuple[int, ...]
    range_: tuple[int, int, int] | None
    ordered: bool = False


# --------------------------------------------------------------------------- series


def _times(rng: random.Random, t0: int, start: int, end: int, interval: int) -> list[int]:
    """Scrape timestamps from ``t0+start`` to ``t0+end``: a phase, a little jitter."""
    phase = rng.choice([0, 0, rng.randrange(interval)])
    jitter = rng.choice([0, 0, 3, 40])
    out = []
    t = t0 + start + phase
    while t <= t0 + end:
        j = rng.randint(-jitter, jitter) if jitter else 0
        ts = t + j
        if not out or ts > out[-1]:
            out.append(ts)
        t += interval
    return out


def _walk(
    rng: random.Random, n: int, lo: float, hi: float, step: float, *, integer: bool
) -> list[float]:
    v = rng.uniform(lo, hi)
    out = []
    for _ in range(n):
        v = min(hi, max(lo, v + rng.uniform(-step, step)))
        out.append(float(round(v)) if integer else v)
    return out


def _counter(rng: random.Random, n: int, rate: float, reset_prob: float) -> list[float]:
    v = float(rng.randint(0, 1000))
    out = []
    for _ in range(n):
        if rng.random() < reset_prob:
            v = float(rng.choice([0, 0, rng.randint(0, 5)]))
        else:
            v += rng.choice([0.0, float(rng.randint(0, int(rate * 2) + 1)), rng.uniform(0, rate)])
        out.append(v)
    return out


def _segments(rng: random.Random) -> list[tuple[int, int]]:
    """When a series exists: whole span, late start, early end, or with a gap."""
    kind = rng.choice(["whole"] * 6 + ["late", "early", "gap", "short_gap"])
    if kind == "late":
        return [(rng.randint(20, 80) * MIN, SPAN_MS)]
    if kind == "early":
        return [(0, rng.randint(60, 120) * MIN)]
    if kind == "gap":
        a = rng.randint(40, 90) * MIN
        return [(0, a), (a + rng.randint(6, 25) * MIN, SPAN_MS)]
    if kind == "short_gap":
        a = rng.randint(40, 90) * MIN
        return [(0, a), (a + rng.randint(1, 4) * MIN, SPAN_MS)]
    return [(0, SPAN_MS)]


def _add(
    out: list[SeriesSpec],
    rng: random.Random,
    t0: int,
    labels: dict[str, str],
    values: Callable[[int], list[float]],
    *,
    interval: int = 15_000,
    segments: list[tuple[int, int]] | None = None,
) -> None:
    spec = SeriesSpec(dict(labels))
    for start, end in segments or _segments(rng):
        ts = _times(rng, t0, start, end, interval)
        spec.samples.extend(zip(ts, values(len(ts)), strict=True))
    out.append(spec)


def generate_series(seed: int, t0: int) -> list[SeriesSpec]:
    """The dataset for ``seed``, starting at ``t0`` (ms) and lasting ``SPAN_MS``."""
    rng = random.Random(seed)
    out: list[SeriesSpec] = []

    def gauge(
        lo: float, hi: float, step: float, integer: bool = False
    ) -> Callable[[int], list[float]]:
        return lambda n: _walk(rng, n, lo, hi, step, integer=integer)

    def counter(rate: float, reset: float = 0.01) -> Callable[[int], list[float]]:
        return lambda n: _counter(rng, n, rate, reset)

    pods = [f"go-from-configmap-7d9c{i}" for i in range(4)]
    for i, pod in enumerate(pods):
        values = (lambda n: [160.0] * n) if i == 0 else gauge(0, 300, 40, integer=True)
        _add(
            out,
            rng,
            t0,
            {"__name__": "my_custom_gauge", "namespace": "default", "pod": pod},
            values,
        )
    for dep in ("go-from-configmap", "vllm", "batch"):
        labels = {
            "__name__": "kube_deployment_status_replicas",
            "namespace": "default",
            "deployment": dep,
            "job": "kube-state-metrics",
        }
        _add(
            out,
            rng,
            t0,
            labels,
            gauge(1, 5, 1, integer=True),
            interval=30_000,
            segments=[(0, SPAN_MS)],
        )
    for i in range(8):
        labels = {
            "__name__": "DCGM_FI_DEV_GPU_UTIL",
            "gpu": str(i % 4),
            "UUID": f"GPU-{seed % 97:02d}{i:02d}",
            "Hostname": f"gpu-node-{i // 4}",
            "namespace": "x" if i < 5 else "y",
            "pod": f"vllm-{i}",
            "container": "vllm",
        }
        _add(out, rng, t0, labels, gauge(0, 100, 25, integer=True))
    for i in range(6):
        labels = {
            "__name__": "gpu_gfx_activity",
            "gpu_id": str(i % 2),
            "hostname": f"amd-node-{i // 2}",
            "card_model": "MI300X",
            "namespace": "x" if i % 3 else "y",
            "pod": f"vllm-{i}",
        }
        _add(out, rng, t0, labels, gauge(0, 100, 30))
    for i in range(4):
        base = {
            "model_name": "llama-3-8b" if i < 3 else "mistral-7b",
            "namespace": "x",
            "pod": f"vllm-{i}",
        }
        _add(
            out,
            rng,
            t0,
            {"__name__": "vllm:num_requests_waiting", **base},
            gauge(0, 40, 8, integer=True),
        )
        _add(
            out,
            rng,
            t0,
            {"__name__": "vllm:num_requests_running", **base},
            gauge(0, 16, 4, integer=True),
        )
        for reason in ("stop", "length"):
            _add(
                out,
                rng,
                t0,
                {"__name__": "vllm:request_success_total", **base, "finished_reason": reason},
                counter(5 if reason == "stop" else 1, 0.01),
            )
    for inst in ("10.0.0.1:8080", "10.0.0.2:8080"):
        for method in ("GET", "POST"):
            for code in ("200", "500"):
                labels = {
                    "__name__": "http_requests_total",
                    "job": "api",
                    "instance": inst,
                    "method": method,
                    "code": code,
                }
                _add(
                    out,
                    rng,
                    t0,
                    labels,
                    counter(30 if code == "200" else 2, 0.015),
                    interval=rng.choice([15_000, 15_000, 10_000, 30_000]),
                )
    bounds = ["0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]
    for i in range(3):
        base = {"model_name": "llama-3-8b", "pod": f"vllm-{i}"}
        _histogram(
            out, rng, t0=t0, name="vllm:e2e_request_latency_seconds", base=base, bounds=bounds
        )
    specials: dict[str, Callable[[int], list[float]]] = {
        "nan": lambda n: [math.nan] * n,
        "inf": lambda n: [math.inf] * n,
        "ninf": lambda n: [-math.inf] * n,
        "mixed": lambda n: [
            rng.choice([math.nan, math.inf, -math.inf, 0.0, -1.0, 3.5, 7.0]) for _ in range(n)
        ],
        "neg": gauge(-50, -1, 5),
        "zero": lambda n: [rng.choice([0.0, -0.0]) for _ in range(n)],
        "big": lambda n: [rng.uniform(1e299, 9e299) for _ in range(n)],
        "tiny": lambda n: [rng.uniform(1e-301, 9e-300) for _ in range(n)],
        "frac": lambda n: [rng.choice([0.1, 1 / 3, 2.5, 0.5, 1e-7, 123456.789]) for _ in range(n)],
    }
    for kind, values in specials.items():
        _add(out, rng, t0, {"__name__": "weird", "kind": kind}, values, segments=[(0, SPAN_MS)])
    for value in ("plain", "with space", 'q"uote', "back\\slash", "new\nline", "ünïcode"):
        _add(
            out,
            rng,
            t0,
            {"__name__": "special_labels", "instance": "a", "tag": value},
            gauge(0, 10, 2),
            segments=[(0, SPAN_MS)],
        )
    for name in ("colliding_a", "colliding_b"):
        _add(
            out, rng, t0, {"__name__": name, "pod": "p1"}, gauge(0, 10, 3), segments=[(0, SPAN_MS)]
        )
    for i in range(4):
        segs = [(0, 50 * MIN), (58 * MIN, 90 * MIN), (93 * MIN, 100 * MIN), (110 * MIN, 120 * MIN)]
        _add(
            out,
            rng,
            t0,
            {"__name__": "sparse_gauge", "pod": f"s{i}"},
            gauge(0, 50, 10),
            segments=segs[: 2 + i % 3] if i < 3 else [(70 * MIN, SPAN_MS)],
            interval=20_000,
        )
    return out


def _histogram(
    out: list[SeriesSpec],
    rng: random.Random,
    *,
    t0: int,
    name: str,
    base: dict[str, str],
    bounds: list[str],
) -> None:
    ts = _times(rng, t0, 0, SPAN_MS, 15_000)
    counts = [0.0] * len(bounds)
    total = 0.0
    per_t: list[tuple[list[float], float]] = []
    for _ in ts:
        if rng.random() < 0.01:
            counts = [0.0] * len(bounds)
            total = 0.0
        n = rng.randint(0, 20)
        for _ in range(n):
            x = rng.lognormvariate(0, 1.2)
            total += x
            for j, b in enumerate(bounds):
                if x <= float(b):
                    counts[j] += 1
        per_t.append((list(counts), total))
    for j, b in enumerate(bounds):
        spec = SeriesSpec({"__name__": f"{name}_bucket", **base, "le": b})
        spec.samples = [(t, c[j]) for t, (c, _) in zip(ts, per_t, strict=True)]
        out.append(spec)
    out.append(
        SeriesSpec(
            {"__name__": f"{name}_sum", **base},
            [(t, s) for t, (_, s) in zip(ts, per_t, strict=True)],
        )
    )
    out.append(
        SeriesSpec(
            {"__name__": f"{name}_count", **base},
            [(t, c[-1]) for t, (c, _) in zip(ts, per_t, strict=True)],
        )
    )


def _om_value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0 and math.copysign(1.0, v) < 0:
        return "-0"
    return repr(v)


def _om_escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def to_openmetrics(series: list[SeriesSpec]) -> str:
    """OpenMetrics text with a timestamp on every sample, grouped by metric name."""
    by_name: dict[str, list[SeriesSpec]] = {}
    for s in series:
        by_name.setdefault(s.name, []).append(s)
    lines = []
    for name, group in by_name.items():
        lines.append(f"# TYPE {name} unknown")
        for s in group:
            labels = ",".join(
                f'{k}="{_om_escape(v)}"' for k, v in sorted(s.labels.items()) if k != "__name__"
            )
            head = f"{name}{{{labels}}}" if labels else name
            for t, v in s.samples:
                lines.append(f"{head} {_om_value(v)} {t // 1000}.{t % 1000:03d}")
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- queries

GAUGES = [
    "my_custom_gauge",
    "DCGM_FI_DEV_GPU_UTIL",
    "gpu_gfx_activity",
    "vllm:num_requests_waiting",
    "vllm:num_requests_running",
    "kube_deployment_status_replicas",
    "weird",
    "sparse_gauge",
    "special_labels",
]
COUNTERS = [
    "http_requests_total",
    "vllm:request_success_total",
    "vllm:e2e_request_latency_seconds_count",
    "vllm:e2e_request_latency_seconds_sum",
    "vllm:e2e_request_latency_seconds_bucket",
]
RANGES = ["30s", "1m", "90s", "2m", "5m", "10m", "1h"]
OFFSETS = ["", "", "", "", " offset 1m", " offset 5m", " offset 30s", " offset -2m", " offset 7m"]
BUCKETS = "vllm:e2e_request_latency_seconds_bucket"


def _quote(v: str) -> str:
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _Gen:
    """Random PromQL over the generated families."""

    def __init__(self, rng: random.Random, series: list[SeriesSpec], t0: int) -> None:
        self.rng = rng
        self.t0 = t0
        self.labels: dict[str, dict[str, set[str]]] = {}
        for s in series:
            fam = self.labels.setdefault(s.name, {})
            for k, v in s.labels.items():
                if k != "__name__":
                    fam.setdefault(k, set()).add(v)

    def choice(self, xs: list[str]) -> str:
        return self.rng.choice(xs)

    def matchers(self, name: str) -> str:
        rng = self.rng
        fam = self.labels.get(name, {})
        parts = []
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            if not fam:
                break
            label = rng.choice(sorted(fam))
            values = sorted(fam[label])
            op = rng.choice(["=", "=", "!=", "=~", "!~"])
            if op in ("=", "!="):
                value = rng.choice([*values, "nonexistent"])
                parts.append(f"{label}{op}{_quote(value)}")
            else:
                pick = rng.sample(values, k=min(len(values), rng.randint(1, 2)))
                pattern = rng.choice(
                    [
                        "|".join(_re_escape(v) for v in pick),
                        _re_escape(pick[0][:2]) + ".*",
                        ".*",
                        ".+",
                        "(?i)" + _re_escape(pick[0].upper()),
                    ]
                )
                parts.append(f"{label}{op}{_quote(pattern)}")
        if parts and rng.random() < 0.1:
            return "{" + f"__name__={_quote(name)}," + ",".join(parts) + "}"
        return name + ("{" + ",".join(parts) + "}" if parts or rng.random() < 0.1 else "")

    def selector(self, name: str | None = None, *, counter: bool = False) -> str:
        name = name or self.choice(COUNTERS if counter else GAUGES)
        return self.matchers(name) + self.choice(OFFSETS)

    def range_sel(self, name: str | None = None, *, counter: bool = False, at: bool = True) -> str:
        name = name or self.choice(COUNTERS if counter else GAUGES)
        rng = self.rng
        sel = self.matchers(name) + f"[{self.choice(RANGES)}]"
        r = rng.random()
        if r < 0.15:
            sel += self.choice(OFFSETS[4:])
        elif r < 0.2 and at:
            sel += f" @ {self.at()}"
        return sel

    def at(self) -> str:
        if self.rng.random() < 0.3:
            return self.choice(["start()", "end()"])
        t = self.t0 + self.rng.randint(30, 120) * MIN + self.rng.choice([0, 500, 15_000])
        return f"{t // 1000}.{t % 1000:03d}"

    def subquery(self, *, counter: bool = False) -> str:
        inner = (
            self.vector(1, counter=counter)
            if self.rng.random() < 0.5
            else self.selector(counter=counter)
        )
        rng_ = self.choice(["5m", "10m", "30m", "3m"])
        step = self.choice(["1m", "30s", "", "15s", "2m", "45s"])
        off = self.choice(["", "", " offset 1m", " offset 5m"])
        return f"({inner})[{rng_}:{step}]{off}"

    def matrix(self, *, counter: bool = False, at: bool = True) -> str:
        if self.rng.random() < 0.2:
            return self.subquery(counter=counter)
        return self.range_sel(counter=counter, at=at)

    def scalar(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.55:
            return self.choice(["0", "1", "2", "0.5", "10", "100", "-1", "3.7", "1e3", "0.25"])
        if r < 0.7:
            return f"scalar({self.vector(1)})"
        if r < 0.8:
            return "time()"
        if r < 0.9:
            return self.choice(["NaN", "Inf", "-Inf", "0.1"])
        return f"({self.scalar()} {self.choice(['+', '-', '*', '/', '%', '^'])} {self.scalar()})"

    def vector(self, depth: int, *, counter: bool | None = None) -> str:
        rng = self.rng
        if counter is None:
            counter = rng.random() < 0.35
        if depth <= 0 or rng.random() < 0.25:
            return self.selector(counter=counter)
        k = rng.random()
        if k < 0.35:
            return self.range_call(counter=counter)
        if k < 0.6:
            return self.aggregation(depth - 1)
        if k < 0.8:
            return self.instant_call(depth - 1)
        return self.binary(depth - 1)

    def range_call(self, name: str | None = None, *, counter: bool = False) -> str:
        if name is None:
            name = self.choice(sorted(_RANGE_FUNCS))
        counter = counter or name in ("rate", "increase", "irate", "resets")
        # Prometheus shifts an @ window step by step inside predict_linear() over a range
        # (engine.go setOffsetForAtModifier); the engine refuses that case (docs/promql.md).
        m = self.matrix(counter=counter, at=name != "predict_linear")
        if name == "quantile_over_time":
            q = self.choice(["0", "0.5", "0.9", "0.99", "1", "-1", "2", "NaN"])
            return f"quantile_over_time({q}, {m})"
        if name == "holt_winters":
            sf = self.choice(["0.1", "0.5", "0.9", "0.01"])
            tf = self.choice(["0.1", "0.5", "0.99", "1.5"])
            return f"holt_winters({m}, {sf}, {tf})"
        if name == "predict_linear":
            return f"predict_linear({m}, {self.choice(['0', '60', '3600', '-300', '1.5'])})"
        return f"{name}({m})"

    def aggregation(self, depth: int, op: str | None = None) -> str:
        rng = self.rng
        op = op or self.choice(sorted(SUPPORTED_AGGREGATIONS))
        inner = self.vector(depth)
        while op == "count_values" and (
            any(f"{f}(" in inner for f in _TRANSCENDENTAL) or "^" in inner
        ):
            # count_values turns a value's last digit into a label; Go's and the C library's
            # transcendental functions may differ in that last digit (docs/promql.md).
            inner = self.vector(depth)
        labels = [
            "pod",
            "namespace",
            "le",
            "code",
            "method",
            "instance",
            "model_name",
            "gpu",
            "kind",
            "__name__",
            "job",
            "nonexistent",
        ]
        grouping = ""
        g = rng.random()
        if g < 0.35:
            grouping = f" by ({', '.join(rng.sample(labels, rng.randint(1, 2)))})"
        elif g < 0.55:
            grouping = f" without ({', '.join(rng.sample(labels, rng.randint(0, 2)))})"
        if op in ("topk", "bottomk"):
            param = (
                self.choice(["1", "2", "3", "5", "0", "1.9", "100"])
                if rng.random() < 0.9
                else f"scalar({self.vector(0)})"
            )
            return f"{op}{grouping} ({param}, {inner})"
        if op == "quantile":
            param = self.choice(["0", "0.5", "0.9", "0.99", "1", "-0.5", "1.5", "NaN"])
            return f"{op}{grouping} ({param}, {inner})"
        if op == "count_values":
            label = _quote(self.choice(["value", "v", "pod"]))
            return f"count_values{grouping} ({label}, {inner})"
        if rng.random() < 0.5 and grouping:
            return f"{op}({inner}){grouping}"
        return f"{op}{grouping} ({inner})"

    def instant_call(self, depth: int, name: str | None = None) -> str:
        rng = self.rng
        name = name or self.choice(sorted(_INSTANT_FUNCS))
        # Chains of transcendental functions amplify last-ulp differences between Go's
        # math package and the C library (tan(cosh(x)) for large x): feed them selectors.
        v = self.selector() if name in _TRANSCENDENTAL else self.vector(depth)
        if name in ("clamp",):
            return f"clamp({v}, {self.scalar()}, {self.scalar()})"
        if name in ("clamp_min", "clamp_max"):
            return f"{name}({v}, {self.scalar()})"
        if name == "round":
            return (
                f"round({v})"
                if rng.random() < 0.4
                else f"round({v}, {self.choice(['0.1', '5', '0.25', '3', '-2', '0'])})"
            )
        if name == "histogram_quantile":
            q = self.choice(["0.5", "0.9", "0.99", "0", "1", "-1", "2", "NaN", "0.75"])
            by = self.choice(["le", "le, pod", "le, model_name", "pod, le"])
            r = self.choice(RANGES[1:6])
            base = self.choice(
                [
                    f"sum by ({by}) (rate({BUCKETS}[{r}]))",
                    f"rate({BUCKETS}[{r}])",
                    BUCKETS,
                    f'sum by ({by}) (increase({BUCKETS}{{pod!="vllm-1"}}[{r}]))',
                    f"max by ({by}) ({BUCKETS})",
                ]
            )
            return f"histogram_quantile({q}, {base})"
        if name == "label_replace":
            src = self.choice(["pod", "namespace", "instance", "nonexistent", "__name__", "tag"])
            dst = self.choice(["dst", "pod", "new_label", "__name__"])
            regex = self.choice(
                ["(.*)", "vllm-(.*)", "(.+)-(\\\\d+)", ".*", "(?P<name>[a-z]+).*", "x", "(.*):(.*)"]
            )
            repl = self.choice(["$1", "${1}", "$2-$1", "$1x", "$name", "constant", "", "$$1"])
            return f'label_replace({v}, "{dst}", "{repl}", "{src}", "{regex}")'
        if name == "label_join":
            srcs = rng.sample(
                ["pod", "namespace", "instance", "code", "nonexistent", "__name__"],
                rng.randint(1, 3),
            )
            sep = self.choice(["-", ",", "", " / "])
            dst = self.choice(["joined", "pod", "__name__"])
            return f'label_join({v}, "{dst}", "{sep}", {", ".join(_quote(s) for s in srcs)})'
        if name == "vector":
            return f"vector({self.scalar()})"
        if name == "absent":
            sel = self.selector()
            if rng.random() < 0.5:
                sel = self.choice(
                    [
                        'nonexistent_metric{job="x", a=~"b"}',
                        'nonexistent_metric{job="x",instance="y"}',
                        'my_custom_gauge{pod="gone"}',
                        "sum(nonexistent_metric)",
                    ]
                )
            return f"absent({sel})"
        if name == "absent_over_time":
            sel = self.range_sel()
            if rng.random() < 0.5:
                sel = self.choice(
                    [
                        'nonexistent_metric{job="x"}[5m]',
                        'sparse_gauge{pod="s0"}[5m]',
                        'sparse_gauge{pod="s1"}[2m]',
                    ]
                )
            return f"absent_over_time({sel})"
        if name == "timestamp":
            return f"timestamp({v})"
        if name in _DATE_FUNCS:
            # Go turns NaN, ±Inf and out-of-range seconds into a date through an undefined
            # integer conversion; the engine refuses those (docs/promql.md), so feed times.
            arg = self.choice(["", "vector(time())", f"timestamp({self.selector()})"])
            return f"{name}({arg})"
        return f"{name}({v})"

    def binary(self, depth: int, op: str | None = None) -> str:
        rng = self.rng
        op = op or self.choice(_OPERATORS)
        fam = self.choice(GAUGES[:6] + COUNTERS[:2])
        counter = fam in COUNTERS
        left = self._over(fam, depth, counter)
        r = rng.random()
        if r < 0.3 and op not in ("and", "or", "unless"):
            s = self.scalar()
            bool_ = " bool" if op in _COMPARISONS and rng.random() < 0.4 else ""
            return f"{left} {op}{bool_} {s}" if rng.random() < 0.6 else f"{s} {op}{bool_} {left}"
        if r < 0.35 and op not in ("and", "or", "unless"):
            a, b = self.scalar(), self.scalar()
            bool_ = " bool" if op in _COMPARISONS else ""
            return f"{a} {op}{bool_} {b}"
        fam2 = fam if rng.random() < 0.6 else self.choice(GAUGES[:6] + COUNTERS[:2])
        right = self._over(fam2, depth, fam2 in COUNTERS)
        mod = ""
        shared = ["pod", "namespace", "instance", "model_name", "job"]
        m = rng.random()
        if m < 0.3:
            mod = f" on({', '.join(rng.sample(shared, rng.randint(0, 2)))})"
        elif m < 0.45:
            names = rng.sample([*shared, "code", "gpu", "finished_reason"], rng.randint(1, 2))
            mod = f" ignoring({', '.join(names)})"
        if mod and op not in ("and", "or", "unless") and rng.random() < 0.4:
            side = self.choice(["group_left", "group_right"])
            extra = self.choice(["", "(namespace)", "(container)", "(pod)", "(deployment)"])
            mod += f" {side}{extra}"
        bool_ = " bool" if op in _COMPARISONS and rng.random() < 0.4 else ""
        return f"{left} {op}{bool_}{mod} {right}"

    def _over(self, fam: str, depth: int, counter: bool) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.4:
            return self.selector(fam, counter=counter)
        if r < 0.65:
            fn = (
                "rate"
                if counter
                else self.choice(
                    ["avg_over_time", "max_over_time", "delta", "deriv", "last_over_time"]
                )
            )
            return f"{fn}({self.range_sel(fam, counter=counter)})"
        if r < 0.85:
            op = self.choice(["sum", "avg", "max", "min", "count"])
            by = self.choice(
                ["pod", "namespace", "pod, namespace", "instance", "model_name", "deployment"]
            )
            return f"{op} by ({by}) ({self.selector(fam, counter=counter)})"
        return f"({self.vector(max(depth - 1, 0))})"


def _re_escape(v: str) -> str:
    out = []
    for ch in v:
        if ch in ".^$*+?()[]{}|\\":
            out.append("\\\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == '"':
            out.append('\\"')
        else:
            out.append(ch)
    return "".join(out)


_RANGE_FUNCS = {
    "rate",
    "irate",
    "increase",
    "delta",
    "idelta",
    "deriv",
    "predict_linear",
    "resets",
    "changes",
    "avg_over_time",
    "min_over_time",
    "max_over_time",
    "sum_over_time",
    "count_over_time",
    "last_over_time",
    "quantile_over_time",
    "stddev_over_time",
    "stdvar_over_time",
    "present_over_time",
    "holt_winters",
}
_DATE_FUNCS = {
    "day_of_month",
    "day_of_week",
    "day_of_year",
    "days_in_month",
    "hour",
    "minute",
    "month",
    "year",
}
_INSTANT_FUNCS = (SUPPORTED_FUNCTIONS - _RANGE_FUNCS) - {"time", "pi", "scalar"}
_TRANSCENDENTAL = {
    "exp",
    "ln",
    "log2",
    "log10",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "deg",
    "rad",
}
_COMPARISONS = ["==", "!=", ">", "<", ">=", "<="]
_OPERATORS = ["+", "-", "*", "/", "%", "^", "atan2", *_COMPARISONS, "and", "or", "unless"]


def _fixed_queries(gen: _Gen) -> list[str]:
    """The queries the issue names, and the ones KEDA users write for GPU and LLM workloads."""
    t = gen.at()
    return [
        TUTORIAL_QUERY,
        "sum(my_custom_gauge{})",
        'sum(kube_deployment_status_replicas{deployment="go-from-configmap"})',
        'avg(DCGM_FI_DEV_GPU_UTIL{namespace="x"})',
        "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL)",
        'max(DCGM_FI_DEV_GPU_UTIL{namespace="x", container="vllm"})',
        "avg_over_time(DCGM_FI_DEV_GPU_UTIL[5m])",
        'avg(avg_over_time(DCGM_FI_DEV_GPU_UTIL{namespace="x"}[2m]))',
        "avg(gpu_gfx_activity)",
        'avg by (hostname) (gpu_gfx_activity{card_model="MI300X"})',
        "max_over_time(gpu_gfx_activity[10m])",
        "sum(vllm:num_requests_waiting)",
        "sum(rate(vllm:num_requests_waiting[1m]))",
        'sum(vllm:num_requests_waiting{model_name="llama-3-8b"})',
        "sum by (pod) (vllm:num_requests_waiting) / sum by (pod) (vllm:num_requests_running)",
        "sum(vllm:num_requests_waiting) + sum(vllm:num_requests_running)",
        "vllm:num_requests_waiting / on(pod) vllm:num_requests_running",
        "max(vllm:num_requests_waiting) > 10",
        "sum(rate(vllm:request_success_total[5m]))",
        "sum by (model_name) (rate(vllm:request_success_total[2m]))",
        f"histogram_quantile(0.99, sum by (le) (rate({BUCKETS}[5m])))",
        f"histogram_quantile(0.9, sum by (le, pod) (rate({BUCKETS}[5m])))",
        f"histogram_quantile(0.5, rate({BUCKETS}[10m]))",
        "rate(vllm:e2e_request_latency_seconds_sum[5m])"
        " / rate(vllm:e2e_request_latency_seconds_count[5m])",
        "sum(rate(http_requests_total[1m]))",
        'sum by (pod) (rate(http_requests_total{code="500"}[5m]))',
        "sum by (instance) (rate(http_requests_total[5m]))"
        " / ignoring(instance) group_left sum(rate(http_requests_total[5m]))",
        'sum(rate(http_requests_total{code=~"5.."}[5m])) / sum(rate(http_requests_total[5m]))',
        "topk(3, DCGM_FI_DEV_GPU_UTIL)",
        "bottomk(2, gpu_gfx_activity)",
        "count(DCGM_FI_DEV_GPU_UTIL > 50)",
        "sort_desc(sum by (pod) (vllm:num_requests_waiting))",
        "sort(DCGM_FI_DEV_GPU_UTIL)",
        "absent(my_custom_gauge)",
        'absent(nonexistent{job="myjob", instance=~".*"})',
        "weird",
        "-weird",
        "weird * 2",
        "weird > 0",
        "weird == bool weird",
        "sum(weird)",
        "avg(weird)",
        "max(weird)",
        "min(weird)",
        "stddev(weird)",
        "stdvar(weird)",
        'sum(weird{kind!~"nan|mixed"})',
        'avg(weird{kind=~"big|frac"})',
        'stddev(weird{kind=~"inf|neg"})',
        "special_labels",
        'special_labels{tag=~".*"}',
        'special_labels{tag=~"new.line"}',
        'special_labels{tag!~".+"}',
        'special_labels{tag=~"q\\"uote|back\\\\\\\\slash"}',
        'rate({__name__=~"colliding_.*"}[5m])',
        '-{__name__=~"colliding_.*"}',
        '{__name__=~"colliding_.*"} + 1',
        '{__name__=~"colliding_.*"} > 1',
        'sum without () ({__name__=~"colliding_.*"})',
        'label_replace({__name__=~"colliding_.*"}, "pod", "same", "pod", ".*")',
        "sparse_gauge",
        "count_over_time(sparse_gauge[10m])",
        "absent_over_time(sparse_gauge[1m])",
        f"my_custom_gauge @ {t}",
        "my_custom_gauge @ -10",
        "vector(1) @ 100",
        f"rate(http_requests_total[5m] @ {t})",
        "rate(http_requests_total[5m] @ end())",
        "max_over_time(my_custom_gauge[10m:1m] @ start())",
        "timestamp(my_custom_gauge)",
        "timestamp(my_custom_gauge offset 1m)",
        f"timestamp(my_custom_gauge @ {t})",
        "timestamp(-my_custom_gauge)",
        "my_custom_gauge[5m]",
        "http_requests_total[2m] offset 1m",
        "rate(http_requests_total[5m])[10m:1m]",
        "max_over_time(rate(http_requests_total[1m])[10m:])",
        "avg_over_time(my_custom_gauge[10m:30s])",
        "max_over_time(sum(rate(http_requests_total[1m]))[30m:1m])",
        "min_over_time(max_over_time(my_custom_gauge[2m:15s])[10m:1m])",
        "time()",
        "pi()",
        "vector(1)",
        "scalar(sum(my_custom_gauge))",
        "scalar(my_custom_gauge)",
        "1 + 2 * 3",
        "2 ^ 3 ^ 2",
        "-2 ^ 2",
        "1 / 0",
        "-1 / 0",
        "0 / 0",
        "5 % 0",
        "(-8) ^ (1/3)",
        "0 ^ -1",
        "1 > bool 2",
        "NaN == bool NaN",
        '"a string"',
        "exp(weird)",
        "ln(weird)",
        "log2(weird)",
        "log10(weird)",
        "sqrt(weird)",
        "sgn(weird)",
        "ceil(weird)",
        "floor(weird)",
        "round(weird)",
        "round(weird, 0.1)",
        "abs(weird)",
        "clamp(weird, -1, 1)",
        "clamp(weird, 1, -1)",
        "clamp_min(weird, 0)",
        "clamp_max(weird, 0)",
        "acos(weird)",
        "asin(weird)",
        "atan(weird)",
        "cosh(weird)",
        "sinh(weird)",
        "tanh(weird)",
        "acosh(weird)",
        "asinh(weird)",
        "atanh(weird)",
        "cos(weird)",
        "sin(weird)",
        "tan(weird)",
        "deg(weird)",
        "rad(weird)",
        "weird atan2 weird",
        "weird ^ weird",
        "weird % 2",
        'count_values("value", weird)',
        'count_values("value", round(DCGM_FI_DEV_GPU_UTIL, 10))',
        "quantile(0.5, weird)",
        "topk(2, weird)",
        "bottomk(2, weird)",
        "changes(weird[10m])",
        "resets(http_requests_total[1h])",
        "deriv(my_custom_gauge[10m])",
        "predict_linear(my_custom_gauge[10m], 3600)",
        "stddev_over_time(weird[5m])",
        "sum_over_time(weird[5m])",
        "avg_over_time(weird[5m])",
        "group by (namespace) (DCGM_FI_DEV_GPU_UTIL)",
        "max by (le) (vllm:e2e_request_latency_seconds_bucket)",
    ]


def build_corpus(seed: int, series: list[SeriesSpec], t0_ms: int, size: int) -> list[Check]:
    """``size`` queries or more: the fixed ones, then every function, aggregation and
    operator in turn with random arguments, then random compositions."""
    rng = random.Random(seed * 7919 + 1)
    gen = _Gen(rng, series, t0_ms)
    queries = _fixed_queries(gen)
    producers: list[Callable[[], str]] = []
    for fn in sorted(_RANGE_FUNCS):
        producers.append(lambda fn=fn: gen.range_call(fn))
    for fn in sorted(_INSTANT_FUNCS):
        producers.append(lambda fn=fn: gen.instant_call(rng.randint(0, 2), fn))
    for op in sorted(SUPPORTED_AGGREGATIONS):
        producers.append(lambda op=op: gen.aggregation(rng.randint(0, 2), op))
    for op in _OPERATORS:
        producers.append(lambda op=op: gen.binary(rng.randint(0, 2), op))
    producers.append(lambda: f"max_over_time({gen.subquery()})")
    producers.append(lambda: f"scalar({gen.vector(1)}) * {gen.vector(1)}")
    producers.append(lambda: gen.vector(3))
    seen = set(queries)
    rounds = 0
    while len(queries) < size and rounds < size * 20:
        rounds += 1
        q = producers[rounds % len(producers)]()
        if q not in seen:
            seen.add(q)
            queries.append(q)
    checks = []
    for i, q in enumerate(queries):
        times = tuple(_eval_time(rng, t0_ms) for _ in range(2))
        range_ = None
        if i % 4 == 0:
            step = rng.choice([15_000, 30_000, 60_000, 10_000, 45_000, 120_000])
            start = _eval_time(rng, t0_ms)
            end = start + step * rng.randint(1, 40)
            range_ = (start, end, step)
        ordered = q.startswith(("sort(", "sort_desc("))
        checks.append(Check(q, times, range_, ordered))
    return checks


def _eval_time(rng: random.Random, t0: int) -> int:
    r = rng.random()
    if r < 0.3:
        # On the grid of 15 s scrapes without phase: window edges meet sample timestamps.
        return t0 + rng.randint(40 * 4, 135 * 4) * 15_000
    if r < 0.4:
        return t0 + SPAN_MS + rng.randint(1, 8) * MIN + rng.choice([0, 7_000])
    return t0 + rng.randint(40 * MIN, SPAN_MS + 2 * MIN)
