"""The errors the KEDA model raises, by what the caller should do about them.

```
ValueError (so the conformance contract's ``ValueError`` checks hold)
├── TriggerError            a trigger's metadata is invalid (also a ManifestError: fix the input)
├── ScaledObjectError       the admission webhook would reject the ScaledObject (ManifestError)
│   └── FormulaError        a scalingModifiers formula does not compile or run (names a position)
├── PrometheusQueryError    KEDA treats the Prometheus answer as a failed query (a scaler error)
│   └── PrometheusQueryPanicError   the answer would crash KEDA's operator (a Go panic)
└── FallbackError           the scaler error reaches the HPA (fallback absent, invalid or not due)
```

Errors about user input carry ``where`` (a key path inside the ScaledObject) and ``fix``,
like every ``gpuscale.errors.InputError``. Errors about a scaler's answer are not user
mistakes; they are part of the simulated control loop and carry upstream's message.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuscale.errors import KeyPath, ManifestError

__all__ = [
    "FallbackError",
    "FormulaError",
    "PrometheusQueryError",
    "PrometheusQueryPanicError",
    "ScaledObjectError",
    "TriggerError",
]


class TriggerError(ManifestError, ValueError):
    """A ``prometheus`` trigger's metadata (or auth parameters) would make KEDA fail to build
    the scaler (parsePrometheusMetadata returns an error).

    KEDA's typed config reports every bad parameter at once (errors.Join); ``problems``
    keeps them apart as ``(key path, message)`` pairs, in KEDA's order, so a caller can point
    at each key; ``where`` names the first. Empty when the error has a single cause of its
    own (pod identity combined with ``authModes``).
    """

    def __init__(
        self,
        message: str,
        *,
        where: str | None = None,
        fix: str | None = None,
        key_path: KeyPath = (),
        problems: tuple[tuple[KeyPath, str], ...] = (),
    ) -> None:
        self.problems = problems
        super().__init__(message, where=where, fix=fix, key_path=key_path)


class ScaledObjectError(ManifestError, ValueError):
    """The ScaledObject would be rejected by KEDA's admission webhook or CRD validation."""


class FormulaError(ScaledObjectError):
    """A scalingModifiers formula fails to compile or to run.

    ``line`` and ``column`` (1-based) point at the offending token when there is one.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        where: str | None = None,
        fix: str | None = None,
        key_path: KeyPath = (),
    ) -> None:
        self.line = line
        self.column = column
        super().__init__(message, where=where, fix=fix, key_path=key_path)


class PrometheusQueryError(ValueError):
    """KEDA's prometheus scaler returns an error for this answer (ExecutePromQuery)."""


class PrometheusQueryPanicError(PrometheusQueryError):
    """The answer makes ExecutePromQuery panic (a non-string sample value); in a real
    operator the goroutine is not recovered and the process restarts."""


class FallbackError(ValueError):
    """GetMetricsWithFallback returns the scaler's error: the HPA sees a failed metric.

    ``health`` is the health map after the call (upstream counts the failure before it
    returns the error).
    """

    def __init__(self, message: str, health: Mapping[str, Mapping[str, object]]) -> None:
        self.health = {name: dict(entry) for name, entry in health.items()}
        super().__init__(message)
