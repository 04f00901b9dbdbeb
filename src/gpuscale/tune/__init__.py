"""``gpuscale tune``: the cheapest settings that meet the SLOs on the user's own trace,
with a lower bound and a clairvoyant reference (``docs/tune.md``).

The pure parts: :mod:`~gpuscale.tune.slo` (the SLO grammar), :mod:`~gpuscale.tune.space`
(the search space and the edits a configuration makes), :mod:`~gpuscale.tune.objective`
(one trial), :mod:`~gpuscale.tune.references` (the lower bound and the clairvoyant
schedule). :mod:`~gpuscale.tune.study` runs the Optuna study in processes or on Ray
(not pure: it starts processes and opens the study's database).
"""

from __future__ import annotations

__all__: list[str] = []
