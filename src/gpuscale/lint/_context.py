"""What lint rules read: the loaded manifests, the profile, and the default namespace.

Rules never parse YAML or read files; they read

- the manifests as :func:`gpuscale.inputs.read_manifests` gives them
  (:class:`~gpuscale.manifests.Manifest`: kind, name, namespace, plain-data body and the
  line of every key), through the typed views of :mod:`gpuscale.manifests` and
  :mod:`gpuscale.controllers.keda` where those decide something;
- the profile (:class:`gpuscale.profile.Profile`, defaults filled), or ``None`` when the
  user gave none: rules that need it then stay silent;
- the ``--namespace`` default for objects that set none (``default``, as ``kubectl apply``
  without ``-n`` would);
- the Kubernetes version whose schemas ``schema-invalid`` checks the manifests against,
  or ``None`` when this run does not check schemas.

:class:`LintContext` bundles them, indexes the manifests by kind once, and caches
what rules share (typed views, query analyses), so each rule stays a short loop. A rule
that cannot check an object for a reason the user should hear (its simulation failed)
says so with :meth:`LintContext.note`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from gpuscale.manifests import Manifest
    from gpuscale.profile import Profile

__all__ = ["DEFAULT_NAMESPACE", "LintContext"]

DEFAULT_NAMESPACE = "default"

_T = TypeVar("_T")


class LintContext:
    """The manifest set, the profile and the default namespace, indexed for rules."""

    def __init__(
        self,
        objects: Iterable[Manifest],
        profile: Profile | None = None,
        *,
        default_namespace: str = DEFAULT_NAMESPACE,
        schema_version: str | None = None,
    ) -> None:
        self.objects: tuple[Manifest, ...] = tuple(objects)
        self.profile = profile
        self.default_namespace = default_namespace
        self.schema_version = schema_version
        self._by_kind: dict[str, list[Manifest]] = {}
        for obj in self.objects:
            self._by_kind.setdefault(obj.kind, []).append(obj)
        self._cache: dict[tuple[str, Hashable], Any] = {}
        self.notes: list[str] = []
        """What a rule has to tell that is not a finding (it could not check an object);
        the report lists them."""

    def of_kind(self, *kinds: str) -> list[Manifest]:
        """The manifests of the given kinds, in input order within each kind."""
        found: list[Manifest] = []
        for kind in kinds:
            found.extend(self._by_kind.get(kind, ()))
        return found

    def namespace_of(self, obj: Manifest) -> str:
        """The object's namespace, or the ``--namespace`` default when it sets none."""
        return obj.effective_namespace(self.default_namespace)

    def note(self, text: str) -> None:
        """Tell the user something that is not a finding (see :attr:`notes`)."""
        if text not in self.notes:
            self.notes.append(text)

    def cached(self, kind: str, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()`` once per ``(kind, key)`` for the whole run (views shared by rules)."""
        slot = (kind, key)
        if slot not in self._cache:
            self._cache[slot] = compute()
        value: _T = self._cache[slot]
        return value
