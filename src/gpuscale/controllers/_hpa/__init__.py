"""Private implementation of :mod:`gpuscale.controllers.hpa`, split by upstream file.

``gonum`` (with ``gpuscale._gomath``, the Go number semantics the models share) and
``quantity`` reproduce the Go and apimachinery arithmetic the controller relies on;
``spec`` holds the autoscaling/v2 types and their API defaults; ``replica_calculator``,
``behavior`` and ``controller`` follow the upstream files of the same names. Import the
public names from ``gpuscale.controllers.hpa``.
"""
