"""The cluster autoscaler's flag defaults, in one place.

Two things describe the cluster autoscaler's settings: the profile users write
(:class:`gpuscale.profile.AutoscalerSpec`) and the controller model's options
(:class:`gpuscale.controllers.cluster_autoscaler.AutoscalingOptions`), which the
simulator takes as they are (the profile maps onto them in
:func:`gpuscale.sim.inputs.autoscaling_options`). Both take their defaults from here, so
they cannot drift apart. The module imports nothing: the profile
reads it without paying for the controller models (``gpuscale profile show`` stays
light), and the import contracts hold (controllers import neither the profile nor the
manifests; the profile may import this leaf).

Values: kubernetes/autoscaler cluster-autoscaler 1.33, ``FAQ.md`` flag table and
``config/flags/flags.go``; the two scale-up buffers are constants of
``core/static_autoscaler.go`` (``unschedulablePodTimeBuffer``,
``unschedulablePodWithGpuTimeBuffer``), not flags.
"""

from __future__ import annotations

__all__ = [
    "EXPANDER",
    "MAX_GRACEFUL_TERMINATION_S",
    "MAX_NODE_PROVISION_TIME_S",
    "NEW_POD_SCALE_UP_DELAY_S",
    "SCALE_DOWN_DELAY_AFTER_ADD_S",
    "SCALE_DOWN_DELAY_AFTER_DELETE_S",
    "SCALE_DOWN_DELAY_AFTER_FAILURE_S",
    "SCALE_DOWN_GPU_UTILIZATION_THRESHOLD",
    "SCALE_DOWN_UNNEEDED_TIME_S",
    "SCALE_DOWN_UTILIZATION_THRESHOLD",
    "SCAN_INTERVAL_S",
    "UNSCHEDULABLE_POD_TIME_BUFFER_S",
    "UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S",
]

SCAN_INTERVAL_S = 10.0
"""``--scan-interval``."""
UNSCHEDULABLE_POD_TIME_BUFFER_S = 2.0
"""``unschedulablePodTimeBuffer``: no scale-up while the oldest pending pod is younger."""
UNSCHEDULABLE_POD_WITH_GPU_TIME_BUFFER_S = 30.0
"""``unschedulablePodWithGpuTimeBuffer``: the same for pods requesting GPUs."""
NEW_POD_SCALE_UP_DELAY_S = 0.0
"""``--new-pod-scale-up-delay``."""
SCALE_DOWN_UNNEEDED_TIME_S = 600.0
"""``--scale-down-unneeded-time``."""
SCALE_DOWN_DELAY_AFTER_ADD_S = 600.0
"""``--scale-down-delay-after-add``."""
SCALE_DOWN_DELAY_AFTER_DELETE_S = 0.0
"""``--scale-down-delay-after-delete`` (upstream: the scan interval's value when unset;
gpuscale's models have always used 0, see the FAQ's table)."""
SCALE_DOWN_DELAY_AFTER_FAILURE_S = 180.0
"""``--scale-down-delay-after-failure``."""
SCALE_DOWN_UTILIZATION_THRESHOLD = 0.5
"""``--scale-down-utilization-threshold``."""
SCALE_DOWN_GPU_UTILIZATION_THRESHOLD = 0.5
"""``--scale-down-gpu-utilization-threshold``."""
MAX_NODE_PROVISION_TIME_S = 900.0
"""``--max-node-provision-time``."""
MAX_GRACEFUL_TERMINATION_S = 600.0
"""``--max-graceful-termination-sec``."""
EXPANDER = "least-waste"
"""``--expander`` (DOKS defaults to ``random``; the profile says so for DOKS)."""
