"""How fast the live commands start and how much load ``gpuscale load`` can send.

Run: ``.venv/bin/python benchmarks/live_load.py`` (about 30 s, loopback only).

1. Start-up: seconds to import the Kubernetes client and be ready to send, the way
   ``gpuscale.live.kube.Kube`` does it (the client's pool and auth, raw GETs) and the way
   the generated typed APIs would (``CoreV1Api`` and the four others gpuscale needs),
   each in a fresh interpreter.
2. Sender: the open-loop sender (:func:`gpuscale.live.load.run_load`, 32 requests on the
   wire at most) against an asyncio HTTP server in another process on loopback that
   answers at once, at rising rates for 5 s each; reported are the rate achieved, the
   worst lag behind schedule and latency percentiles. The port-forward through the API
   server is not included (it depends on the cluster).

Results are printed as a Markdown table for docs/commands/load.md.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import httpx

from gpuscale.live.load import RequestSpec, WallClock, constant_rate, percentile, run_load

STARTUP = {
    "gpuscale Kube (client pool + auth)": (
        "from gpuscale.live.kube import Kube\n"
        "from kubernetes import client\n"
        "Kube(client.ApiClient())\n"
    ),
    "generated typed APIs": (
        "from kubernetes import client\n"
        "a = client.ApiClient()\n"
        "client.CoreV1Api(a); client.AppsV1Api(a); client.AutoscalingV2Api(a)\n"
        "client.DiscoveryV1Api(a); client.CustomObjectsApi(a)\n"
    ),
}


def startup(code: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        began = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - began)
    return best


SERVER = """
import asyncio, sys
REPLY = b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nContent-Type: text/plain\\r\\n\\r\\nok"
async def handle(reader, writer):
    try:
        while True:
            await reader.readuntil(b"\\r\\n\\r\\n")
            writer.write(REPLY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()
async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


async def sender(rate: float, seconds: float, port: int) -> dict[str, float]:
    limits = httpx.Limits(max_connections=32, max_keepalive_connections=32)
    async with httpx.AsyncClient(limits=limits) as client:
        report = await run_load(
            constant_rate(rate, seconds),
            client=client,
            targets=lambda: [f"http://127.0.0.1:{port}"],
            request=RequestSpec(path="/"),
            clock=WallClock(),
            concurrency=32,
        )
    return {
        "asked": rate,
        "achieved": report.sent / report.duration,
        "ok": report.ok,
        "sent": report.sent,
        "lag": report.max_lag,
        "p50": (percentile(report.latencies, 50) or 0) * 1000,
        "p99": (percentile(report.latencies, 99) or 0) * 1000,
    }


def main() -> None:
    print("| start-up (fresh interpreter, best of 3) | seconds |")
    print("| --- | --- |")
    for name, code in STARTUP.items():
        print(f"| {name} | {startup(code):.2f} |")
    print()
    print("| asked req/s | achieved req/s | ok/sent | worst lag s | p50 ms | p99 ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    port = int(server.stdout.readline())
    try:
        rows = [asyncio.run(sender(rate, 5.0, port)) for rate in (50, 200, 500, 1000)]
    finally:
        server.terminate()
        server.wait()
    for r in rows:
        print(
            f"| {r['asked']:.0f} | {r['achieved']:.0f} | {r['ok']:.0f}/{r['sent']:.0f} | "
            f"{r['lag']:.3f} | {r['p50']:.1f} | {r['p99']:.1f} |"
        )


if __name__ == "__main__":
    main()
