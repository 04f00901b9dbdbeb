"""The DigitalOcean calls against the real API (``DIGITALOCEAN_ACCESS_TOKEN`` set), read-only.

Skipped without the token (``tests/conftest.py``). Reads the DOKS options, the sizes
and the clusters; checks the real answers have the fields gpuscale relies on, that a
wrong token maps to the 401 message, and that the token never shows in output or logs.
Optional: ``GPUSCALE_TEST_PROFILE`` (a profile whose cluster exists) to run
``gpuscale cluster status`` for real. Nothing is created, changed or deleted.
"""

from __future__ import annotations

import logging
import os

import pytest

from gpuscale.cli.main import main
from gpuscale.cloud import api
from gpuscale.cloud.client import DigitalOcean, make_client, read_token
from gpuscale.cloud.ops import fetch_sizes
from gpuscale.cloud.plan import cluster_status
from gpuscale.errors import UnavailableError

pytestmark = pytest.mark.digitalocean


@pytest.fixture(scope="module")
def token() -> str:
    return read_token(None)


@pytest.fixture(scope="module")
def do(token: str) -> DigitalOcean:
    return DigitalOcean(make_client(token))


def test_options_list_regions_versions_and_sizes(do: DigitalOcean) -> None:
    options = (do.send(api.list_options()).body or {})["options"]
    assert {"slug", "name"} <= set(options["regions"][0])
    assert {"slug", "kubernetes_version"} <= set(options["versions"][0])
    assert options["sizes"]


def test_sizes_have_hourly_prices_and_regions(do: DigitalOcean) -> None:
    sizes = fetch_sizes(do)
    assert len(sizes) > 20
    for size in sizes:
        assert isinstance(size["price_hourly"], int | float)
        assert isinstance(size["regions"], list)


def test_clusters_parse(do: DigitalOcean) -> None:
    for cluster in do.pages(api.list_clusters, "kubernetes_clusters"):
        status = cluster_status(cluster)
        assert status.id
        assert status.state


def test_a_wrong_token_is_the_401_message() -> None:
    wrong = DigitalOcean(make_client("dop_v1_" + "0" * 64, retry_total=0))
    with pytest.raises(UnavailableError, match="rejected the token"):
        wrong.send(api.list_options())


def test_the_token_never_appears_in_output_or_logs(
    token: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    profile = os.environ.get("GPUSCALE_TEST_PROFILE")
    if profile:
        assert main(["cluster", "status", "--profile", profile, "-o", "json"]) == 0
    else:
        DigitalOcean(make_client(token)).send(api.list_options())
    captured = capsys.readouterr()
    assert token not in captured.out + captured.err + caplog.text
