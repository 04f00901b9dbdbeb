#!/usr/bin/env python3
"""Benchmark ``gpuscale app`` against the tutorial's Go program under the same wrk load.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python benchmarks/app_vs_go/bench.py              # Go vs gpuscale app
    .venv/bin/python benchmarks/app_vs_go/bench.py --stacks     # also the candidate stacks

What it does, following ``../shared/anchors/bench/bench.sh``:

1. builds the Go program with ``../shared/anchors/go-app/build.sh`` (Debian's Go; the
   script apt-installs it if missing) unless ``GO_APP`` names a built binary;
2. for each of ``REPS`` rounds and each of ``GET /metrics`` and ``GET /?value=123``,
   runs the servers one after the other (Go then gpuscale app in odd rounds, the reverse
   in even rounds, so a drift in the machine's load does not favour either), each fresh
   and alone on 127.0.0.1 (Go on its fixed :8080, checked free first; the others on a
   free port): idle RSS of its process tree one second after it first answers, a
   ``WARM`` wrk warm-up, then one ``wrk -t THREADS -c CONNS -d DUR --latency`` run;
3. prints req/s, p50/p99 latency and RSS per server and endpoint (median over rounds),
   the Python/Go ratios (median of the per-round ratios: each round's runs are
   neighbours in time, which keeps a noisy shared machine fair), and checks issue 2's
   targets: /metrics >= 1.0x Go, setter >= 0.25x Go, idle RSS <= 40 MB. Exit 1 if one
   is missed.

Environment (defaults of bench.sh): THREADS=2 CONNS=32 DUR=10s REPS=3 WARM=3s;
GPUSCALE_GO_APP_BUILD (build script), GO_APP (prebuilt binary), RES (output folder,
default /tmp/gpuscale-bench/app_vs_go). Raw wrk outputs and runs.csv go to RES.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GO_PORT = 8080
ENDPOINTS = {"metrics": "/metrics", "set_value": "/?value=123"}
TARGETS = {"metrics": 1.0, "set_value": 0.25}
RSS_BUDGET_KB = 40 * 1024


@dataclass(frozen=True)
class Server:
    """One program under test: how to start it on a port."""

    name: str
    argv: list[str]
    fixed_port: int | None = None
    module: str | None = None
    """A module the server needs; the server is skipped when it is not installed."""

    def command(self, port: int) -> list[str]:
        return [arg.replace("{port}", str(port)) for arg in self.argv]


@dataclass
class Run:
    server: str
    rep: int
    endpoint: str
    req_per_s: float
    p50_ms: float
    p99_ms: float
    rss_kb: int
    idle_rss_kb: int
    requests_per_cpu_s: float
    """Requests served per CPU-second the server's processes used during the run: the
    server's efficiency, much less sensitive than req/s to other work on the machine."""
    non2xx: int
    socket_errors: str


def env_setting(name: str, default: str) -> str:
    return os.environ.get(name, default)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def tree_cpu_s(pid: int) -> float:
    """User plus system CPU seconds used so far by ``pid`` and its descendants."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for current in descendants(pid):
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / ticks


def tree_rss_kb(pid: int) -> int:
    """VmRSS of ``pid`` and its descendants (KiB)."""
    total, pending = 0, [pid]
    while pending:
        current = pending.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            total += int(status.split("VmRSS:")[1].split()[0])
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(c) for c in (task / "children").read_text().split())
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
    return total


def to_ms(text: str) -> float:
    """wrk's ``1.23ms`` / ``456.78us`` / ``1.02s`` in milliseconds."""
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"unexpected wrk latency {text!r}")
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[match.group(2)]
    return float(match.group(1)) * scale


def parse_wrk(output: str) -> tuple[float, float, float, int, str]:
    """req/s, p50 ms, p99 ms, non-2xx count and socket errors from ``wrk --latency``."""
    rps = float(re.search(r"^Requests/sec:\s+([\d.]+)", output, re.M).group(1))  # type: ignore[union-attr]
    p50 = to_ms(re.search(r"^\s+50%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
    p99 = to_ms(re.search(r"^\s+99%\s+(\S+)", output, re.M).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(r"Socket errors:(.*)", output)
    return (
        rps,
        p50,
        p99,
        int(non2xx.group(1)) if non2xx else 0,
        errors.group(1).strip() if errors else "none",
    )


def wrk_seconds(duration: str) -> float:
    """wrk's ``-d`` (``10s``, ``2m``, ``500ms``) in seconds."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m|h)?", duration)
    if not match:
        sys.exit(f"bench: cannot read the duration {duration!r}")
    scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}[match.group(2)]
    return float(match.group(1)) * scale


def build_go() -> Path:
    prebuilt = os.environ.get("GO_APP")
    if prebuilt:
        return Path(prebuilt)
    script = Path(
        os.environ.get("GPUSCALE_GO_APP_BUILD", REPO.parent / "shared/anchors/go-app/build.sh")
    )
    if not script.exists():
        sys.exit(f"bench: no Go build script at {script}; set GPUSCALE_GO_APP_BUILD or GO_APP")
    out = Path(os.environ.get("RES", "/tmp/gpuscale-bench/app_vs_go")) / "tutorial-go-app"
    out.parent.mkdir(parents=True, exist_ok=True)
    print(f"building the tutorial's Go program with {script}", file=sys.stderr)
    subprocess.run([str(script)], env={**os.environ, "OUT": str(out)}, check=True)
    return out


def servers(go_binary: Path, with_stacks: bool) -> list[Server]:
    python = sys.executable
    gpuscale = str(Path(python).parent / "gpuscale")
    if not Path(gpuscale).exists():
        gpuscale = shutil.which("gpuscale") or sys.exit("bench: gpuscale is not installed")
    found = [
        Server("go", [str(go_binary)], fixed_port=GO_PORT),
        Server("gpuscale-app", [gpuscale, "app", "--host", "127.0.0.1", "--port", "{port}"]),
    ]
    if with_stacks:
        candidates = "benchmarks.app_vs_go.candidates"
        found += [
            Server(
                "gpuscale-app-runtime-metrics",
                [gpuscale, "app", "--host", "127.0.0.1", "--port", "{port}", "--runtime-metrics"],
            ),
            Server("stdlib-http.server", [python, "-m", f"{candidates}.stdlib_server", "{port}"]),
            Server("asyncio+httptools", [python, "-m", f"{candidates}.protocol_server", "{port}"]),
            Server(
                "asyncio+httptools+uvloop",
                [python, "-m", f"{candidates}.protocol_server", "{port}", "uvloop"],
                module="uvloop",
            ),
            Server(
                "uvicorn+asgi",
                [python, "-m", f"{candidates}.uvicorn_server", "{port}"],
                module="uvicorn",
            ),
            Server(
                "granian-rsgi",
                [
                    python, "-m", "granian", "--interface", "rsgi", "--host", "127.0.0.1",
                    "--port", "{port}", "--workers", "1", "--log-level", "warning",
                    f"{candidates}.rsgi_app:app",
                ],
                module="granian",
            ),
        ]  # fmt: skip
    usable = []
    for server in found:
        if server.module and not module_available(server.module):
            print(f"skipping {server.name}: pip install {server.module}", file=sys.stderr)
            continue
        usable.append(server)
    return usable


def module_available(name: str) -> bool:
    probe = [sys.executable, "-c", f"import {name}"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} did not answer within {timeout}s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wrk(url: str, threads: str, conns: str, duration: str, out: Path | None) -> str:
    argv = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{duration}"]
    if out is not None:
        argv.append("--latency")
    done = subprocess.run([*argv, url], capture_output=True, text=True, check=True)
    if out is not None:
        out.write_text(done.stdout)
    return done.stdout


def measure(
    server: Server, rep: int, endpoint: str, settings: argparse.Namespace, res: Path
) -> Run:
    """Start ``server`` fresh, note its idle RSS, warm it up, load ``endpoint``, stop it."""
    if server.fixed_port is not None and not port_is_free(server.fixed_port):
        sys.exit(f"bench: port {server.fixed_port} is busy; {server.name} needs it. Stop it first.")
    port = server.fixed_port or free_port()
    base = f"http://127.0.0.1:{port}"
    path = ENDPOINTS[endpoint]
    log = (res / f"{server.name}_{endpoint}_{rep}.log").open("wb")
    proc = subprocess.Popen(
        server.command(port),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=REPO,
    )
    try:
        wait_ready(base + "/metrics", proc)
        time.sleep(1.0)
        idle = tree_rss_kb(proc.pid)
        wrk(base + path, settings.threads, settings.conns, settings.warm, None)
        cpu_before = tree_cpu_s(proc.pid)
        output = wrk(
            base + path,
            settings.threads,
            settings.conns,
            settings.dur,
            res / f"wrk_{server.name}_{endpoint}_{rep}.txt",
        )
        cpu = tree_cpu_s(proc.pid) - cpu_before
        rps, p50, p99, non2xx, errors = parse_wrk(output)
        served = rps * wrk_seconds(settings.dur)
        run = Run(
            server=server.name,
            rep=rep,
            endpoint=endpoint,
            req_per_s=rps,
            p50_ms=p50,
            p99_ms=p99,
            rss_kb=tree_rss_kb(proc.pid),
            idle_rss_kb=idle,
            requests_per_cpu_s=served / cpu if cpu > 0 else 0.0,
            non2xx=non2xx,
            socket_errors=errors,
        )
    finally:
        stop(proc)
        log.close()
    print(
        f"  rep {rep} {server.name:28s} {path:12s} {rps:9.0f} req/s  p50 {p50:7.3f} ms"
        f"  p99 {p99:7.3f} ms  rss {run.rss_kb / 1024:5.1f} MB  idle {idle / 1024:5.1f} MB",
        file=sys.stderr,
    )
    return run


def summarize(runs: list[Run], names: list[str], settings: argparse.Namespace) -> tuple[str, bool]:
    """The Markdown report and whether every target was met."""
    lines = [
        f"wrk -t{settings.threads} -c{settings.conns} -d{settings.dur} --latency, "
        f"{settings.reps} round(s), warm-up {settings.warm}; medians over rounds.",
        "",
        "| server | endpoint | req/s | p50 ms | p99 ms | req per CPU-s | RSS after MB "
        "| idle RSS MB | non-2xx |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in names:
        for endpoint, path in ENDPOINTS.items():
            rows = [r for r in runs if r.server == name and r.endpoint == endpoint]
            if not rows:
                continue
            lines.append(
                f"| {name} | GET {path} "
                f"| {statistics.median(r.req_per_s for r in rows):.0f} "
                f"| {statistics.median(r.p50_ms for r in rows):.3f} "
                f"| {statistics.median(r.p99_ms for r in rows):.3f} "
                f"| {statistics.median(r.requests_per_cpu_s for r in rows):.0f} "
                f"| {statistics.median(r.rss_kb for r in rows) / 1024:.1f} "
                f"| {statistics.median(r.idle_rss_kb for r in rows) / 1024:.1f} "
                f"| {sum(r.non2xx for r in rows)} |"
            )
    lines += [
        "",
        "Ratios to Go (median of per-round ratios; throughput and requests per CPU-second: "
        "higher is better; latency and memory: lower is better):",
        "",
        "| server | endpoint | req/s | p50 | p99 | req per CPU-s | RSS after |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    ok = True
    verdicts = []
    for name in names:
        if name == "go":
            continue
        for endpoint, path in ENDPOINTS.items():
            med = _median_ratios(runs, name, endpoint)
            if med is None:
                continue
            lines.append(
                f"| {name} | GET {path} | {med['req_per_s']:.2f}x | {med['p50_ms']:.2f}x "
                f"| {med['p99_ms']:.2f}x | {med['requests_per_cpu_s']:.2f}x "
                f"| {med['rss_kb']:.2f}x |"
            )
            if name == "gpuscale-app":
                met = med["req_per_s"] >= TARGETS[endpoint]
                ok &= met
                verdicts.append(
                    f"- GET {path} throughput {med['req_per_s']:.2f}x Go "
                    f"(target >= {TARGETS[endpoint]:.2f}x): {'met' if met else 'MISSED'}"
                )
    idle = [r.idle_rss_kb for r in runs if r.server == "gpuscale-app"]
    if idle:
        worst = max(idle)
        met = worst <= RSS_BUDGET_KB
        ok &= met
        verdicts.append(
            f"- idle RSS of gpuscale app (process tree, worst run) {worst / 1024:.1f} MB "
            f"(target <= 40 MB): {'met' if met else 'MISSED'}"
        )
    lines += ["", "Targets (issue 2):", "", *verdicts]
    return "\n".join(lines), ok


def _median_ratios(runs: list[Run], name: str, endpoint: str) -> dict[str, float] | None:
    """Median over rounds of ``name``'s value divided by Go's in the same round."""
    keys = ("req_per_s", "p50_ms", "p99_ms", "requests_per_cpu_s", "rss_kb")
    ratios: dict[str, list[float]] = {key: [] for key in keys}
    for rep in sorted({r.rep for r in runs}):
        mine = [r for r in runs if (r.server, r.endpoint, r.rep) == (name, endpoint, rep)]
        go = [r for r in runs if (r.server, r.endpoint, r.rep) == ("go", endpoint, rep)]
        if mine and go:
            for key in keys:
                base = float(getattr(go[0], key))
                ratios[key].append(float(getattr(mine[0], key)) / base if base else math.nan)
    if not ratios["req_per_s"]:
        return None
    return {key: statistics.median(values) for key, values in ratios.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stacks", action="store_true", help="also run the candidate stacks")
    parser.add_argument(
        "--only", default="", help="comma-separated server names to run (go is always run)"
    )
    parser.add_argument(
        "--endpoints", default=",".join(ENDPOINTS), help="comma-separated: metrics,set_value"
    )
    parser.add_argument("--reps", default=env_setting("REPS", "3"))
    parser.add_argument("--dur", default=env_setting("DUR", "10s"))
    parser.add_argument("--warm", default=env_setting("WARM", "3s"))
    parser.add_argument("--threads", default=env_setting("THREADS", "2"))
    parser.add_argument("--conns", default=env_setting("CONNS", "32"))
    settings = parser.parse_args()
    settings.reps = int(settings.reps)
    if shutil.which("wrk") is None:
        sys.exit("bench: wrk is not installed (apt-get install wrk)")
    res = Path(os.environ.get("RES", "/tmp/gpuscale-bench/app_vs_go"))
    res.mkdir(parents=True, exist_ok=True)
    plan = servers(build_go(), settings.stacks)
    if settings.only:
        wanted = {"go", *settings.only.split(",")}
        plan = [server for server in plan if server.name in wanted]
    endpoints = [name for name in settings.endpoints.split(",") if name]
    unknown = set(endpoints) - set(ENDPOINTS)
    if unknown:
        sys.exit(f"bench: unknown endpoint(s) {sorted(unknown)}; use {', '.join(ENDPOINTS)}")
    runs: list[Run] = []
    for rep in range(1, settings.reps + 1):
        for endpoint in endpoints:
            order = plan if rep % 2 else plan[::-1]
            runs.extend(measure(server, rep, endpoint, settings, res) for server in order)
    with (res / "runs.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(Run.__dataclass_fields__))
        writer.writerows([list(vars(run).values()) for run in runs])
    report, ok = summarize(runs, [s.name for s in plan], settings)
    (res / "summary.md").write_text(report + "\n")
    print(report)
    print(f"\nraw results: {res}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
