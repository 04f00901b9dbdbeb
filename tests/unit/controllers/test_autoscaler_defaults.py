"""The cluster autoscaler's defaults live in one module and every description of its
settings (profile, simulator, controller model) starts from them.

Source of the values: kubernetes/autoscaler cluster-autoscaler ``FAQ.md`` flag table
(as cited in :mod:`gpuscale.controllers.autoscaler_defaults`).
"""

from __future__ import annotations

from dataclasses import replace

from gpuscale.controllers import autoscaler_defaults as ca
from gpuscale.controllers.cluster_autoscaler import AutoscalingOptions
from gpuscale.profile import AutoscalerSpec
from gpuscale.sim.inputs import autoscaling_options

# (profile field, controller option, module constant, upstream FAQ.md value)
TABLE = [
    ("scan_interval", "scan_interval_s", "SCAN_INTERVAL_S", 10.0),
    ("scale_up_delay", "unschedulable_pod_time_buffer_s", "UNSCHEDULABLE_POD_TIME_BUFFER_S", 2.0),
    (
        "scale_up_delay_gpu",
        "unschedulable_pod_with_gpu_time_buffer_s",
        "UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S",
        30.0,
    ),
    ("new_pod_scale_up_delay", "new_pod_scale_up_delay_s", "NEW_POD_SCALE_UP_DELAY_S", 0.0),
    ("scale_down_unneeded_time", "scale_down_unneeded_time_s", "SCALE_DOWN_UNNEEDED_TIME_S", 600.0),
    (
        "scale_down_delay_after_add",
        "scale_down_delay_after_add_s",
        "SCALE_DOWN_DELAY_AFTER_ADD_S",
        600.0,
    ),
    (
        "scale_down_delay_after_failure",
        "scale_down_delay_after_failure_s",
        "SCALE_DOWN_DELAY_AFTER_FAILURE_S",
        180.0,
    ),
    (
        "scale_down_utilization_threshold",
        "scale_down_utilization_threshold",
        "SCALE_DOWN_UTILIZATION_THRESHOLD",
        0.5,
    ),
]


def test_profile_and_model_defaults_are_the_modules() -> None:
    profile, options = AutoscalerSpec(), AutoscalingOptions()
    for field, option, constant, upstream in TABLE:
        assert getattr(ca, constant) == upstream, constant
        assert getattr(profile, field) == upstream, field
        assert getattr(options, option) == upstream, option


def test_the_profiles_defaults_map_to_the_models_defaults() -> None:
    """Only the expander differs: the profile's default is DOKS' ``random``."""
    mapped = autoscaling_options(AutoscalerSpec())
    assert replace(mapped, expander=AutoscalingOptions().expander) == AutoscalingOptions()
