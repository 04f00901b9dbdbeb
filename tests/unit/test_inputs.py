"""The file-reading edge, :mod:`gpuscale.inputs`: each bad path is a one-line error of the
kind the parser of that input raises, naming the path and a fix (manifests' own cases are
in ``tests/unit/manifests/test_loader.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gpuscale.errors import InputError, ManifestError, ProfileError
from gpuscale.inputs import read_manifests, read_profile, read_scenario, read_trace

READERS: dict[str, tuple[Callable[[Path], Any], type[InputError], str]] = {
    "profile": (read_profile, ProfileError, "no such file"),
    "scenario": (read_scenario, InputError, "no such scenario file"),
    "trace": (read_trace, InputError, "no such trace file"),
}


@pytest.mark.parametrize("reader", sorted(READERS))
@pytest.mark.parametrize(
    ("setup", "words"),
    [("missing", None), ("directory", "is a directory"), ("latin1", "not UTF-8 text (byte 9)")],
)
def test_bad_paths_are_one_line_errors(
    tmp_path: Path, reader: str, setup: str, words: str | None
) -> None:
    read, error, missing_words = READERS[reader]
    target = tmp_path / "input"
    if setup == "directory":
        target.mkdir()
    elif setup == "latin1":
        target.write_bytes("name: Caf\xe9\n".encode("latin-1"))
    with pytest.raises(error) as caught:
        read(target)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{target}: {words or missing_words}")
    assert "(fix: " in message


def test_a_good_profile_is_read_and_named_in_its_errors(tmp_path: Path) -> None:
    good = tmp_path / "gpuscale.yaml"
    good.write_text("prometheus:\n  scrape_interval: 15s\n", encoding="utf-8")
    assert read_profile(good).prometheus.scrape_interval == 15.0
    bad = tmp_path / "bad.yaml"
    bad.write_text("prometheus:\n  scrape_interval: soon\n", encoding="utf-8")
    with pytest.raises(ProfileError, match=rf"^{bad}:2"):
        read_profile(bad)


KUSTOMIZATION = """\
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - app.yaml
"""
SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"


@pytest.mark.parametrize("name", ["kustomization.yaml", "kustomization.yml"])
def test_a_directory_s_kustomization_is_not_read_as_a_manifest(tmp_path: Path, name: str) -> None:
    # kustomize's build file lists manifests (kubectl's kustomize, `kustomization.yaml`);
    # linting it as one made `kind: Kustomization` a schema error.
    (tmp_path / "nested").mkdir()
    (tmp_path / "app.yaml").write_text(SERVICE)
    (tmp_path / name).write_text(KUSTOMIZATION)
    (tmp_path / "nested" / name).write_text(KUSTOMIZATION.replace("- app.yaml", "- ../app.yaml"))
    assert [m.kind for m in read_manifests([tmp_path])] == ["Service"]
    # Named explicitly, it is read like any file.
    assert [m.kind for m in read_manifests([tmp_path / name])] == ["Kustomization"]


def test_a_directory_with_only_a_kustomization_says_how_to_lint_it(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text(KUSTOMIZATION)
    with pytest.raises(ManifestError) as caught:
        read_manifests([tmp_path])
    message = str(caught.value)
    assert "besides its kustomization.yaml" in message
    assert "kustomize build DIR | gpuscale lint -" in message


@pytest.mark.parametrize(
    "read",
    [
        lambda path: read_manifests([path]),
        read_profile,
        read_scenario,
        read_trace,
    ],
    ids=["manifests", "profile", "scenario", "trace"],
)
def test_a_symlink_loop_is_named_as_one(tmp_path: Path, read: Callable[[Path], Any]) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.symlink_to(second)
    second.symlink_to(first)
    with pytest.raises(InputError) as caught:
        read(first)
    assert "symlink loop" in caught.value.message
    assert caught.value.where == str(first)
