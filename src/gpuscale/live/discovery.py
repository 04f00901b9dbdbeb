"""Which REST path serves a kind: the API server's discovery documents, read once per run.

``gpuscale deploy`` and ``verify`` take manifests by ``apiVersion`` and ``kind`` and must
send requests to ``/api/v1/namespaces/<ns>/services/<name>`` or
``/apis/<group>/<version>/namespaces/<ns>/<plural>/<name>``. The plural and whether the
kind is namespaced are the server's to say (a CRD chooses both), so they come from the
discovery document of the group version: ``GET /api/v1`` or ``GET /apis/<group>/<version>``,
an ``APIResourceList`` (``k8s.io/apimachinery/pkg/apis/meta/v1`` ``APIResource``: ``name``
is the plural, ``/`` in it marks a subresource, ``namespaced``, ``kind``, ``verbs``).
A group version the server does not serve answers 404, which is how a missing CRD shows.

:func:`parse_resource_list` is pure; :class:`Discovery` reads and caches one document per
group version for the life of the object (one command run), the way client-go's
memory-cached discovery does, and can forget a group version after a CRD was applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuscale.live.kube import Kube

__all__ = ["Discovery", "Resource", "group_of", "parse_resource_list"]


def group_of(api_version: str) -> str:
    """The API group of ``apiVersion`` (``""`` for the core group ``v1``)."""
    return api_version.rpartition("/")[0]


@dataclass(frozen=True, slots=True)
class Resource:
    """One REST resource: where objects of a kind live."""

    api_version: str
    """``v1``, ``apps/v1``, ``keda.sh/v1alpha1``..."""
    kind: str
    plural: str
    """The resource name in paths, e.g. ``deployments``."""
    namespaced: bool
    verbs: tuple[str, ...] = ()

    @property
    def group(self) -> str:
        return group_of(self.api_version)

    @property
    def display(self) -> str:
        """How kubectl names the type in its output: ``deployment.apps``, ``service``."""
        kind = self.kind.lower()
        return f"{kind}.{self.group}" if self.group else kind

    def _prefix(self) -> str:
        return "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """``.../namespaces/<ns>/<plural>`` (namespaced) or ``.../<plural>``; a namespaced
        kind without ``namespace`` gives the list across all namespaces."""
        if self.namespaced and namespace:
            return f"{self._prefix()}/namespaces/{namespace}/{self.plural}"
        return f"{self._prefix()}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None) -> str:
        """The path of one object."""
        return f"{self.collection_path(namespace)}/{name}"


def parse_resource_list(doc: Mapping[str, Any], api_version: str) -> dict[str, Resource]:
    """The kinds an ``APIResourceList`` serves, subresources left out, by kind."""
    found: dict[str, Resource] = {}
    for entry in doc.get("resources") or []:
        name = str(entry.get("name") or "")
        kind = str(entry.get("kind") or "")
        if not name or not kind or "/" in name:
            continue
        found.setdefault(
            kind,
            Resource(
                api_version=api_version,
                kind=kind,
                plural=name,
                namespaced=bool(entry.get("namespaced")),
                verbs=tuple(str(v) for v in entry.get("verbs") or ()),
            ),
        )
    return found


class Discovery:
    """Resources by ``(apiVersion, kind)``, one discovery GET per group version."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self._lists: dict[str, dict[str, Resource] | None] = {}

    def resource(self, api_version: str, kind: str) -> Resource | None:
        """The resource serving ``kind`` in ``api_version``, or None when the server does
        not serve it (the group version is unknown, or lacks the kind)."""
        if api_version not in self._lists:
            self._lists[api_version] = self._read(api_version)
        served = self._lists[api_version]
        return None if served is None else served.get(kind)

    def forget(self, api_version: str) -> None:
        """Read ``api_version`` again next time (after its CRD was created)."""
        self._lists.pop(api_version, None)

    def _read(self, api_version: str) -> dict[str, Resource] | None:
        if not api_version or api_version.count("/") > 1:
            return None
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        if "/" not in api_version and api_version != "v1":
            return None
        doc = self.kube.get_json(path, what=f"discovery of {api_version}", missing_ok=True)
        if not isinstance(doc, Mapping):
            return None
        return parse_resource_list(doc, api_version)
