"""The Dockerfile's entrypoint, run as a real process outside a container.

Docker has no engine here, so this runs what the image would: the ``ENTRYPOINT`` with
the Dockerfile's ``ENV`` (its ``PATH`` pointed at this environment's ``gpuscale``), plus
``--host 127.0.0.1 --port 0`` as a ``docker run ... IMAGE --port N`` would append. It
checks the tutorial's contract, that the command became the lean server process (same
PID, nothing else running), and the idle memory budget of issue 2 (40 MB).

The image installs only the dependencies ``gpuscale._app_requirements`` names (and what
they need); here every other dependency of gpuscale is made unimportable, through a
``sitecustomize`` on ``PYTHONPATH`` that both the CLI process and the server it becomes
load, so an import the image could not satisfy fails these tests.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path

import pytest

from gpuscale._app_requirements import APP_DISTRIBUTIONS
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


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match is not None, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _core(distribution: str) -> set[str]:
    return {
        _name(r)
        for r in metadata.requires(distribution) or []
        if not re.search(r"\bextra\s*==", r.partition(";")[2])
    }


def _closure(names: Iterable[str]) -> set[str]:
    """``names`` and everything they require, transitively (markers not evaluated)."""
    seen: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            pending.extend(_core(name))
        except metadata.PackageNotFoundError:
            continue
    return seen


def modules_not_in_the_image() -> set[str]:
    """Top-level modules of gpuscale's dependencies that the image does not install."""
    absent = _core("gpuscale") - _closure(APP_DISTRIBUTIONS)
    return {
        module
        for module, distributions in metadata.packages_distributions().items()
        if distributions and all(_name(d) in absent for d in distributions)
    }


_BLOCKER = """import sys

BLOCKED = {blocked!r}


class _NotInTheImage:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{{name}} is not installed in the gpuscale app image")
        return None


sys.meta_path.insert(0, _NotInTheImage())
"""


@pytest.fixture(scope="module")
def image_pythonpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A PYTHONPATH whose sitecustomize refuses every module the image lacks."""
    blocked = modules_not_in_the_image()
    assert {"numpy", "matplotlib", "kubernetes", "pydo", "jsonschema"} <= blocked
    folder = tmp_path_factory.mktemp("image-site")
    (folder / "sitecustomize.py").write_text(_BLOCKER.format(blocked=sorted(blocked)))
    env = {**os.environ, "PYTHONPATH": str(folder)}
    refused = subprocess.run(
        [sys.executable, "-c", "import numpy"], check=False, env=env, capture_output=True, text=True
    )
    assert "not installed in the gpuscale app image" in refused.stderr
    return str(folder)


@pytest.fixture
def entrypoint_app(image_pythonpath: str) -> Iterator[AppProcess]:
    last = stages(DOCKERFILE.read_text())[-1]
    [entrypoint] = last.all("ENTRYPOINT")
    argv = exec_form(entrypoint)
    env = {k: v for k, v in os.environ.items() if k != "GPUSCALE_SETTER_TOKEN"}
    env["PYTHONPATH"] = image_pythonpath
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
