"""How fast manifests load, validate and turn into typed views (what lint and the simulator
pay before their own work). Target for lint (issue 6): 1,000 manifests in <= 2 s, rules
included, so loading should take a fraction of that.

Run: .venv/bin/python benchmarks/manifests_load.py [--copies 250]
It writes N copies of examples/tutorial-fixed (4 objects each) into a temporary directory,
one file per copy, then times each step separately (best of 3) and prints one line each.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gpuscale.inputs import read_manifests
from gpuscale.manifests import Service, ServiceMonitor, Workload, validate

SOURCE = Path(__file__).resolve().parent.parent / "examples" / "tutorial-fixed" / "resources.yaml"


def _best(step: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """Best wall and best CPU seconds of ``repeat`` runs (CPU time is steadier on a busy
    machine)."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=250)
    args = parser.parse_args()
    text = SOURCE.read_text()
    with tempfile.TemporaryDirectory() as folder:
        for index in range(args.copies):
            Path(folder, f"set-{index:04d}.yaml").write_text(
                text.replace("go-from-configmap", f"app-{index}")
            )
        loaded = read_manifests([folder])
        count = len(loaded)
        validate(loaded)  # warm the schema caches once, as a long-lived process would

        def views() -> None:
            for manifest in loaded:
                if manifest.kind == "Deployment":
                    Workload.from_manifest(manifest)
                elif manifest.kind == "Service":
                    Service.from_manifest(manifest)
                elif manifest.kind == "ServiceMonitor":
                    ServiceMonitor.from_manifest(manifest)

        load = _best(lambda: read_manifests([folder]))
        check = _best(lambda: validate(loaded))
        view = _best(views)
    print(f"manifests: {count} in {args.copies} files (best of 3; wall / CPU seconds)")
    for name, (wall, cpu) in (("load", load), ("validate", check), ("views", view)):
        print(f"{name + ':':<10} {wall:.3f} s / {cpu:.3f} s  ({count / cpu:,.0f} manifests/s CPU)")


if __name__ == "__main__":
    main()
