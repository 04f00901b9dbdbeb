"""The Dockerfile's entrypoint, run as a real process outside a container.

Docker has no engine here, so this runs what the image would: the ``ENTRYPOINT`` with
the Dockerfile's ``ENV`` (its ``PATH`` pointed at this environment's ``gpuscale``), plus
``--host 127.0.0.1 --port 0`` as a ``docker run ... IMAGE --port N`` would append. It
checks the tutorial's contract, that the command became the lean server process (same
PID, nothing else running), and the idle memory budget of issue 2 (40 MB).
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.app.conftest import AppProcess, gauge_from_metrics, gpuscale_command
from tests.unit.app.dockerfile import DOCKERFILE, exec_form, stages

pytestmark = pytest.mark.integration

RSS_BUDGET_KB = 40 * 1024


def tree_rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants, in KiB."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        status = Path(f"/proc/{current}/status").read_text()
        total += int(status.split("VmRSS:")[1].split()[0])
        for task in Path(f"/proc/{current}/task").iterdir():
            pending.extend(int(child) for child in (task / "children").read_text().split())
    return total


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return found


@pytest.fixture
def entrypoint_app() -> Iterator[AppProcess]:
    last = stages(DOCKERFILE.read_text())[-1]
    [entrypoint] = last.all("ENTRYPOINT")
    argv = exec_form(entrypoint)
    env = {k: v for k, v in os.environ.items() if k != "GPUSCALE_SETTER_TOKEN"}
    for key, value in last.env().items():
        here = str(Path(gpuscale_command()[0]).parent)
        env[key] = (
            value.replace("/opt/gpuscale/bin", here).replace("$PATH", env["PATH"])
            if key == "PATH"
            else value
        )
    program = shutil.which(argv[0], path=env["PATH"])
    assert program, f"{argv[0]} is not on the Dockerfile's PATH"
    app = AppProcess([program, *argv[1:], "--host", "127.0.0.1", "--port", "0"], env=env)
    try:
        yield app.wait_listening()
    finally:
        app.stop()


def test_entrypoint_serves_the_tutorial_contract(entrypoint_app: AppProcess) -> None:
    app = entrypoint_app
    status, _, body = app.request("/?value=160")
    assert (status, body) == (200, b"Hello, from the handler!")
    assert app.request("/?value=oops")[2] == b"Bad Request: invalid input\n"
    assert gauge_from_metrics(app.request("/metrics")[2]) == 160.0
    assert app.request("/readyz")[0] == 200


def test_entrypoint_becomes_the_lean_server_within_budget(entrypoint_app: AppProcess) -> None:
    app = entrypoint_app
    for value in range(50):
        assert app.request(f"/?value={value}")[0] == 200
        assert app.request("/metrics")[0] == 200
    pid = app.proc.pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"gpuscale.app" in cmdline, "gpuscale app should exec the lean server in place"
    assert children(pid) == []
    rss = tree_rss_kb(pid)
    assert rss <= RSS_BUDGET_KB, f"idle RSS {rss} KiB is over the 40 MB budget"


def test_entrypoint_stops_on_the_dockerfile_stop_signal(entrypoint_app: AppProcess) -> None:
    [stop] = stages(DOCKERFILE.read_text())[-1].all("STOPSIGNAL")
    entrypoint_app.signal(getattr(signal, stop))
    assert entrypoint_app.wait_exit() == 0
