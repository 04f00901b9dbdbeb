"""``gpuscale._files``: outputs are written whole or not at all, with the mode a plain
``open()`` gives (the umask), except where a caller asks for less (kubeconfigs)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpuscale._files import stage, write_atomically
from gpuscale.cli.main import main


@pytest.fixture
def umask_022() -> object:
    previous = os.umask(0o022)
    yield None
    os.umask(previous)


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_a_written_file_has_the_umask_mode_and_nothing_is_left_beside_it(
    tmp_path: Path, umask: int, mode: int
) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    previous = os.umask(umask)
    try:
        write_atomically(target, b"new")
    finally:
        os.umask(previous)
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_private_mode_is_kept(tmp_path: Path, umask_022: object) -> None:
    target = tmp_path / "config"
    write_atomically(target, b"secret", mode=0o600)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "folder"
    target.mkdir()
    (target / "inside").write_text("x")
    with pytest.raises(IsADirectoryError):
        write_atomically(target, b"data")  # a non-empty directory cannot be replaced
    assert (target / "inside").read_text() == "x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


def test_a_staged_file_is_hidden_beside_its_target(tmp_path: Path) -> None:
    temporary = stage(tmp_path / "a.yaml", b"x: 1\n")
    assert temporary.parent == tmp_path
    assert temporary.name.startswith(".a.yaml.")
    assert temporary.read_bytes() == b"x: 1\n"


def test_init_writes_files_with_the_umask_mode(tmp_path: Path, umask_022: object) -> None:
    assert main(["init", str(tmp_path / "app")]) == 0
    written = [p for p in (tmp_path / "app").rglob("*") if p.is_file()]
    assert written
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {0o644}
    assert not list((tmp_path / "app").rglob(".*"))
