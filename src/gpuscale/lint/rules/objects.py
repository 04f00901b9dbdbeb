"""Rules on whole objects, whatever their kind: does each match the schema the API server
checks it against, and is any object defined twice.

Schema problems are :func:`gpuscale.manifests.validate`'s (the Kubernetes OpenAPI schemas
that ``kubernetes-validate`` ships, strict as ``kubectl apply --validate=strict``, and the
CRD schemas of KEDA and prometheus-operator); lint reports each on its line, graded as the
validator grades it, and leaves values with a placeholder alone. They run when the run
checks schemas (:attr:`gpuscale.lint.LintOptions.validate`; ``gpuscale lint`` always does).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuscale.lint._context import LintContext
from gpuscale.lint._findings import Hit, Severity
from gpuscale.lint._registry import rule
from gpuscale.lint._yaml import snippet
from gpuscale.lint.rules._common import repeats
from gpuscale.manifests import (
    KeyPath,
    Manifest,
    ValidationProblem,
    format_path,
    is_templated,
    validate,
)

__all__ = ["SCHEMA_RULE"]

SCHEMA_RULE = "schema-invalid"
"""The slug of the schema rule, which runs only when a run checks schemas."""


def _templated(obj: Manifest, path: KeyPath) -> bool:
    """Whether a placeholder stands at ``path`` (as the value, or as the key itself)."""
    return is_templated(obj.get(path)) or any(is_templated(step) for step in path)


@rule(
    SCHEMA_RULE,
    severity=Severity.ERROR,
    title="The API server (or KEDA) would refuse the manifest",
    explanation=(
        "Every object is checked against the schema the API server would use: the "
        "Kubernetes OpenAPI schemas for core kinds, in their strict form (an unknown field "
        "is an error, as `kubectl apply`'s default `--validate=strict` makes it), and the "
        "CRD schemas of KEDA (ScaledObject, TriggerAuthentication) and prometheus-operator "
        "(ServiceMonitor, PodMonitor) for theirs (`gpuscale.manifests.validate`). A wrong "
        'type (`replicas: "two"`), an unknown or misspelled field, a missing `apiVersion` '
        "or `kind`, a resource quantity that does not parse, or a `metadata.name` or "
        "`metadata.namespace` the API server's name rules refuse (a Service name must be a "
        "DNS-1035 label: `1app` is refused; a namespace a DNS-1123 label: `Bad_NS` is "
        "refused; most other names DNS-1123 subdomains) is an error: `kubectl apply` "
        "refuses the object. A kind unknown in a built-in API group (`apps/v1` "
        "`Deploymnet`) or in KEDA's or prometheus-operator's group is an error with the "
        "closest known kind; a kind of any other group (a third-party CRD) is an info: it "
        "was not checked. The Kubernetes version is the profile's `cluster.version` when it "
        "names one (`1.33`, `1.33.1-do.0`), else gpuscale's default, as for `gpuscale "
        "deploy`. Beyond the schemas, what the API server's validation code and KEDA refuse "
        "(`gpuscale.manifests.validate`, the one validator `render`, `simulate` and "
        "`deploy` run too): ports outside 1-65535, container names that repeat, a "
        "Deployment selector that does not match its template labels, two Service ports "
        "with the same port and protocol, requests above limits, a probe without exactly "
        "one handler, HPA behavior outside its bounds (windows 0-3600 s, policy values above "
        "0, periods 1-1800 s), a ScaledObject KEDA's webhook refuses, a trigger threshold "
        "of 0 or less (the HPA KEDA generates would have a target the API server refuses). "
        "Values with a placeholder are not judged; a number or boolean in trigger "
        "metadata is left to `trigger-metadata-not-string`, and replica bounds to "
        "`replica-bounds-invalid`, a GPU request without an equal limit to "
        "`gpu-requests-limits`, which say more."
    ),
    example=snippet({"spec": {"replicas": "two", "selector": {"matchLabels": {"app": "web"}}}}),
    fix=snippet({"spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}}),
    defers_to=("trigger-metadata-not-string", "replica-bounds-invalid", "gpu-requests-limits"),
)
def _schema_invalid(ctx: LintContext) -> Iterator[Hit]:
    version = ctx.schema_version
    if version is None:
        return
    for obj in ctx.objects:
        for problem in validate(obj, kube_version=version):
            if not _templated(obj, problem.path):
                yield _schema_hit(obj, problem, version)


def _schema_hit(obj: Manifest, problem: ValidationProblem, version: str) -> Hit:
    where = format_path(problem.path)
    if problem.severity != "error":
        why = (
            f"gpuscale ships no schema for {obj.api_version} {obj.kind}, so this object was "
            "not checked; the API server checks it against its CRD, if one is installed."
        )
    elif problem.check == "keda":
        why = (
            "KEDA refuses this ScaledObject (its admission webhook, the scaler that reads the "
            "trigger, or the API server refusing the HPA KEDA generates from it: "
            "gpuscale's model of scaledobject_webhook.go, prometheus_scaler.go and the "
            "autoscaling/v2 validation): the object never scales."
        )
    elif problem.check == "apiserver":
        why = (
            f"The API server's validation of a {obj.kind or 'object'} (beyond its schema: "
            "names, ports, selectors, resources, probes, HPA targets and behavior) refuses "
            f"this one: at {where} it expects {problem.expected}. `kubectl apply` fails and "
            "nothing of the object is created or changed."
        )
    else:
        why = (
            f"The API server checks every {obj.kind or 'object'} against its schema "
            f"(Kubernetes {version}"
            + (", strict: unknown fields are errors" if "unknown field" in problem.message else "")
            + f") and refuses this one: at {where} it expects {problem.expected}. "
            "`kubectl apply` fails and nothing of the object is created or changed."
        )
    return Hit(
        obj=obj,
        key_path=problem.path,
        message=f"{where}: {problem.message}",
        why=why,
        fix=f"# {problem.fix}",
        severity=Severity(problem.severity) if problem.severity != "error" else None,
    )


@rule(
    "duplicate-object",
    severity=Severity.ERROR,
    title="The same object (kind, namespace, name) is defined twice in the set",
    explanation=(
        "`kubectl apply` applies the documents in order, so when two of them name the same "
        "object (same API group, kind, namespace and name) the later one wins: client-side "
        "apply removes what only the first set (it is in the last-applied configuration, "
        "not in the new one), server-side apply does the same for the fields its field "
        "manager owns. Nothing warns; the first definition is silently lost. Usually a "
        "copy left behind or two versions of one file. Objects without a namespace take "
        "`--namespace` (default `default`), as `kubectl apply -n` would place them; the "
        "same document read twice (a file named twice on the command line) is not "
        "reported. Reported on the second definition."
    ),
    example="kind: Deployment\nmetadata:\n  name: web\n---\nkind: Deployment\nmetadata:\n"
    "  name: web",
    fix="# keep one definition of Deployment web (merge what the two say), delete the other",
)
def _duplicate_object(ctx: LintContext) -> Iterator[Hit]:
    keyed = (
        ((obj.api_version.rpartition("/")[0], obj.kind, ctx.namespace_of(obj), obj.name), obj)
        for obj in ctx.objects
        if obj.kind and obj.name and not is_templated(obj.name)
        if not is_templated(ctx.namespace_of(obj))
    )
    for (_, _, namespace, _), obj, other in repeats(keyed):
        if other.source == obj.source:
            continue
        file, line, _ = other.source
        yield Hit(
            obj=obj,
            key_path=("metadata", "name"),
            message=(
                f"{obj.kind} {namespace}/{obj.name} is already defined at {file}:{line}; "
                "kubectl apply keeps only this later definition"
            ),
            why=(
                f"Both documents describe the same {obj.kind}. kubectl apply applies them in "
                f"order, so this one overwrites the one at {file}:{line} and whatever only "
                "that one sets is removed, without a warning."
            ),
            fix=f"# keep one definition of {obj.kind} {obj.name}: merge the two and delete "
            "the other",
        )
