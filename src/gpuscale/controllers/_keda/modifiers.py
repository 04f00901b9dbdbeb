"""KEDA ``advanced.scalingModifiers``: validating a formula and computing the composite metric.

Follows ``apis/keda/v1alpha1/scaledobject_webhook.go`` (ValidateAndCompileScalingModifiers,
validateScalingModifiersFormula, validateScalingModifiersTarget, castToFloatIfNecessary,
the scalingModifiers-fallback check in verifyScaledObjects), ``scaledobject_types.go``
(IsUsingModifiers, FallbackScalingModifiers) and ``pkg/scaling/modifiers/formula.go``
(calculateScalingModifiersFormula, scalingModifierTriggerValue,
scalingModifiersFallbackTarget), at kedacore/keda 8b4f083 (v2.20.1-117). Formulas run
on the expr-lang subset in ``expr/``, imported by the first formula compiled: its 20-odd
syntax-tree dataclasses take 20-40 ms to create, which every user of the KEDA model
(``gpuscale lint`` on any ScaledObject) paid even without a formula.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from gpuscale._gomath import GoSyntaxError, go_float_to_int64, parse_go_float
from gpuscale.controllers._keda.errors import FormulaError, ScaledObjectError
from gpuscale.errors import KeyPath

if TYPE_CHECKING:
    from gpuscale.controllers._keda.expr import Program

__all__ = [
    "COMPOSITE_METRIC_NAME",
    "cast_to_float_if_necessary",
    "composite_metric_value",
    "evaluate_formula",
    "formula_trigger_names",
    "is_using_modifiers",
    "scaling_modifier_trigger_value",
    "validate_scaling_modifiers",
]

COMPOSITE_METRIC_NAME = "composite-metric"
_WHERE: KeyPath = ("spec", "advanced", "scalingModifiers")


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _modifiers(spec: Mapping[str, object]) -> Mapping[str, object]:
    return _mapping(_mapping(spec.get("advanced")).get("scalingModifiers"))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def is_using_modifiers(spec: Mapping[str, object]) -> bool:
    """IsUsingModifiers: ``advanced`` is set and ``scalingModifiers`` has any non-empty field
    (formula, target, activationTarget or metricType)."""
    if not isinstance(spec.get("advanced"), Mapping):
        return False
    modifiers = _modifiers(spec)
    return any(
        _text(modifiers.get(key)) for key in ("formula", "target", "activationTarget", "metricType")
    )


def cast_to_float_if_necessary(formula: str) -> str:
    """castToFloatIfNecessary: wrap the formula so it returns a float64, keeping ``nil`` when
    it uses ``??`` (so the fallback target can apply)."""
    if "??" in formula:
        if formula.startswith("let _kedaCompositeResult = "):
            return formula
        return (
            f"let _kedaCompositeResult = ({formula}); "
            "_kedaCompositeResult == nil ? nil : float(_kedaCompositeResult)"
        )
    if formula.startswith("float("):
        return formula
    return f"float({formula})"


def _compile(formula: str, names: frozenset[str]) -> Program:
    """Compile the formula as KEDA does (wrapped by castToFloatIfNecessary). When the wrapped
    text fails, the error is reported against the user's own text if that fails too, so
    line and column point into what the user wrote."""
    from gpuscale.controllers._keda.expr import compile_formula  # noqa: PLC0415 - see module doc

    wrapped = cast_to_float_if_necessary(formula)
    try:
        return compile_formula(wrapped, names, user_text=formula)
    except FormulaError as wrapped_error:
        if wrapped == formula:
            raise
        try:
            compile_formula(formula, names)
        except FormulaError as own_error:
            raise own_error from None
        raise FormulaError(
            f"{wrapped_error.message} (in the wrapper KEDA adds: {wrapped})",
            line=None,
            column=None,
        ) from None


def formula_trigger_names(spec: Mapping[str, object]) -> frozenset[str]:
    """The names a formula may use: every named trigger that is not cpu or memory."""
    names = set()
    triggers = spec.get("triggers")
    for trigger in triggers if isinstance(triggers, list | tuple) else ():
        trigger_map = _mapping(trigger)
        if trigger_map.get("type") in ("cpu", "memory"):
            continue
        name = _text(trigger_map.get("name"))
        if name:
            names.add(name)
    return frozenset(names)


def validate_scaling_modifiers(spec: Mapping[str, object]) -> None:
    """What the admission webhook checks about scalingModifiers in a camelCase ScaledObject
    ``spec`` (ValidateAndCompileScalingModifiers, then the scalingModifiers-fallback rule).

    When modifiers are used the formula is mandatory, needs a target, must compile with
    every named non-cpu/memory trigger declared as a float64 and run with each set to
    -1.0; the target must parse as a float above 0 and the metric type must not be
    Utilization. A ``fallback.behavior: scalingModifiers`` needs a formula. Raises
    ``ScaledObjectError`` (``FormulaError`` with a position for formula problems).
    """
    modifiers = _modifiers(spec)
    if is_using_modifiers(spec):
        formula = _text(modifiers.get("formula"))
        if not formula:
            raise ScaledObjectError(
                "error ScalingModifiers.Formula is mandatory",
                key_path=(*_WHERE, "formula"),
                fix="add a formula, or remove scalingModifiers",
            )
        target = _text(modifiers.get("target"))
        if not target:
            raise ScaledObjectError(
                "error validating formula in ScalingModifiers: "
                "formula is given but target is empty",
                key_path=(*_WHERE, "target"),
                fix="set target to the value the formula's result is divided by",
            )
        names = formula_trigger_names(spec)
        try:
            _compile(formula, names).run(dict.fromkeys(names, -1.0))
        except FormulaError as exc:
            raise FormulaError(
                f"error validating formula in ScalingModifiers: {exc.message}",
                line=exc.line,
                column=exc.column,
                key_path=(*_WHERE, "formula"),
                fix="use only named triggers (triggers[].name) and expr-lang syntax",
            ) from None
        _validate_target(target, _text(modifiers.get("metricType")))
    fallback = _mapping(spec.get("fallback"))
    wants_formula = (
        spec.get("fallback") is not None and fallback.get("behavior") == "scalingModifiers"
    )
    if wants_formula and (not is_using_modifiers(spec) or not _text(modifiers.get("formula"))):
        raise ScaledObjectError(
            "scalingModifiers fallback behavior requires scalingModifiers.formula to be defined",
            key_path=("spec", "fallback", "behavior"),
            fix="define advanced.scalingModifiers.formula or use another fallback behavior",
        )


def _validate_target(target: str, metric_type: str) -> None:
    """validateScalingModifiersTarget."""
    try:
        number = parse_go_float(target)
    except GoSyntaxError:
        number = None
    if number is None or not number > 0.0:
        raise ScaledObjectError(
            "error validating target in ScalingModifiers: error converting target for "
            "scalingModifiers (string->float) to valid target",
            key_path=(*_WHERE, "target"),
            fix="set target to a number above 0, as a string",
        )
    if metric_type == "Utilization":
        raise ScaledObjectError(
            "error validating target in ScalingModifiers: error trigger type is Utilization, "
            "but it needs to be AverageValue or Value for external metrics",
            key_path=(*_WHERE, "metricType"),
            fix="use AverageValue or Value",
        )


def evaluate_formula(formula: str, values: Mapping[str, float | None]) -> float | None:
    """The formula's result for these trigger values, as KEDA computes it: the formula is
    wrapped by castToFloatIfNecessary, compiled with the names in ``values`` declared as
    float64 and run with ``None`` as expr's nil. Returns None when the (``??``) formula
    gives nil. Raises ``FormulaError`` (with line and column) where expr fails to compile
    or run, or when the result is not a float.
    """
    result = _compile(formula, frozenset(values)).run(values)
    if result is None:
        return None
    if not isinstance(result, float):
        raise FormulaError(
            f"formula returned non-float result {type(result).__name__} ({result!r})"
        )
    return result


def scaling_modifier_trigger_value(
    *,
    metric_name: str,
    metric_value: float,
    fallback: Mapping[str, object] | None,
    health: Mapping[str, Mapping[str, object]] | None,
) -> float | None:
    """scalingModifierTriggerValue: the value a trigger contributes to the formula, or None
    (expr's nil) when ``fallback.behavior`` is ``scalingModifiers`` and this metric's
    failure count is above ``failureThreshold`` (strictly)."""
    if fallback is None or fallback.get("behavior") != "scalingModifiers":
        return metric_value
    entry = (health or {}).get(metric_name)
    if entry is None:
        return metric_value
    failures = entry.get("numberOfFailures")
    if not isinstance(failures, int):
        return metric_value
    threshold = fallback.get("failureThreshold")
    if failures <= (threshold if isinstance(threshold, int) else 0):
        return metric_value
    return None


def composite_metric_value(
    formula: str,
    values: Mapping[str, float | None],
    *,
    fallback: Mapping[str, object] | None = None,
    target: str = "",
) -> float:
    """calculateScalingModifiersFormula: the ``composite-metric`` value handed to the HPA.

    A nil result becomes ``fallback.replicas × target`` (scalingModifiersFallbackTarget;
    an error without a fallback or with a non-numeric target); the result is cut to whole
    milli-units toward zero (``SetMilli(int64(out*1000))``).
    """
    result = evaluate_formula(formula, values)
    if result is None:
        if fallback is None:
            raise FormulaError(
                "scalingModifiers formula evaluated to nil but no fallback is configured"
            )
        try:
            target_value = parse_go_float(target)
        except GoSyntaxError:
            raise FormulaError(
                "scalingModifiers formula evaluated to nil and target "
                f'"{target}" is not a valid float'
            ) from None
        replicas = fallback.get("replicas")
        result = float(replicas if isinstance(replicas, int) else 0) * target_value
    return go_float_to_int64(result * 1000) / 1000
