"""The one quantity reading only the HPA controller makes: ``AsApproximateFloat64``.

Everything else about quantities (parsing, ``MilliValue``) is :mod:`gpuscale.kube`'s;
this adds the float view the controller takes of ``behavior.scaleUp/scaleDown.tolerance``
(``horizontal.go: tolerancesForHpa``), which needs Go's ``math.Pow10`` from
:mod:`gpuscale.controllers._hpa.gonum`.
"""

from __future__ import annotations

from gpuscale.controllers._hpa.gonum import go_pow10
from gpuscale.kube import QuantityLike, parse_quantity_amount

__all__ = ["approximate_float64"]


def approximate_float64(value: QuantityLike) -> float:
    """``Quantity.AsApproximateFloat64()``: float(unscaled) times ``math.Pow10(exponent)``."""
    amount = parse_quantity_amount(value)
    base = float(amount.unscaled)
    if amount.exponent == 0:
        return base
    return base * go_pow10(amount.exponent)
