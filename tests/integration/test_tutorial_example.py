"""The program inside examples/tutorial's ConfigMap runs and keeps the tutorial's contract.

It is extracted from the YAML exactly as the pod would see it (the ConfigMap key mounted
as a file), started with this interpreter on a free loopback port, and driven over HTTP.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from gpuscale.inputs import read_manifests

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def tutorial_program(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    tmp_path = tmp_path_factory.mktemp("tutorial")
    (config,) = read_manifests(["examples/tutorial/resources.yaml"]).by_kind("ConfigMap")
    program = tmp_path / "main.py"
    program.write_text(config.body["data"]["main.py"])
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, str(program)],
        env={"PORT": str(port), "HOST": "127.0.0.1", "PATH": ""},
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 15
    try:
        while True:
            try:
                httpx.get(f"{base}/metrics", timeout=1)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    stderr = process.stderr.read().decode() if process.stderr else ""
                    pytest.fail(f"the tutorial program did not start: {stderr}")
                time.sleep(0.05)
        with httpx.Client(base_url=base, timeout=5) as client:
            yield client
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr:
            process.stderr.close()


def test_setting_the_gauge_shows_in_metrics(tutorial_program: httpx.Client) -> None:
    answer = tutorial_program.get("/?value=160")
    assert (answer.status_code, answer.text) == (200, "Hello, from the handler!")
    metrics = tutorial_program.get("/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    assert "# HELP my_custom_gauge This is a custom gauge metric" in metrics.text
    assert "my_custom_gauge 160.0" in metrics.text.splitlines()


@pytest.mark.parametrize("query", ["", "?value=", "?value=abc", "?other=1"])
def test_bad_values_answer_400_and_keep_the_gauge(
    tutorial_program: httpx.Client, query: str
) -> None:
    assert tutorial_program.get("/?value=42").status_code == 200
    answer = tutorial_program.get(f"/{query}")
    assert answer.status_code == 400
    assert answer.text == "Bad Request: invalid input\n"
    assert "my_custom_gauge 42.0" in tutorial_program.get("/metrics").text.splitlines()
