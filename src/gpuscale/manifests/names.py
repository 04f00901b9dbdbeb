"""The rules the Kubernetes API server applies to object names and namespaces.

Schemas say only that ``metadata.name`` is a string; the API server checks its form in
code, per kind, and ``kubectl apply`` fails when it does not fit. This module ports those
checks so that validation (:mod:`gpuscale.manifests._validate`) and ``gpuscale init`` can
refuse the same names before anything reaches a cluster. It sits in the pure
``manifests`` layer: strings in, messages out.

Upstream (Kubernetes 1.33):

- ``k8s.io/apimachinery/pkg/util/validation/validation.go``: ``IsDNS1123Label`` (at most
  63 characters of ``[a-z0-9-]``, alphanumeric at both ends), ``IsDNS1123Subdomain`` (at
  most 253 characters, such labels joined by ``.``) and ``IsDNS1035Label`` (at most 63,
  and the first character a letter).
- ``k8s.io/apimachinery/pkg/api/validation/path/name.go``: ``IsValidPathSegmentName``
  (no ``/`` or ``%``, not ``.`` or ``..``), used for RBAC objects.
- ``k8s.io/apimachinery/pkg/api/validation/objectmeta.go``: ``ValidateObjectMetaAccessor``
  checks ``metadata.namespace`` of a namespaced object as a DNS-1123 label.
- ``pkg/apis/core/validation/validation.go``: ``ValidateServiceName`` (DNS-1035 label),
  ``ValidateNamespaceName`` (DNS-1123 label); most other kinds use
  ``NameIsDNSSubdomain`` (``pkg/apis/apps/validation``, ``batch``, ``autoscaling``...,
  and custom resources: ``apiextensions-apiserver/pkg/registry/customresource/validator.go``,
  ``customResourceValidator.Validate``);
  ``pkg/apis/rbac/validation/validation.go``: ``ValidateRBACName`` (a path segment).
"""

from __future__ import annotations

import re
from typing import Literal

from gpuscale.errors import InputError

__all__ = ["NameRule", "check_namespace_flag", "name_problem", "name_rule_for", "suggest_name"]

NameRule = Literal["dns1123-label", "dns1123-subdomain", "dns1035-label", "path-segment"]
"""Which of the API server's name checks applies."""

_LABEL_1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_RBAC_GROUP = "rbac.authorization.k8s.io"

_DESCRIPTIONS: dict[NameRule, str] = {
    "dns1123-label": (
        "a DNS-1123 label: at most 63 lower-case letters, digits and '-', starting and "
        "ending with a letter or digit"
    ),
    "dns1035-label": (
        "a DNS-1035 label: at most 63 lower-case letters, digits and '-', starting with a "
        "letter and ending with a letter or digit"
    ),
    "dns1123-subdomain": (
        "a DNS-1123 subdomain: at most 253 lower-case letters, digits, '-' and '.', "
        "starting and ending with a letter or digit"
    ),
    "path-segment": "a path segment: no '/' or '%', and not '.' or '..'",
}


def name_rule_for(api_version: str, kind: str) -> NameRule:
    """The check the API server applies to ``metadata.name`` of a ``kind``.

    Service: DNS-1035 label; Namespace: DNS-1123 label; RBAC objects: a path segment;
    every other built-in kind and every custom resource: a DNS-1123 subdomain.
    """
    group = api_version.rpartition("/")[0]
    if group == "" and kind == "Service":
        return "dns1035-label"
    if group == "" and kind == "Namespace":
        return "dns1123-label"
    if group == _RBAC_GROUP:
        return "path-segment"
    return "dns1123-subdomain"


def name_problem(value: str, rule: NameRule) -> str | None:
    """What is wrong with ``value`` under ``rule`` (``"must be ..."``), or None if it fits."""
    if rule == "path-segment":
        if value in (".", "..") or "/" in value or "%" in value:
            return f"must be {_DESCRIPTIONS[rule]}"
        return None
    pattern, limit = {
        "dns1123-label": (_LABEL_1123, 63),
        "dns1035-label": (_LABEL_1035, 63),
        "dns1123-subdomain": (_SUBDOMAIN, 253),
    }[rule]
    if len(value) > limit or not pattern.fullmatch(value):
        return f"must be {_DESCRIPTIONS[rule]}"
    return None


def suggest_name(value: str, rule: NameRule) -> str:
    """A name close to ``value`` that fits ``rule`` (lower-cased, other characters as '-')."""
    if rule == "path-segment":
        return re.sub(r"[/%]", "-", value).strip(".") or "name"
    allowed = r"[^a-z0-9.-]" if rule == "dns1123-subdomain" else r"[^a-z0-9-]"
    text = re.sub(allowed, "-", value.lower())
    text = re.sub(r"-{2,}", "-", text)
    if rule == "dns1123-subdomain":
        parts = [part.strip("-") for part in text.split(".")]
        text = ".".join(part for part in parts if part)[:253].strip("-.")
    else:
        text = text.strip("-")
    if rule == "dns1035-label" and not text[:1].isalpha():
        rest = text.lstrip("0123456789-")
        lead = text[: len(text) - len(rest)].strip("-")
        rest = rest.strip("-")
        text = "-".join(part for part in (rest or "x", lead) if part)
    return text[:63].rstrip("-") if rule != "dns1123-subdomain" else text or "x"


def check_namespace_flag(value: str, flag: str = "--namespace") -> str:
    """``value`` if it is a namespace the API server accepts (a DNS-1123 label), else an
    :class:`~gpuscale.errors.InputError` naming ``flag``: the one check ``render``,
    ``lint``, ``simulate`` and ``deploy`` make of ``-n``."""
    problem = name_problem(value, "dns1123-label")
    if problem:
        raise InputError(
            f"{value!r} is not a valid namespace: it {problem}",
            where=flag,
            fix=f"use a name such as {suggest_name(value, 'dns1123-label') or 'default'}",
        )
    return value
