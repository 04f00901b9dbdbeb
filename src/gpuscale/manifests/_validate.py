"""Validate manifests against the schemas the API server would use, with fixes.

Core kinds (Deployment, Service, ConfigMap, ...) are checked against the Kubernetes
OpenAPI schemas that the ``kubernetes-validate`` package ships as JSON schema, in their
*strict* form (unknown fields are errors, as ``kubectl apply``'s default
``--validate=strict`` makes them). KEDA's ScaledObject, TriggerAuthentication and
ClusterTriggerAuthentication and prometheus-operator's ServiceMonitor and PodMonitor are
checked against the OpenAPI v3 schemas of their CRDs, kept in ``schemas/`` (see
``schemas/SOURCES.md`` for where they come from), read as the API server reads a
structural schema: ``nullable`` admits null, ``x-kubernetes-preserve-unknown-fields``
admits unknown fields and every other object with properties rejects them; CEL rules
(``x-kubernetes-validations``) and admission webhooks are not evaluated. Their
``metadata`` is checked against ``ObjectMeta`` from the Kubernetes schemas.

Why JSON schema rather than typed models (such as ``cloudcoil-models-keda``): the CRD
schema *is* what the API server enforces, the same validator serves core kinds and CRDs,
and every problem comes back with the exact key path, which maps to a line.

Beyond the schemas, checks the API server makes in code: resource quantities
(``requests``/``limits``) must parse, and ``metadata.name`` and ``metadata.namespace``
must have the form the kind's name rule asks for (DNS-1035 label for a Service, DNS-1123
label for a Namespace and every namespace, a path segment for RBAC objects, DNS-1123
subdomain otherwise: :mod:`gpuscale.manifests.names`, after
``k8s.io/apimachinery/pkg/util/validation`` and ``pkg/apis/core/validation``). A kind
unknown in a built-in API group, or in a vendored CRD group, is an error with the closest
known kind; a kind of any other group is an ``info``: a custom resource, not checked.
Then, for an object whose schema check found nothing (the API server decodes before it
validates), what the API server's validation code and KEDA refuse beyond the schemas:
:mod:`gpuscale.manifests._admission` (ports, container names, selectors, Service ports,
resources, probes, HPA targets and behavior, KEDA's webhook, trigger metadata and the HPA
KEDA generates). This is the one validator ``render``, ``lint`` (``schema-invalid``),
``simulate`` and ``deploy`` run, so they never disagree (docs/validation.md).
Everything else (a query that divides by replicas, GPUs without a node selector...) is
``gpuscale lint``'s business, not validation's.

jsonschema and referencing (about 0.1 s to import) are imported by the first call that
builds a validator, so the many users of :mod:`gpuscale.manifests` that never validate
(lint, the profile, ``gpuscale --help``) do not pay for them.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

from gpuscale.errors import ManifestError
from gpuscale.kube import parse_quantity
from gpuscale.manifests._admission import POD_SPEC_PATHS, refusals
from gpuscale.manifests._model import KeyPath, Location, Manifest, format_path
from gpuscale.manifests._views import is_templated
from gpuscale.manifests.names import NameRule, name_problem, name_rule_for, suggest_name

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import jsonschema
    from jsonschema.exceptions import ValidationError as SchemaError
    from referencing import Resource

__all__ = [
    "CRD_SCHEMAS",
    "DEFAULT_KUBE_VERSION",
    "ValidationProblem",
    "kube_versions",
    "validate",
    "validate_or_raise",
]

DEFAULT_KUBE_VERSION = "1.33"
"""Kubernetes version whose schemas are used when none is given (a current DOKS minor);
the nearest older version shipped by ``kubernetes-validate`` is used when it lacks it."""

CRD_SCHEMAS: Mapping[str, str] = {
    "keda.sh/v1alpha1/ScaledObject": "keda.sh_v1alpha1_scaledobject.json",
    "keda.sh/v1alpha1/TriggerAuthentication": "keda.sh_v1alpha1_triggerauthentication.json",
    "keda.sh/v1alpha1/ClusterTriggerAuthentication": (
        "keda.sh_v1alpha1_clustertriggerauthentication.json"
    ),
    "monitoring.coreos.com/v1/ServiceMonitor": "monitoring.coreos.com_v1_servicemonitor.json",
    "monitoring.coreos.com/v1/PodMonitor": "monitoring.coreos.com_v1_podmonitor.json",
}
"""``apiVersion/kind`` of each CRD kind validated, and its schema file in ``schemas/``."""

_DEFS_ID = "https://kubernetes.io/api/_definitions.json"
_OBJECT_META = f"{_DEFS_ID}#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_SCHEMA_ROOT = "kubernetes-json-schema"
_POD_SPEC_PATHS = POD_SPEC_PATHS

_CRD_GROUP_KINDS: Mapping[str, Mapping[str, frozenset[str]]] = {
    "keda.sh": {
        "v1alpha1": frozenset(
            {"ScaledObject", "ScaledJob", "TriggerAuthentication", "ClusterTriggerAuthentication"}
        )
    },
    "monitoring.coreos.com": {
        "v1": frozenset(
            {
                "Alertmanager",
                "PodMonitor",
                "Probe",
                "Prometheus",
                "PrometheusRule",
                "ServiceMonitor",
                "ThanosRuler",
            }
        ),
        "v1alpha1": frozenset({"AlertmanagerConfig", "PrometheusAgent", "ScrapeConfig"}),
        "v1beta1": frozenset({"AlertmanagerConfig"}),
    },
}
"""Every kind of the CRD groups whose schemas are vendored (KEDA 2.x's ``keda.sh``,
prometheus-operator's ``monitoring.coreos.com``), including those without a vendored
schema, so that a misspelt kind of these groups is told from a real one."""
_META_KINDS = frozenset({"APIGroup", "APIVersions", "DeleteOptions", "Status", "WatchEvent"})
_RULE_WORDS: Mapping[NameRule, str] = {
    "dns1123-label": "a DNS-1123 label",
    "dns1035-label": "a DNS-1035 label",
    "dns1123-subdomain": "a DNS-1123 subdomain",
    "path-segment": "a path segment name",
}

Severity = Literal["error", "warning", "info"]
Check = Literal["schema", "apiserver", "keda"]


@dataclass(frozen=True)
class ValidationProblem:
    """One way a manifest does not match its schema."""

    location: Location
    """Where the offending key is written (its parent's, for a missing key)."""
    path: KeyPath
    """Key path of the offending value inside the manifest."""
    ref: str
    """``Kind/namespace/name`` of the manifest."""
    message: str
    """What is wrong, including what was expected."""
    fix: str
    """What to change."""
    severity: Severity = "error"
    expected: str = ""
    """What the schema wants there, on its own: ``an integer``, ``one of Value, ...``."""
    check: Check = "schema"
    """Who refuses it: the schema (``schema``), the API server's validation code
    (``apiserver``: names, quantities, ports, selectors...) or KEDA (``keda``: its
    admission webhook, its scaler, or the API server refusing the HPA KEDA generates)."""

    def one_line(self) -> str:
        """``file:line: Kind/name: path: message (fix: ...)`` on one line."""
        text = f"{self.location}: {self.ref}: {format_path(self.path)}: {self.message}"
        return " ".join(f"{text} (fix: {self.fix})".split())

    def __str__(self) -> str:
        return self.one_line()


def validate(
    manifests: Manifest | Iterable[Manifest], *, kube_version: str = DEFAULT_KUBE_VERSION
) -> list[ValidationProblem]:
    """Every schema problem in ``manifests``, in file order.

    A kind of an API group gpuscale knows nothing about (a third-party CRD) gives one
    ``info`` each, as does a known CRD kind whose schema is not shipped (PrometheusRule);
    an unknown kind of a built-in or vendored group (``apps/v1 Deploymnet``) is an
    ``error`` with a did-you-mean, and so is everything else found.
    ``kube_version`` (``"1.33"``) picks the Kubernetes schemas.
    """
    items = [manifests] if isinstance(manifests, Manifest) else list(manifests)
    version = _schema_version(kube_version)
    problems: list[ValidationProblem] = []
    for manifest in items:
        problems.extend(_validate_one(manifest, version))
    return problems


def validate_or_raise(
    manifests: Manifest | Iterable[Manifest], *, kube_version: str = DEFAULT_KUBE_VERSION
) -> None:
    """Raise :class:`ManifestError` for the first error :func:`validate` finds."""
    for problem in validate(manifests, kube_version=kube_version):
        if problem.severity == "error":
            raise ManifestError(
                f"{problem.ref}: {format_path(problem.path)}: {problem.message}",
                where=str(problem.location),
                fix=problem.fix,
            )


@cache
def kube_versions() -> tuple[str, ...]:
    """Kubernetes minor versions whose schemas are installed, oldest first."""
    found = []
    for name in _package_names("kubernetes_validate", _SCHEMA_ROOT):
        match = re.fullmatch(r"v(\d+)\.(\d+)\.\d+-local-strict", name)
        if match:
            found.append((int(match.group(1)), int(match.group(2))))
    return tuple(f"{major}.{minor}" for major, minor in sorted(found))


def _schema_version(wanted: str) -> str:
    match = re.match(r"v?(\d+)\.(\d+)", wanted)
    if not match:
        raise ManifestError(
            f"not a Kubernetes version: {wanted!r}", where="--kube-version", fix="write 1.33"
        )
    key = (int(match.group(1)), int(match.group(2)))
    available = kube_versions()
    older = [v for v in available if tuple(int(p) for p in v.split(".")) <= key]
    return older[-1] if older else available[0]


def _problem(
    manifest: Manifest,
    path: KeyPath,
    message: str,
    fix: str,
    severity: Severity = "error",
    *,
    expected: str,
    check: Check = "schema",
) -> ValidationProblem:
    return ValidationProblem(
        location=manifest.line_of(path),
        path=path,
        ref=manifest.ref,
        message=message,
        fix=fix,
        severity=severity,
        expected=expected,
        check=check,
    )


def _validate_one(manifest: Manifest, version: str) -> Iterator[ValidationProblem]:
    if not manifest.api_version or not manifest.kind:
        missing = [
            key for key, value in (("apiVersion", manifest.api_version), ("kind", manifest.kind))
        ]
        missing = [key for key in missing if not isinstance(manifest.body.get(key), str)]
        yield _problem(
            manifest,
            (),
            f"missing {' and '.join(missing)}",
            "every object needs apiVersion and kind, e.g. apiVersion: apps/v1, kind: Deployment",
            expected="apiVersion and kind",
        )
        return
    validator = _validator_for(manifest.api_version, manifest.kind, version)
    if validator is None:
        yield from _unknown_kind(manifest, version)
        return
    found = [
        problem
        for error in validator.iter_errors(manifest.body)
        for problem in _explain(manifest, _deepest(error))
    ]
    decoded = not found
    found.extend(_quantity_problems(manifest))
    found.extend(_name_problems(manifest))
    if decoded:
        found.extend(
            ValidationProblem(
                location=manifest.line_of(refusal.path),
                path=refusal.path,
                ref=manifest.ref,
                message=refusal.message,
                fix=refusal.fix,
                expected=refusal.expected,
                check=refusal.check,
            )
            for refusal in refusals(manifest)
        )
    yield from sorted(found, key=lambda problem: (problem.location, problem.path.__repr__()))


def _unknown_kind(manifest: Manifest, version: str) -> Iterator[ValidationProblem]:
    """What to say about an ``apiVersion``/``kind`` that has no schema here."""
    group, _, short = manifest.api_version.rpartition("/")
    kind = manifest.kind
    groups = _known_kinds(version)
    if group not in groups:
        yield _problem(
            manifest,
            ("kind",),
            f"no schema known for {manifest.api_version} {kind} (a custom resource of a "
            "group gpuscale does not know); not validated",
            "nothing, if this kind's CRD is installed in the cluster",
            severity="info",
            expected="a kind with a known schema",
        )
        return
    versions = groups[group]
    if kind in versions.get(short, ()):
        yield _problem(
            manifest,
            ("kind",),
            f"gpuscale ships no schema for {manifest.api_version} {kind}; not validated",
            "nothing, if this kind's CRD is installed in the cluster",
            severity="info",
            expected="a kind with a known schema",
        )
        return
    elsewhere = sorted(
        {
            *_core_api_versions(kind, version),
            *(f"{group}/{v}" for v, kinds in versions.items() if kind in kinds),
        }
    )
    if elsewhere:
        yield _problem(
            manifest,
            ("apiVersion",),
            f"{group if group in _CRD_GROUP_KINDS else 'Kubernetes ' + version} has no "
            f"{kind} in {manifest.api_version}",
            f"use apiVersion: {elsewhere[0]}",
            expected=" or ".join(elsewhere),
        )
        return
    candidates = versions.get(short) or set().union(*versions.values())
    choices = sorted(k for k in candidates if k not in _META_KINDS and not k.endswith("List"))
    lowered = {k.lower(): k for k in choices}
    close = [lowered[kind.lower()]] if kind.lower() in lowered else []
    close = close or difflib.get_close_matches(kind, choices, n=1, cutoff=0.6)
    where = manifest.api_version if short in versions else f"API group {group or 'core'}"
    fix = f"did you mean {close[0]}?" if close else f"use one of: {', '.join(choices[:12])}"
    yield _problem(
        manifest,
        ("kind",),
        f"{where} has no kind {kind!r}",
        fix,
        expected=f"a kind of {where}",
    )


def _name_problems(manifest: Manifest) -> Iterator[ValidationProblem]:
    """``metadata.name`` and ``metadata.namespace`` as the API server checks them
    (:mod:`gpuscale.manifests.names`); placeholders and non-strings are left alone."""
    name = manifest.get(("metadata", "name"))
    if isinstance(name, str) and name and not is_templated(name):
        rule = name_rule_for(manifest.api_version, manifest.kind)
        problem = name_problem(name, rule)
        if problem:
            yield _problem(
                manifest,
                ("metadata", "name"),
                f"{name!r} is not a valid {manifest.kind} name: it {problem}",
                f"rename it, e.g. {suggest_name(name, rule)}, and every reference to it",
                expected=_RULE_WORDS[rule],
                check="apiserver",
            )
    namespace = manifest.get(("metadata", "namespace"))
    if isinstance(namespace, str) and namespace and not is_templated(namespace):
        problem = name_problem(namespace, "dns1123-label")
        if problem:
            yield _problem(
                manifest,
                ("metadata", "namespace"),
                f"{namespace!r} is not a valid namespace: it {problem}",
                f"use e.g. {suggest_name(namespace, 'dns1123-label')}",
                expected=_RULE_WORDS["dns1123-label"],
                check="apiserver",
            )


def _deepest(error: SchemaError) -> SchemaError:
    from jsonschema.exceptions import best_match  # noqa: PLC0415 - see module doc

    if error.validator in ("oneOf", "anyOf") and error.context:
        best: SchemaError | None = best_match(error.context)
        if best is not None:
            return best
    return error


def _explain(manifest: Manifest, error: SchemaError) -> Iterator[ValidationProblem]:
    path: KeyPath = tuple(error.absolute_path)
    value = error.instance
    kind = error.validator
    shown = _show(value)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    rule: Any = error.validator_value
    if kind == "additionalProperties" and isinstance(value, dict):
        known = list((schema.get("properties") or {}).keys())
        for key in sorted(set(value) - set(known)):
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            fix = f"did you mean {close[0]}?" if close else f"remove {key}"
            if not close and known:
                fix += f" (allowed here: {', '.join(sorted(known)[:12])})"
            yield _problem(
                manifest, (*path, key), f"unknown field {key!r}", fix, expected="a known field"
            )
        return
    if kind == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else "a key"
        yield _problem(
            manifest,
            path,
            f"missing required field {missing!r} in {format_path(path)}",
            f"add {missing}",
            expected=f"a {missing} key",
        )
        return
    if kind == "type":
        expected = _types(rule)
        yield _problem(
            manifest,
            path,
            f"expected {expected}, got {shown}",
            _type_fix(value, expected),
            expected=expected,
        )
        return
    if kind in ("enum", "const"):
        allowed = list(rule) if kind == "enum" else [rule]
        choices = ", ".join(str(v) for v in allowed if v is not None)
        close = (
            difflib.get_close_matches(str(value), [str(v) for v in allowed], n=1)
            if value is not None
            else []
        )
        fix = f"did you mean {close[0]}?" if close else f"use one of: {choices}"
        yield _problem(
            manifest,
            path,
            f"expected one of {choices}; got {shown}",
            fix,
            expected=f"one of {choices}",
        )
        return
    if is_templated(value):
        yield _problem(
            manifest,
            path,
            f"holds a template placeholder {shown}",
            "render the template before applying",
            expected="a rendered value",
        )
        return
    yield _problem(
        manifest,
        path,
        f"{error.message} (JSON schema rule {kind!r})",
        f"change {format_path(path) or 'the object'} to satisfy the schema",
        expected=f"{kind} {rule!r}",
    )


def _types(value: Any) -> str:
    names = [value] if isinstance(value, str) else list(value)
    words = {
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "object": "a mapping",
        "array": "a list",
    }
    return " or ".join(words.get(name, name) for name in names if name != "null")


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value) if len(value) <= 60 else repr(value[:57] + "...")
    return repr(value)


def _type_fix(value: Any, expected: str) -> str:
    if is_templated(value):
        return "render the template before applying"
    if expected == "a string" and isinstance(value, bool | int | float):
        text = _show(value)
        read_as = "a boolean" if isinstance(value, bool) else "a number"
        return f"quote it: '{text}' (YAML reads {text} unquoted as {read_as})"
    if expected in ("an integer", "a number") and isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return f"write {expected}"
        return f"remove the quotes: {value}"
    if expected == "true or false" and isinstance(value, str):
        return f"write true or false without quotes, not {value!r}"
    return f"write {expected}"


def _quantity_problems(manifest: Manifest) -> Iterator[ValidationProblem]:
    base = _POD_SPEC_PATHS.get(manifest.kind)
    if base is None:
        return
    for group in ("containers", "initContainers"):
        containers = manifest.get((*base, group))
        if not isinstance(containers, list):
            continue
        for index, container in enumerate(containers):
            resources_ = container.get("resources") if isinstance(container, dict) else None
            if not isinstance(resources_, dict):
                continue
            for section in ("requests", "limits"):
                values = resources_.get(section)
                if not isinstance(values, dict):
                    continue
                for name, amount in values.items():
                    if (
                        is_templated(amount)
                        or isinstance(amount, bool)
                        or not isinstance(amount, str | int | float)
                    ):
                        continue  # a placeholder, or a type the schema reports
                    try:
                        parse_quantity(amount)
                    except (ValueError, TypeError):
                        path = (*base, group, index, "resources", section, name)
                        yield _problem(
                            manifest,
                            path,
                            f"{amount!r} is not a resource quantity",
                            "write a quantity such as 1, 500m, 512Mi or 2Gi",
                            expected="a resource quantity",
                            check="apiserver",
                        )


def _package_text(package: str, *parts: str) -> str:
    """A schema shipped inside an installed package: read like an import, not a user's file
    (the one read ``tests/unit/test_pure_layers.py`` allows here)."""
    return _package_files(package).joinpath(*parts).read_text(encoding="utf-8")


def _package_names(package: str, *parts: str) -> list[str]:
    """The names in a folder of schemas shipped inside an installed package."""
    return [entry.name for entry in _package_files(package).joinpath(*parts).iterdir()]


@cache
def _package_files(package: str) -> Traversable:
    """The files of an installed package, found without running it: importing
    ``kubernetes_validate`` would import PyYAML, packaging and importlib_resources for
    the schema files alone (about 15 ms)."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        raise ModuleNotFoundError(f"no package named {package!r}", name=package)
    return resources.files(importlib.util.module_from_spec(spec))


@cache
def _definitions(version: str) -> Resource[Any]:
    from referencing import Resource  # noqa: PLC0415 - see module doc

    text = _package_text(
        "kubernetes_validate", _SCHEMA_ROOT, f"v{version}.0-local-strict", "_definitions.json"
    )
    return Resource.from_contents(json.loads(text))


@cache
def _core_files(version: str) -> dict[tuple[str, str, str], str]:
    """``(group's first word, kind in lower case, version) -> file`` for a schema version,
    from names such as ``deployment-apps-v1.json`` and ``service-v1.json``."""
    pattern = re.compile(r"([a-z0-9]+)-(?:([a-z0-9]+)-)?(v\d+(?:(?:alpha|beta)\d+)?)\.json")
    found: dict[tuple[str, str, str], str] = {}
    for name in _package_names("kubernetes_validate", _SCHEMA_ROOT, f"v{version}.0-local-strict"):
        match = pattern.fullmatch(name)
        if match:
            found[(match.group(2) or "", match.group(1), match.group(3))] = name
    return found


@cache
def _known_kinds(version: str) -> dict[str, dict[str, frozenset[str]]]:
    """``group -> version -> kinds`` of every built-in group (from the Kubernetes
    schemas) and of the CRD groups whose schemas are vendored (:data:`_CRD_GROUP_KINDS`)."""
    found: dict[str, dict[str, set[str]]] = {}
    for file in _core_files(version).values():
        for gvk in _core_schema(version, file).get("x-kubernetes-group-version-kind") or []:
            group = found.setdefault(gvk.get("group") or "", {})
            group.setdefault(gvk["version"], set()).add(gvk["kind"])
    for group_name, versions in _CRD_GROUP_KINDS.items():
        for short, kinds in versions.items():
            found.setdefault(group_name, {}).setdefault(short, set()).update(kinds)
    return {
        group: {short: frozenset(kinds) for short, kinds in versions.items()}
        for group, versions in found.items()
    }


def _core_api_versions(kind: str, version: str) -> list[str]:
    lowered = kind.lower()
    found = []
    for (_, name, _), file in _core_files(version).items():
        if name != lowered:
            continue
        for gvk in _core_schema(version, file).get("x-kubernetes-group-version-kind") or []:
            if gvk.get("kind") == kind:
                group = gvk.get("group") or ""
                found.append(f"{group}/{gvk['version']}" if group else gvk["version"])
    return sorted(set(found))


@cache
def _core_schema(version: str, file: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        _package_text("kubernetes_validate", _SCHEMA_ROOT, f"v{version}.0-local-strict", file)
    )
    return data


@cache
def _validator_for(api_version: str, kind: str, version: str) -> jsonschema.Validator | None:
    import jsonschema  # noqa: PLC0415 - see module doc
    from referencing import Registry  # noqa: PLC0415 - see module doc

    crd_file = CRD_SCHEMAS.get(f"{api_version}/{kind}")
    registry: Registry[Any] = Registry().with_resource(_DEFS_ID, _definitions(version))
    if crd_file is not None:
        raw = json.loads(_package_text("gpuscale.manifests", "schemas", crd_file))
        schema = _structural(raw)
        schema["properties"]["metadata"] = {"$ref": _OBJECT_META}
        schema["properties"]["apiVersion"] = {"type": "string", "enum": [api_version]}
        schema["properties"]["kind"] = {"type": "string", "enum": [kind]}
        schema["required"] = sorted({*schema.get("required", []), "apiVersion", "kind", "metadata"})
        return jsonschema.Draft202012Validator(schema, registry=registry)
    group, _, short = api_version.rpartition("/")
    file = _core_files(version).get((group.split(".", 1)[0], kind.lower(), short))
    if file is None:
        return None
    schema = _core_schema(version, file)
    gvks = schema.get("x-kubernetes-group-version-kind") or []
    if not any(g.get("kind") == kind and g.get("group", "") == group for g in gvks):
        return None
    return jsonschema.Draft202012Validator(schema, registry=registry)


def _structural(node: Any) -> Any:
    """A CRD structural schema as a JSON schema that rejects unknown fields."""
    if isinstance(node, list):
        return [_structural(item) for item in node]
    if not isinstance(node, dict):
        return node
    result = {key: _structural(value) for key, value in node.items() if not key.startswith("x-")}
    if node.get("nullable") and isinstance(node.get("type"), str):
        result["type"] = [node["type"], "null"]
    result.pop("nullable", None)
    if (
        "properties" in node
        and "additionalProperties" not in node
        and not node.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    if node.get("x-kubernetes-int-or-string") and "anyOf" not in node:
        result["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    return result
