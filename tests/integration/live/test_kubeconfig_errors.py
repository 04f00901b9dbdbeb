"""A broken kubeconfig is a one-line error naming the file or context and the fix, exit
2, for every live command: real files on disk, read before anything is contacted.

The rules are kubectl's (``k8s.io/client-go/tools/clientcmd/loader.go``): ``--kubeconfig``
must exist; ``$KUBECONFIG`` lists files joined with ``:``, missing ones skipped, the first
to set a context or ``current-context`` winning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.cli.main import main
from gpuscale.live.kubeconfig import choose_kubeconfig

pytestmark = pytest.mark.integration

GOOD = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:9"}
users:
- name: u
  user: {token: secret-token-value}
contexts:
- name: do-nyc2-demo
  context: {cluster: c, user: u, namespace: gpu-demo}
- name: other
  context: {cluster: c, user: u}
current-context: do-nyc2-demo
"""

COMMANDS = {
    "deploy": ["deploy", "examples/tutorial-fixed"],
    "verify": ["verify", "examples/tutorial-fixed"],
    "watch": ["watch", "--once"],
    "load": ["load", "--value", "160"],
}


def _cases(tmp: Path) -> dict[str, tuple[list[str], dict[str, str], list[str]]]:
    """name -> (extra flags, environment, words the one-line error must contain)."""
    bad_yaml = tmp / "bad-yaml"
    bad_yaml.write_text("clusters: [\n  - name: c\ncontexts: {\n")
    no_current = tmp / "no-current"
    no_current.write_text(GOOD.replace("current-context: do-nyc2-demo\n", ""))
    dangling = tmp / "dangling"
    dangling.write_text(GOOD.replace("current-context: do-nyc2-demo", "current-context: gone"))
    good = tmp / "good"
    good.write_text(GOOD)
    control = tmp / "control"
    control.write_text("apiVersion: v1\nkind: Con\x07fig\n")
    empty = tmp / "empty"
    empty.write_text("# nothing here\n")
    other = tmp / "other-yaml"
    other.write_text("name: gpu-cluster\nregion: nyc2\n")
    listy = tmp / "listy"
    listy.write_text("- just\n- a list\n")
    missing = tmp / "nope" / "config"
    no_cluster = tmp / "no-cluster"
    no_cluster.write_text(
        GOOD.replace("{cluster: c, user: u, namespace", "{cluster: x, user: u, namespace")
    )
    no_server = tmp / "no-server"
    no_server.write_text(GOOD.replace('{server: "https://127.0.0.1:9"}', "{}"))
    plugin = tmp / "plugin"
    plugin.write_text(
        GOOD.replace(
            "{token: secret-token-value}",
            "{exec: {apiVersion: client.authentication.k8s.io/v1beta1, "
            "command: doctl-not-installed, args: [kubernetes]}}",
        )
    )
    return {
        "missing --kubeconfig": (["--kubeconfig", str(missing)], {}, [str(missing), "not exist"]),
        "KUBECONFIG names no file": (
            [],
            {"KUBECONFIG": str(missing)},
            [str(missing), "KUBECONFIG"],
        ),
        "bad YAML": ([], {"KUBECONFIG": str(bad_yaml)}, [f"{bad_yaml}:", "not valid YAML"]),
        "control character": (
            [],
            {"KUBECONFIG": str(control)},
            [f"{control}:2:", "not valid YAML", "#x0007"],
        ),
        "empty file": ([], {"KUBECONFIG": str(empty)}, [str(empty), "kubeconfig is empty"]),
        "YAML but not a kubeconfig": (
            ["--kubeconfig", str(other)],
            {},
            [str(other), "not a kubeconfig", "name, region"],
        ),
        "not a mapping": (["--kubeconfig", str(listy)], {}, [str(listy), "not a mapping"]),
        "unknown --context": (
            ["--context", "typo"],
            {"KUBECONFIG": str(good)},
            ["'typo'", str(good), "do-nyc2-demo, other"],
        ),
        "no current-context": (
            [],
            {"KUBECONFIG": str(no_current)},
            ["no current-context", str(no_current), "--context", "use-context"],
        ),
        "dangling current-context": ([], {"KUBECONFIG": str(dangling)}, ["'gone'", str(dangling)]),
        "context names no cluster": ([], {"KUBECONFIG": str(no_cluster)}, ["cluster 'x'"]),
        "cluster has no server": ([], {"KUBECONFIG": str(no_server)}, ["no https:// server"]),
        "credential plugin missing": (
            [],
            {"KUBECONFIG": str(plugin)},
            ["'doctl-not-installed'", "not on PATH", "gpuscale cluster kubeconfig"],
        ),
    }


CASE_NAMES = [
    "missing --kubeconfig",
    "KUBECONFIG names no file",
    "bad YAML",
    "control character",
    "empty file",
    "YAML but not a kubeconfig",
    "not a mapping",
    "unknown --context",
    "no current-context",
    "dangling current-context",
    "context names no cluster",
    "cluster has no server",
    "credential plugin missing",
]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", CASE_NAMES)
def test_a_broken_kubeconfig_is_one_line_and_exit_2(
    command: str,
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    flags, env, words = _cases(tmp_path)[case]
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code = main([*COMMANDS[command], *flags])
    out = capsys.readouterr()
    assert code == 2, out.err
    lines = out.err.strip().splitlines()
    assert len(lines) == 1, out.err
    assert lines[0].startswith("gpuscale: error: ")
    assert "(fix: " in lines[0]
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in out.err
    assert "secret-token-value" not in out.err + out.out


def test_kubeconfig_lists_merge_as_kubectl_does(tmp_path: Path) -> None:
    first = tmp_path / "a"
    first.write_text(GOOD.replace("current-context: do-nyc2-demo", "current-context: other"))
    second = tmp_path / "b"
    second.write_text(GOOD.replace("namespace: gpu-demo", "namespace: elsewhere"))
    env = {"KUBECONFIG": f"{tmp_path / 'missing'}:{first}:{second}"}
    choice = choose_kubeconfig(environ=env, home=tmp_path)
    assert choice.files == (first, second)
    assert (choice.context, choice.namespace) == ("other", "default")
    chosen = choose_kubeconfig(context="do-nyc2-demo", environ=env, home=tmp_path)
    assert chosen.namespace == "gpu-demo"  # the first file to name the context wins


def test_the_default_file_is_home_kube_config(tmp_path: Path) -> None:
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text(GOOD)
    choice = choose_kubeconfig(environ={}, home=tmp_path)
    assert choice.path == str(tmp_path / ".kube" / "config")
    assert (choice.context, choice.namespace) == ("do-nyc2-demo", "gpu-demo")
