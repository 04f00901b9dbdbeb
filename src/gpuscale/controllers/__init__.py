"""Exact models of the controllers that decide replica and node counts: the HPA, KEDA, the
ReplicaSet controller, the scheduler, the cluster autoscaler and kube-state-metrics.
Each module names the upstream code it follows. Pure: no clock, no I/O.
"""

__all__: list[str] = []
