"""Loading manifests: lines of objects and keys, documents, directories, stdin, List kinds,
templated values, comments, and one-line errors for what is not YAML."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from gpuscale.errors import ManifestError
from gpuscale.inputs import read_manifests
from gpuscale.manifests import Location, ManifestSet, load_text

TWO_DOCS = textwrap.dedent(
    """\
    # leading comment
    apiVersion: v1
    kind: Service
    metadata:
      name: web   # gpuscale: ignore[servicemonitor-selects-nothing]
      namespace: apps
      labels: {app: web, tier: "front # not a comment"}
    spec:
      ports:
        - name: http
          port: 80
        - name: metrics
          port: 9090
    ---
    ---
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      replicas: 2
    """
)


def test_objects_and_keys_keep_their_lines() -> None:
    service, deployment = load_text(TWO_DOCS, "set.yaml")
    assert (service.kind, service.api_version, service.name, service.namespace) == (
        "Service",
        "v1",
        "web",
        "apps",
    )
    assert service.source == Location("set.yaml", 2, 1)
    assert service.line_of(("metadata", "name")) == Location("set.yaml", 5, 3)
    assert service.line_of(("spec", "ports", 1)).line == 12
    assert service.line_of(("spec", "ports", 1, "port")).line == 13
    assert service.line_of(("metadata", "labels", "tier")).line == 7
    assert deployment.namespace is None
    assert deployment.source.line == 16
    assert deployment.line_of(("spec", "replicas")).line == 21
    assert deployment.body["spec"]["replicas"] == 2


def test_line_of_a_missing_key_falls_back_to_its_nearest_ancestor() -> None:
    _, deployment = load_text(TWO_DOCS, "set.yaml")
    assert deployment.line_of(("spec", "template", "spec", "containers")).line == 20
    assert deployment.line_of(("status",)) == deployment.source


def test_comments_and_suppressions() -> None:
    service, _ = load_text(TWO_DOCS, "set.yaml")
    assert service.comments[1] == "leading comment"
    assert 7 not in service.comments  # the '#' is inside a quoted scalar
    assert service.ignored_at(("metadata", "name")) == {"servicemonitor-selects-nothing"}
    assert service.ignored_at(("metadata", "namespace")) == {"servicemonitor-selects-nothing"}
    assert service.ignored_at(("spec",)) == frozenset()


def test_comment_on_the_line_above_counts_and_block_scalars_hold_no_comments() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: program
        data:
          # gpuscale: ignore[a, b]
          main.py: |
            # gpuscale: ignore[not-a-comment]
            print("hello")
        """
    )
    (config,) = load_text(text, "cm.yaml")
    assert config.ignored_at(("data", "main.py")) == {"a", "b"}
    assert 8 not in config.comments
    assert config.body["data"]["main.py"].startswith("# gpuscale: ignore[not-a-comment]")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("replicas: ${replicas}", "${replicas}"),
        ("replicas: <replicas>", "<replicas>"),
        ("replicas: {{ .Values.replicas }}", "{{ .Values.replicas }}"),
        ('replicas: "{{ .Values.replicas }}"', "{{ .Values.replicas }}"),
        ("replicas: {{ .Values.replicas | default 1 }}", "{{ .Values.replicas | default 1 }}"),
    ],
)
def test_templated_values_load_as_their_text(text: str, value: str) -> None:
    (manifest,) = load_text(f"apiVersion: apps/v1\nkind: Deployment\nspec:\n  {text}\n", "t.yaml")
    assert manifest.body["spec"]["replicas"] == value
    assert manifest.line_of(("spec", "replicas")).line == 4


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        ("yes", True),  # go-yaml v2 (YAML 1.1), as Kubernetes' decoder reads it
        ("on", True),
        ("y", True),
        ("Off", False),
        ("0755", 493),
        ("1e3", 1000.0),
        ("-.5", -0.5),
        ("+.inf", float("inf")),
        ("1.2.3", "1.2.3"),
        ("!!str 12", "12"),
        ("!!int '12'", 12),
        ("false", False),
        ("0x10", 16),
        ("1_000", 1000),
        ("1.5", 1.5),
        ("'80'", "80"),
        ("~", None),
        ("2001-12-14", "2001-12-14"),
        ("100m", "100m"),
    ],
)
def test_scalars_resolve_as_kubernetes_reads_them(scalar: str, value: object) -> None:
    (manifest,) = load_text(f"kind: X\nv: {scalar}\n", "s.yaml")
    assert manifest.body["v"] == value


def test_list_kinds_are_flattened_with_lines() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: List
        items:
          - apiVersion: v1
            kind: Service
            metadata:
              name: a
          - apiVersion: v1
            kind: Service
            metadata:
              name: b
        """
    )
    first, second = load_text(text, "list.yaml")
    assert [first.name, second.name] == ["a", "b"]
    assert second.source.line == 8
    assert second.line_of(("metadata", "name")).line == 11


def test_merge_keys_are_applied() -> None:
    text = "kind: X\nbase: &b {a: 1, c: 3}\nv:\n  <<: *b\n  a: 2\n"
    (manifest,) = load_text(text, "m.yaml")
    assert manifest.body["v"] == {"a": 2, "c": 3}


def test_aliases_expand_like_go_yaml() -> None:
    text = textwrap.dedent(
        """\
        kind: Deployment
        metadata:
          labels: &labels {app: web, tier: gpu}
        spec:
          selector: {matchLabels: *labels}
          template:
            metadata: {labels: *labels}
            spec:
              containers:
                - &c {name: a, image: x}
                - *c
        """
    )
    (manifest,) = load_text(text, "aliases.yaml")
    spec = manifest.body["spec"]
    assert spec["selector"]["matchLabels"] == {"app": "web", "tier": "gpu"}
    assert spec["template"]["metadata"]["labels"] == spec["selector"]["matchLabels"]
    assert spec["template"]["spec"]["containers"] == [{"name": "a", "image": "x"}] * 2
    spec["selector"]["matchLabels"]["app"] = "changed"  # each use is its own copy
    assert manifest.body["metadata"]["labels"]["app"] == "web"


def _laughs(levels: int, width: int = 10) -> str:
    """The "billion laughs" document: each anchor repeats the one before ``width`` times."""
    rows = ["kind: ConfigMap", "data:", f"  l0: &l0 [{', '.join(['lol'] * width)}]"]
    rows += [f"  l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * width)}]" for n in range(1, levels + 1)]
    return "\n".join(rows) + "\n"


def test_many_small_aliases_stay_under_go_yamls_limit() -> None:
    """Three levels decode about 1,360 values, 1,330 of them through aliases: 97.8 %,
    under go-yaml's 99 %, so this loads (and a fourth level would not)."""
    (manifest,) = load_text(_laughs(2), "ok.yaml")
    assert len(manifest.body["data"]["l2"]) == 10
    assert manifest.body["data"]["l2"][9][9] == ["lol"] * 10
    with pytest.raises(ManifestError, match="excessive aliasing"):
        load_text(_laughs(3), "bad.yaml")


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("a: &a [*a]\n", 1, "contain itself"),
        ("kind: X\ncluster: &a {x: *a}\n", 2, "contain itself"),
        ("kind: X\nspec:\n  a: &a\n    b:\n      - 1\n      - c: *a\n", 6, "contain itself"),
        ("kind: X\nv: &v\n  <<: *v\n", 2, "contain itself"),
        (_laughs(7), 6, "excessive aliasing"),
        ("kind: X\nv: " + "[" * 5000 + "]" * 5000 + "\n", 1, "nested too deeply"),
    ],
    ids=["self-list", "self-map", "nested", "merge", "billion-laughs", "deep"],
)
def test_runaway_aliases_are_one_line_errors(text: str, line: int, words: str) -> None:
    """go-yaml decode.go: ``anchor '%s' value contains itself`` and ``document contains
    excessive aliasing`` (allowedAliasRatio); the line is the key that holds the alias."""
    with pytest.raises(ManifestError) as caught:
        load_text(text, "bad.yaml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"bad.yaml:{line}: "), message
    assert words in message
    assert "fix:" in message


def test_alias_limit_follows_go_yamls_ratio() -> None:
    """go-yaml ``allowedAliasRatio``: 99 % up to 400,000 nodes, 10 % from 4,000,000, linear
    in between."""
    from gpuscale.manifests._loader import _allowed_alias_ratio

    assert _allowed_alias_ratio(1_000) == 0.99
    assert _allowed_alias_ratio(400_000) == 0.99
    assert _allowed_alias_ratio(2_200_000) == pytest.approx(0.545)
    assert _allowed_alias_ratio(4_000_000) == 0.10
    assert _allowed_alias_ratio(40_000_000) == 0.10


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("kind: X\nspec:\n  a: b: c\n", 3, "mapping values are not allowed"),
        ("kind: X\nspec:\n  - [1, 2\n", 4, "not valid YAML"),
        ("kind: X\n{{- if .Values.enabled }}\nspec: {}\n", 3, "helm template"),
        ("kind: X\nspec:\n\tkey: 1\n", 3, "tabs"),
        ("kind: X\na: 1\na: 2\n", 3, "duplicate key 'a' (first at line 2)"),
        ("- a\n- b\n", 1, "expected a Kubernetes object"),
        ("kind: X\nv: *nowhere\n", 2, "undefined alias"),
    ],
)
def test_bad_yaml_is_a_one_line_error_with_file_and_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ManifestError) as caught:
        load_text(text, "bad.yaml")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"bad.yaml:{line}: ")
    assert words.lower() in message.lower()
    assert "fix:" in message


def test_directories_are_read_recursively_in_order_skipping_the_profile(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    (tmp_path / "a.yaml").write_text("kind: A\nmetadata: {name: a}\n")
    (tmp_path / "b" / "c.yml").write_text("kind: C\nmetadata: {name: c}\n---\nkind: D\n")
    (tmp_path / "b" / "notes.txt").write_text("not yaml: [")
    (tmp_path / ".hidden" / "x.yaml").write_text("kind: Hidden\n")
    (tmp_path / "gpuscale.yaml").write_text("cluster: {provider: doks}\n")
    loaded = read_manifests([tmp_path])
    assert [m.kind for m in loaded] == ["A", "C", "D"]
    assert loaded.files == (str(tmp_path / "a.yaml"), str(tmp_path / "b" / "c.yml"))


def test_stdin_and_files_in_the_order_given(tmp_path: Path) -> None:
    file = tmp_path / "one.yaml"
    file.write_text("kind: One\n")
    loaded = read_manifests(["-", file], stdin=io.StringIO("kind: FromStdin\n"))
    assert [m.kind for m in loaded] == ["FromStdin", "One"]
    assert loaded[0].file == "<stdin>"


@pytest.mark.parametrize(
    ("setup", "words"),
    [
        ("missing", "no such file or directory"),
        ("empty-dir", "holds no *.yaml"),
        ("latin1", "not UTF-8"),
    ],
)
def test_bad_paths_are_one_line_errors(tmp_path: Path, setup: str, words: str) -> None:
    target = tmp_path / "target"
    if setup == "empty-dir":
        target.mkdir()
    elif setup == "latin1":
        target.write_bytes("kind: Caf\xe9\n".encode("latin-1"))
    with pytest.raises(ManifestError, match="fix:") as caught:
        read_manifests([target])
    assert words in str(caught.value)
    assert str(target) in str(caught.value)


def test_stdin_without_a_stream_is_an_error() -> None:
    with pytest.raises(ManifestError, match="standard input"):
        read_manifests(["-"])


def test_manifest_set_lookups() -> None:
    loaded = ManifestSet(load_text(TWO_DOCS, "set.yaml"))
    assert [m.kind for m in loaded.by_kind("Deployment", "Service")] == ["Service", "Deployment"]
    assert loaded.get("Service", "apps", "web") is loaded[0]
    assert loaded.get("Service", None, "web") is None
    assert loaded.find("Deployment", "web", "default") is loaded[1]
    assert loaded.find("Deployment", "web", "apps", default="apps") is loaded[1]
    assert loaded.find("Deployment", "web", "apps") is None
    assert len(loaded + loaded) == 4
    assert loaded[0].ref == "Service/apps/web"
    assert loaded[1].ref == "Deployment/web"


def test_missing_kind_and_name_load_as_empty() -> None:
    (manifest,) = load_text("metadata: {namespace: ''}\nspec: {}\n", "x.yaml")
    assert (manifest.kind, manifest.api_version, manifest.name, manifest.namespace) == (
        "",
        "",
        "",
        None,
    )


def test_duplicates_are_the_same_group_kind_namespace_and_name() -> None:
    """What ``kubectl apply`` treats as one object: API group (not version), kind, the
    namespace it lands in, name (lint's ``duplicate-object`` reads it the same way)."""
    first = load_text(
        "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: a}\n",
        "one.yaml",
    )
    second = load_text(
        "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n"
        "metadata: {name: h, namespace: default}\n"
        "---\napiVersion: v1\nkind: Service\nmetadata: {name: s, namespace: b}\n"
        "---\nkind: ConfigMap\nmetadata: {}\n---\nkind: ConfigMap\nmetadata: {}\n",
        "two.yaml",
    )
    found = ManifestSet(first + second).duplicates()
    assert [(a.source, b.source) for a, b in found] == [
        (Location("one.yaml", 1), Location("two.yaml", 1))
    ]
    assert ManifestSet(first + second).duplicates(default="other") == ()
    assert ManifestSet(first + first).duplicates() == (), "one file read twice"


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        ("apiVersion: v1\nkind: List\nitems: 3\n", "l.yaml:3", "items must be a list"),
        ("apiVersion: v1\nkind: List\nitems: {a: 1}\n", "l.yaml:3", "got a mapping"),
        ("apiVersion: v1\nkind: List\nitems:\n  - x\n", "l.yaml:4", "items[0] must be an object"),
    ],
)
def test_a_list_with_bad_items_says_what_is_wrong(text: str, where: str, words: str) -> None:
    with pytest.raises(ManifestError) as caught:
        load_text(text, "l.yaml")
    assert caught.value.where == where
    assert words in caught.value.message


def test_an_empty_list_is_no_objects() -> None:
    assert load_text("apiVersion: v1\nkind: List\nitems: []\n", "l.yaml") == []
    assert load_text("apiVersion: v1\nkind: List\n", "l.yaml") == []


def test_an_integer_beyond_python_s_string_limit_names_its_key() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  n: " + "9" * 5000
    with pytest.raises(ManifestError) as caught:
        load_text(text, "big.yaml")
    assert caught.value.where == "big.yaml:6"
    assert "spec.n" in caught.value.message
    assert "5000 digits" in caught.value.message
