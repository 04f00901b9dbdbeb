"""run_lint: selection, failure levels, inline suppression, and the public surface."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from gpuscale.errors import InputError
from gpuscale.lint import REGISTRY, LintOptions, Severity, catalogue, parse_slugs, run_lint
from gpuscale.lint._run import schema_version
from gpuscale.lint.output import catalogue_markdown
from gpuscale.lint.rules import ORDER
from gpuscale.manifests import DEFAULT_KUBE_VERSION, load_text
from tests.unit.lint.conftest import EXAMPLES, line_of, make_profile
from tests.unit.lint.manifests import scaled_object

TUTORIAL = (EXAMPLES / "tutorial" / "resources.yaml").read_text()


def _run(text: str, **options: Any) -> list[tuple[str, int]]:
    report = run_lint(load_text(textwrap.dedent(text), "m.yaml"), None, LintOptions(**options))
    return [(f.rule, f.location.line) for f in report.findings]


# --- selection and failure --------------------------------------------------------------


def test_select_and_ignore() -> None:
    every = {rule for rule, _ in _run(TUTORIAL)}
    assert {"query-divides-by-replicas", "cooldown-has-no-effect"} <= every
    selected = {rule for rule, _ in _run(TUTORIAL, select=frozenset({"cooldown-has-no-effect"}))}
    assert selected == {"cooldown-has-no-effect"}
    ignored = {rule for rule, _ in _run(TUTORIAL, ignore=frozenset({"cooldown-has-no-effect"}))}
    assert ignored == every - {"cooldown-has-no-effect"}


def test_parse_slugs_accepts_commas_and_repeats_and_rejects_unknown() -> None:
    slugs = parse_slugs(["query-invalid,compile-at-start", " metricname-ignored "], flag="--select")
    assert slugs == {"query-invalid", "compile-at-start", "metricname-ignored"}
    with pytest.raises(InputError) as error:
        parse_slugs(["query-invalid,no-such-rule"], flag="--ignore")
    assert error.value.where == "--ignore"
    assert "no-such-rule" in str(error.value)
    assert "--list" in str(error.value)


@pytest.mark.parametrize(
    ("fail_on", "code"),
    [(Severity.ERROR, 0), (Severity.WARNING, 0), (Severity.INFO, 1)],
)
def test_fail_on_levels(fail_on: Severity, code: int) -> None:
    text = scaled_object(
        spec="pollingInterval: 30\nminReplicaCount: 1\n", metadata="ignoreNullValues: 'false'\n"
    )
    report = run_lint(load_text(text, "m.yaml"), None, LintOptions(fail_on=fail_on))
    assert {f.severity for f in report.findings} == {Severity.INFO}
    assert report.exit_code == code


def test_errors_fail_by_default() -> None:
    report = run_lint(load_text(TUTORIAL, "m.yaml"), None, LintOptions())
    assert report.failed
    assert report.exit_code == 1


def test_the_simulation_rule_runs_by_default() -> None:
    report = run_lint(load_text(TUTORIAL, "m.yaml"), None, LintOptions())
    assert "flaps-under-steady-load" in {r.slug for r in report.rules}
    assert REGISTRY["flaps-under-steady-load"].requires == "simulator"


def test_without_select_nothing_is_noted_as_not_run() -> None:
    report = run_lint(load_text(TUTORIAL, "m.yaml"), None, LintOptions())
    assert report.not_run == ()
    assert not any("was not run" in note for note in report.notes)
    assert report.exit_code == 1


def test_ignoring_a_selected_rule_that_cannot_run_is_not_noted() -> None:
    options = LintOptions(
        select=frozenset({"max-exceeds-gpu-capacity", "cooldown-has-no-effect"}),
        ignore=frozenset({"max-exceeds-gpu-capacity"}),
    )
    report = run_lint(load_text(TUTORIAL, "m.yaml"), None, options)
    assert report.not_run == ()


@pytest.mark.parametrize(
    ("kube_version", "cluster_version", "expected"),
    [
        ("1.28", "1.30", "1.28"),
        (None, "1.30.2-do.0", "1.30"),
        (None, "1.31", "1.31"),
        (None, "latest", DEFAULT_KUBE_VERSION),
        (None, None, DEFAULT_KUBE_VERSION),
    ],
)
def test_schema_version(
    kube_version: str | None, cluster_version: str | None, expected: str
) -> None:
    profile = (
        make_profile(cluster={"version": cluster_version}) if cluster_version is not None else None
    )
    assert schema_version(LintOptions(kube_version=kube_version), profile) == expected


# --- suppression ------------------------------------------------------------------------

BASE = scaled_object(spec="cooldownPeriod: 30\nminReplicaCount: 1\n", metadata="metricName: x\n")


def _rules(text: str) -> set[str]:
    return {rule for rule, _ in _run(text)}


def test_suppress_on_the_key_line() -> None:
    assert "cooldown-has-no-effect" in _rules(BASE)
    text = BASE.replace(
        "cooldownPeriod: 30", "cooldownPeriod: 30  # gpuscale: ignore[cooldown-has-no-effect]"
    )
    assert "cooldown-has-no-effect" not in _rules(text)
    assert "metricname-ignored" in _rules(text)


def test_suppress_on_the_line_above() -> None:
    text = BASE.replace(
        "  cooldownPeriod: 30",
        "  # gpuscale: ignore[metricname-ignored, cooldown-has-no-effect]\n  cooldownPeriod: 30",
    )
    assert "cooldown-has-no-effect" not in _rules(text)
    assert "metricname-ignored" in _rules(text)


def test_suppress_the_whole_object() -> None:
    on_first_line = BASE.replace(
        "apiVersion: keda.sh/v1alpha1",
        "apiVersion: keda.sh/v1alpha1  # gpuscale: ignore[metricname-ignored]",
    )
    assert "metricname-ignored" not in _rules(on_first_line)
    assert "cooldown-has-no-effect" in _rules(on_first_line)
    above = "# gpuscale: ignore[metricname-ignored, cooldown-has-no-effect]\n" + BASE
    assert _rules(above) & {"metricname-ignored", "cooldown-has-no-effect"} == set()


def test_a_comment_without_slugs_suppresses_nothing() -> None:
    # The loader's syntax names the rules: `ignore[slug]`; a bare `ignore` is not one.
    text = BASE.replace("cooldownPeriod: 30", "cooldownPeriod: 30  # gpuscale: ignore")
    assert "cooldown-has-no-effect" in _rules(text)


@pytest.mark.parametrize(
    "comment",
    ["# gpuscale: ignore", "# gpuscale: ignore[]", "# gpuscale:ignore(cooldown-has-no-effect)"],
)
def test_a_comment_without_slugs_is_noted_with_its_line(comment: str) -> None:
    text = BASE.replace("cooldownPeriod: 30", f"cooldownPeriod: 30  {comment}")
    report = run_lint(load_text(text, "m.yaml"), None, LintOptions())
    line = line_of(text, "cooldownPeriod:")
    assert report.notes == (
        f"m.yaml:{line}: a suppression comment without rules suppresses nothing; name them: "
        "# gpuscale: ignore[slug, ...] (`gpuscale lint --list` prints the slugs)",
    )
    assert not report.suppressed


def test_a_comment_that_mentions_gpuscale_otherwise_is_not_noted() -> None:
    text = BASE.replace("cooldownPeriod: 30", "cooldownPeriod: 30  # gpuscale: ignores nothing")
    assert run_lint(load_text(text, "m.yaml"), None, LintOptions()).notes == ()


def test_suppressed_findings_are_counted_and_unknown_slugs_noted() -> None:
    text = BASE.replace(
        "cooldownPeriod: 30", "cooldownPeriod: 30  # gpuscale: ignore[cooldown-has-no-effect,typo]"
    )
    report = run_lint(load_text(text, "m.yaml"), None, LintOptions())
    assert [f.rule for f in report.suppressed] == ["cooldown-has-no-effect"]
    line = line_of(text, "cooldownPeriod:")
    assert report.notes == (
        f"m.yaml:{line}: unknown rule 'typo' in a suppression comment; it suppresses nothing "
        "(`gpuscale lint --list` prints every rule's slug)",
    )


def test_a_misspelled_slug_in_a_comment_names_the_closest_rule() -> None:
    text = BASE.replace(
        "cooldownPeriod: 30", "cooldownPeriod: 30  # gpuscale:ignore[cooldown-has-no-efect]"
    )
    report = run_lint(load_text(text, "m.yaml"), None, LintOptions())
    assert "cooldown-has-no-effect" in {f.rule for f in report.findings}
    assert len(report.notes) == 1
    assert "unknown rule 'cooldown-has-no-efect'" in report.notes[0]
    assert "did you mean 'cooldown-has-no-effect'?" in report.notes[0]


def test_a_hash_inside_a_value_is_not_a_directive() -> None:
    text = BASE.replace("metricName: x", "metricName: a#gpuscale:ignore")
    assert "metricname-ignored" in _rules(text)


# --- catalogue and public surface -------------------------------------------------------


def test_order_names_every_rule_once() -> None:
    assert len(ORDER) == len(set(ORDER))
    assert set(ORDER) == set(REGISTRY)
    assert [r.slug for r in catalogue()] == list(ORDER)


def test_every_rule_is_documented() -> None:
    for entry in catalogue():
        assert all((entry.title, entry.explanation, entry.example, entry.fix)), entry.slug
        assert entry.slug == entry.slug.lower().replace(" ", "-"), entry.slug


def test_docs_catalogue_is_up_to_date() -> None:
    docs = Path(__file__).parents[3] / "docs" / "lint-rules.md"
    assert docs.read_text() == catalogue_markdown(), (
        "regenerate: python -c 'from gpuscale.lint.output import catalogue_markdown as c; "
        'print(c(), end="")\' > docs/lint-rules.md'
    )
