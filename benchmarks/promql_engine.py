"""How fast gpuscale's PromQL engine appends and answers, and how that compares with the
real Prometheus on the same data.

Measures, on this machine:

1. Append throughput of ``SeriesStore``: ``append_ref`` (one sample per call, the
   simulator's fast path), ``append_scrape`` (one scrape of many series per call) and
   ``append`` (labels looked up on every call).
2. Instant evaluation time over ~100 series with 1 h of 15 s samples, evaluated at the
   newest sample as the simulator does: the tutorial's query,
   ``sum(rate(vllm:num_requests_waiting[1m]))``, ``avg(DCGM_FI_DEV_GPU_UTIL{namespace="x"})``.
3. The issue's benchmark: the tutorial's query and ``sum by (pod) (rate(x[1m]))`` over 1,000
   series at 10,000 evaluation instants (evaluations per second), and the same queries
   against Debian's Prometheus over the same samples (backfilled with promtool): the
   server's own evaluation time (``stats=all``) and the HTTP round trip, side by side.

Timings are the best of several repeats (the least disturbed by other load). Run:

    .venv/bin/python benchmarks/promql_engine.py            # everything, writes docs/promql.md
    .venv/bin/python benchmarks/promql_engine.py --quick    # smaller, prints only
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from gpuscale.promql import Engine, SeriesStore

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "promql.md"
TUTORIAL = (
    'sum(my_custom_gauge{}) / sum(kube_deployment_status_replicas{deployment="go-from-configmap"})'
)
STEP_MS = 15_000


def best_of(fn: Callable[[], None], repeats: int) -> float:
    """The shortest wall time of ``repeats`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_appends(n_series: int, n_scrapes: int, repeats: int) -> dict[str, float]:
    """Samples appended per second by each append path."""
    labels = [
        {"__name__": "vllm:num_requests_waiting", "pod": f"vllm-{i}"} for i in range(n_series)
    ]
    values = [float(i % 17) for i in range(n_series)]
    out = {}

    def by_ref() -> None:
        store = SeriesStore()
        refs = [store.series_ref(lb) for lb in labels]
        append = store.append_ref
        for k in range(n_scrapes):
            t = k * STEP_MS
            for ref, v in zip(refs, values, strict=True):
                append(ref, t, v)

    def by_scrape() -> None:
        store = SeriesStore()
        refs = [store.series_ref(lb) for lb in labels]
        for k in range(n_scrapes):
            store.append_scrape(refs, k * STEP_MS, values)

    def by_labels() -> None:
        store = SeriesStore()
        for k in range(n_scrapes):
            t = k * STEP_MS
            for lb, v in zip(labels, values, strict=True):
                store.append(lb, t, v)

    total = n_series * n_scrapes
    out["append_ref"] = total / best_of(by_ref, repeats)
    out["append_scrape"] = total / best_of(by_scrape, repeats)
    out["append (labels)"] = total / best_of(by_labels, max(1, repeats // 2))
    return out


def gpu_store(n_series: int, hours: float, seed: int = 1) -> tuple[SeriesStore, int]:
    """~``n_series`` GPU/LLM series with ``hours`` of 15 s samples; returns the newest time."""
    rng = random.Random(seed)
    store = SeriesStore()
    n = int(hours * 3600_000 / STEP_MS)
    refs: list[tuple[int, Callable[[int], float]]] = []
    for i in range(n_series):
        ns = "x" if i % 2 else "y"
        refs.append(
            (
                store.series_ref(
                    {
                        "__name__": "DCGM_FI_DEV_GPU_UTIL",
                        "namespace": ns,
                        "pod": f"vllm-{i}",
                        "gpu": str(i % 8),
                        "Hostname": f"node-{i // 8}",
                    }
                ),
                lambda k: float(rng.randint(0, 100)),
            )
        )
        refs.append(
            (
                store.series_ref(
                    {"__name__": "vllm:num_requests_waiting", "namespace": ns, "pod": f"vllm-{i}"}
                ),
                lambda k: float(rng.randint(0, 12)),
            )
        )
    gauge = store.series_ref({"__name__": "my_custom_gauge", "namespace": "default", "pod": "go-0"})
    replicas = store.series_ref(
        {"__name__": "kube_deployment_status_replicas", "deployment": "go-from-configmap"}
    )
    for k in range(n):
        t = k * STEP_MS
        for ref, value in refs:
            store.append_ref(ref, t, value(k))
        store.append_ref(gauge, t, 160.0)
        store.append_ref(replicas, t, 2.0)
    return store, (n - 1) * STEP_MS


def bench_instant(repeats: int, evaluations: int) -> dict[str, float]:
    """Microseconds per instant evaluation at the newest sample (100 series of each)."""
    store, now = gpu_store(100, 1.0)
    engine = Engine(store)
    queries = [
        TUTORIAL,
        "sum(rate(vllm:num_requests_waiting[1m]))",
        'avg(DCGM_FI_DEV_GPU_UTIL{namespace="x"})',
        "sum by (pod) (rate(vllm:num_requests_waiting[1m]))",
        'max(avg_over_time(DCGM_FI_DEV_GPU_UTIL{namespace="x"}[5m]))',
    ]
    out = {}
    for q in queries:
        engine.instant(q, now)

        def run(q: str = q) -> None:
            for _ in range(evaluations):
                engine.instant(q, now)

        out[q] = best_of(run, repeats) / evaluations * 1e6
    return out


# --------------------------------------------------------------------------- vs Prometheus


def counter_store(
    n_series: int, n_samples: int
) -> tuple[SeriesStore, list[tuple[dict[str, str], list[float]]]]:
    """``n_series`` counters ``x{pod=...}`` plus the tutorial's two series, 15 s apart."""
    rng = random.Random(7)
    store = SeriesStore()
    series: list[tuple[dict[str, str], list[float]]] = []
    for i in range(n_series):
        v = 0.0
        values = []
        for _ in range(n_samples):
            v += rng.randint(0, 30)
            if rng.random() < 0.002:
                v = 0.0
            values.append(v)
        series.append(({"__name__": "x", "pod": f"pod-{i}", "job": "bench"}, values))
    series.append(
        (
            {"__name__": "my_custom_gauge", "pod": "go-0"},
            [float(rng.randint(0, 300)) for _ in range(n_samples)],
        )
    )
    series.append(
        (
            {"__name__": "kube_deployment_status_replicas", "deployment": "go-from-configmap"},
            [float(rng.randint(1, 4)) for _ in range(n_samples)],
        )
    )
    return store, series


def load(store: SeriesStore, series: list[tuple[dict[str, str], list[float]]], t0: int) -> None:
    refs = [store.series_ref(labels) for labels, _ in series]
    columns = [values for _, values in series]
    for k in range(len(columns[0])):
        store.append_scrape(refs, t0 + k * STEP_MS, [c[k] for c in columns])


def write_openmetrics(
    path: Path, series: list[tuple[dict[str, str], list[float]]], t0: int
) -> None:
    with path.open("w") as f:
        for labels, values in series:
            name = labels["__name__"]
            f.write(f"# TYPE {name} unknown\n")
            head = (
                name
                + "{"
                + ",".join(f'{k}="{v}"' for k, v in labels.items() if k != "__name__")
                + "}"
            )
            for k, v in enumerate(values):
                t = t0 + k * STEP_MS
                f.write(f"{head} {v!r} {t // 1000}.{t % 1000:03d}\n")
        f.write("# EOF\n")


def bench_vs_prometheus(
    n_series: int, instants: int, prom_instants: int, repeats: int
) -> dict[str, object]:
    """The issue's benchmark; the Prometheus half is skipped when it is not installed."""
    hours = 2.0
    n_samples = int(hours * 3600_000 / STEP_MS)
    t0 = (int(time.time()) // 3600 - 5) * 3600 * 1000
    store, series = counter_store(n_series, n_samples)
    load(store, series, t0)
    engine = Engine(store, version="2")
    first = t0 + 10 * 60_000
    last = t0 + n_samples * STEP_MS - STEP_MS
    spacing = max(1, (last - first) // instants)
    times = [first + i * spacing for i in range(instants)]
    queries = [TUTORIAL, "sum by (pod) (rate(x[1m]))"]
    result: dict[str, object] = {
        "series": n_series,
        "samples": store.num_samples,
        "instants": instants,
    }
    rows: dict[str, dict[str, float]] = {q: {} for q in queries}
    result["rows"] = rows
    for q in queries:
        engine.instant(q, times[0])

        def run(q: str = q) -> None:
            for t in times:
                engine.instant(q, t)

        seconds = best_of(run, repeats)
        rows[q]["engine evals/s"] = instants / seconds
    try:
        from gpuscale.prometheus import (
            PrometheusServer,
            create_blocks_from_openmetrics,
            find_binary,
        )

        find_binary("prometheus")
    except Exception as exc:
        result["prometheus"] = f"skipped: {exc}"
        return result
    with tempfile.TemporaryDirectory(prefix="gpuscale-bench-") as work:
        om = Path(work) / "series.om"
        write_openmetrics(om, series, t0)
        create_blocks_from_openmetrics(om, Path(work) / "data")
        with (
            PrometheusServer(Path(work) / "data") as server,
            httpx.Client(base_url=server.url, timeout=60) as http,
        ):
            sample = times[:: max(1, len(times) // prom_instants)][:prom_instants]
            result["sampled"] = len(sample)
            for q in queries:
                evals, trips, ours = [], [], []
                for t in sample:
                    params = {"query": q, "time": f"{t / 1000:.3f}", "stats": "all"}
                    t_start = time.perf_counter()
                    body = http.get("/api/v1/query", params=params).json()
                    trips.append(time.perf_counter() - t_start)
                    timings = body["data"]["stats"]["timings"]
                    evals.append(timings["evalTotalTime"])
                    t_start = time.perf_counter()
                    engine.instant(q, t)
                    ours.append(time.perf_counter() - t_start)
                rows[q]["engine ms"] = statistics.median(ours) * 1e3
                rows[q]["prometheus eval ms"] = statistics.median(evals) * 1e3
                rows[q]["prometheus http ms"] = statistics.median(trips) * 1e3
                rows[q]["ratio"] = statistics.median(ours) / statistics.median(evals)
                # The server's range evaluation over the same 10,000 instants in one query.
                step_ms = spacing
                params = {
                    "query": q,
                    "start": f"{times[0] / 1000:.3f}",
                    "end": f"{times[-1] / 1000:.3f}",
                    "step": f"{step_ms / 1000:.3f}",
                    "stats": "all",
                }
                body = http.get("/api/v1/query_range", params=params).json()
                total = body["data"]["stats"]["timings"]["evalTotalTime"]
                rows[q]["prometheus range evals/s"] = instants / total
        result["prometheus"] = "Debian " + _prometheus_version()
    return result


def _prometheus_version() -> str:
    out = subprocess.run(["prometheus", "--version"], capture_output=True, text=True, check=False)
    words = (out.stdout + out.stderr).split()
    return words[2] if len(words) > 2 else "?"


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def render(appends: dict[str, float], instant: dict[str, float], vs: dict[str, object]) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        f"Measured with `.venv/bin/python benchmarks/promql_engine.py` on {_cpu()} "
        f"({os.cpu_count()} cores, load average {load:.1f} from other work while measuring), "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}. Best of several "
        "runs; a quiet machine is faster.",
        "",
        "| append path | samples/s |",
        "| --- | ---: |",
    ]
    lines += [f"| `{k}` | {v / 1e6:.2f} M |" for k, v in appends.items()]
    lines += [
        "",
        "| instant query over 100 series, 1 h of 15 s data, at the newest sample | µs/eval |",
        "| --- | ---: |",
    ]
    lines += [f"| `{q}` | {v:.0f} |" for q, v in instant.items()]
    rows = vs.get("rows")
    if isinstance(rows, dict):
        lines += [
            "",
            f"Side by side with the real server ({vs.get('prometheus')}) over the same samples: "
            f"{vs['series']:,} counters `x{{pod=...}}` plus the tutorial's two series, 2 h of "
            f"15 s samples ({vs['samples']:,} samples), evaluated at {vs['instants']:,} instants. "
            f"Engine and server instant times are medians over the same {vs.get('sampled')} "
            "instants; the "
            "server's evaluation time is its own `stats=all` `evalTotalTime` (the HTTP round "
            "trip is shown apart); its range evaluation does all instants in one query.",
            "",
            "| query | engine evals/s | engine ms/eval | Prometheus ms/eval (instant) "
            "| ratio engine/Prometheus | Prometheus HTTP round trip ms "
            "| Prometheus range evals/s |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for q, r in rows.items():
            cells = [
                f"{r.get('engine evals/s', float('nan')):,.0f}",
                f"{r.get('engine ms', float('nan')):.3f}",
                f"{r.get('prometheus eval ms', float('nan')):.3f}",
                f"{r.get('ratio', float('nan')):.2f}",
                f"{r.get('prometheus http ms', float('nan')):.1f}",
                f"{r.get('prometheus range evals/s', float('nan')):,.0f}",
            ]
            lines.append(f"| `{q}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, print only")
    parser.add_argument("--no-prometheus", action="store_true", help="skip the real server")
    args = parser.parse_args(argv)
    if args.quick:
        appends = bench_appends(200, 100, 3)
        instant = bench_instant(3, 100)
        vs = bench_vs_prometheus(100, 500, 50, 1) if not args.no_prometheus else {}
    else:
        appends = bench_appends(1000, 200, 5)
        instant = bench_instant(5, 500)
        vs = bench_vs_prometheus(1000, 10_000, 300, 3) if not args.no_prometheus else {}
    if not vs:
        vs = {"prometheus": "skipped"}
    text = render(appends, instant, vs)
    print(text)
    if not args.quick:
        doc = DOC.read_text()
        pattern = re.compile(r"(<!-- benchmark:start -->\n).*?(<!-- benchmark:end -->)", re.S)
        if not pattern.search(doc):
            print(f"no benchmark markers in {DOC}", file=sys.stderr)
            return 1
        DOC.write_text(pattern.sub(lambda m: m.group(1) + text + m.group(2), doc))
        print(f"wrote {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
