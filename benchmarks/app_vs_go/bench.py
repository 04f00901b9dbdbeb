#!/usr/bin/env python3
"""Benchmark ``gpuscale app`` against the tutorial's Go program under the same wrk load.

Usage (from the repository root, with the project's virtualenv):

    .venv/bin/python benchmarks/app_vs_go/bench.py              # Go vs gpuscale app
    .venv/bin/python benchmarks/app_vs_go/bench.py --stacks     # also the candidate stacks

What it does, following ``../shared/anchors/bench/bench.sh``:

1. builds the Go program with ``../shared/anchors/go-app/build.sh`` (Debian's Go; the
   script apt-installs it if missing) unless ``GO_APP`` names a built binary;
2. for each of ``REPS`` rounds, runs each server in turn (Go, gpuscale app, Go, ...),
   fresh, alone, on 127.0.0.1 (Go on its fixed :8080, checked free first; the others on
   a free port): idle RSS of its process tree one second after it answers, then for
   ``GET /metrics`` and ``GET /?value=123`` a ``WARM`` wrk warm-up and one
   ``wrk -t THREADS -c CONNS -d DUR --latency`` run;
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


def measure(server: Server, rep: int, settings: argparse.Namespace, res: Path) -> list[Run]:
    if server.fixed_port is not None and not port_is_free(server.fixed_port):
        sys.exit(f"bench: port {server.fixed_port} is busy; {server.name} needs it. Stop it first.")
    port = server.fixed_port or free_port()
    base = f"http://127.0.0.1:{port}"
    log = (res / f"{server.name}_{rep}.log").open("wb")
    proc = subprocess.Popen(
        server.command(port),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        cwd=REPO,
    )
    runs = []
    try:
        wait_ready(base + "/metrics", proc)
        time.sleep(1.0)
        idle = tree_rss_kb(proc.pid)
        for endpoint, path in ENDPOINTS.items():
            wrk(base + path, settings.threads, settings.conns, settings.warm, None)
            output = wrk(
                base + path,
                settings.threads,
                settings.conns,
                settings.dur,
                res / f"wrk_{server.name}_{endpoint}_{rep}.txt",
            )
            rps, p50, p99, non2xx, errors = parse_wrk(output)
            runs.append(
                Run(server.name, rep, endpoint, rps, p50, p99, tree_rss_kb(proc.pid), idle,
                    non2xx, errors)
            )  # fmt: skip
            print(
                f"  rep {rep} {server.name:26s} {path:12s} {rps:9.0f} req/s  p50 {p50:7.3f} ms"
                f"  p99 {p99:7.3f} ms  rss {runs[-1].rss_kb / 1024:5.1f} MB",
                file=sys.stderr,
            )
    finally:
        stop(proc)
        log.close()
    return runs


def summarize(runs: list[Run], names: list[str], settings: argparse.Namespace) -> tuple[str, bool]:
    """The Markdown report and whether every target was met."""
    lines = [
        f"wrk -t{settings.threads} -c{settings.conns} -d{settings.dur} --latency, "
        f"{settings.reps} round(s), warm-up {settings.warm}; medians over rounds.",
        "",
        "| server | endpoint | req/s | p50 ms | p99 ms | RSS after MB | idle RSS MB | non-2xx |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
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
                f"| {statistics.median(r.rss_kb for r in rows) / 1024:.1f} "
                f"| {statistics.median(r.idle_rss_kb for r in rows) / 1024:.1f} "
                f"| {sum(r.non2xx for r in rows)} |"
            )
    lines += [
        "",
        "Ratios to Go (median of per-round ratios; throughput: higher is better, latency "
        "and memory: lower is better):",
        "",
        "| server | endpoint | req/s ratio | p50 ratio | p99 ratio | RSS ratio |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    ok = True
    verdicts = []
    for name in names:
        if name == "go":
            continue
        for endpoint, path in ENDPOINTS.items():
            ratios: dict[str, list[float]] = {"rps": [], "p50": [], "p99": [], "rss": []}
            for rep in sorted({r.rep for r in runs}):
                mine = [r for r in runs if (r.server, r.endpoint, r.rep) == (name, endpoint, rep)]
                go = [r for r in runs if (r.server, r.endpoint, r.rep) == ("go", endpoint, rep)]
                if mine and go:
                    ratios["rps"].append(mine[0].req_per_s / go[0].req_per_s)
                    ratios["p50"].append(mine[0].p50_ms / go[0].p50_ms)
                    ratios["p99"].append(mine[0].p99_ms / go[0].p99_ms)
                    ratios["rss"].append(mine[0].rss_kb / go[0].rss_kb)
            if not ratios["rps"]:
                continue
            med = {key: statistics.median(values) for key, values in ratios.items()}
            lines.append(
                f"| {name} | GET {path} | {med['rps']:.2f}x "
                f"| {med['p50']:.2f}x | {med['p99']:.2f}x | {med['rss']:.2f}x |"
            )
            if name == "gpuscale-app":
                met = med["rps"] >= TARGETS[endpoint]
                ok &= met
                verdicts.append(
                    f"- GET {path} throughput {med['rps']:.2f}x Go "
                    f"(target >= {TARGETS[endpoint]:.2f}x): {'met' if met else 'MISSED'}"
                )
    idle = [r.idle_rss_kb for r in runs if r.server == "gpuscale-app"]
    if idle:
        worst = max(idle)
        met = worst <= RSS_BUDGET_KB
        ok &= met
        verdicts.append(
            f"- idle RSS of gpuscale app (process tree, worst round) {worst / 1024:.1f} MB "
            f"(target <= 40 MB): {'met' if met else 'MISSED'}"
        )
    lines += ["", "Targets (issue 2):", "", *verdicts]
    return "\n".join(lines), ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stacks", action="store_true", help="also run the candidate stacks")
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
    runs: list[Run] = []
    for rep in range(1, settings.reps + 1):
        for server in plan:
            runs.extend(measure(server, rep, settings, res))
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
