"""Private implementation of :mod:`gpuscale.controllers.hpa`, split by upstream file.

``gonum`` (with ``gpuscale._gomath``, the Go number semantics the models share) and
``quantity`` reproduce the Go and apimachinery arithmetic the controller relies on;
``spec`` holds the autoscaling/v2 types and their API defaults; ``replica_calculator``,
``behavior`` and ``controller`` follow the upstream files of the same names
(``behavior``: the normalization half of ``horizontal.go``; ``controller``: its
``reconcileAutoscaler``). Two more follow parts of ``horizontal.go``: ``compute_replicas``
its ``computeReplicasForMetrics`` (each metric's proposal, then their maximum) and
``status`` its ``setCondition``/``removeCondition`` with the status and result types a
sync fills. Import the public names from ``gpuscale.controllers.hpa``.
"""
