"""Commands against a real cluster: install, deploy, verify, load and watch, through the
Kubernetes client, Helm and Prometheus' HTTP API.

Modules, reusable by every live command (nothing here is imported by the package
``__init__``, so ``import gpuscale.live`` stays cheap):

- :mod:`~gpuscale.live.kubeconfig`: which kubeconfig file and context, read as kubectl
  does (files only, one-line errors).
- :mod:`~gpuscale.live.kube`: the client from a kubeconfig or the pod's service account
  (:func:`~gpuscale.live.kube.connect`), raw JSON reads and port-forward streams
  (:class:`~gpuscale.live.kube.Kube`), label selectors, and the one-line errors for
  API answers (:func:`~gpuscale.live.kube.kube_error`, ``status_error``).
- :mod:`~gpuscale.live.portforward`: a loopback port forwarded to a pod's port.
- :mod:`~gpuscale.live.events`: events as values, and the controller decision each reports.
- :mod:`~gpuscale.live.helm`: ``gpuscale install`` (the plan is pure; the runner runs helm).
- :mod:`~gpuscale.live.load`: ``gpuscale load`` (setter call, open-loop sender, Service
  endpoints, a pool of port-forwards).
- :mod:`~gpuscale.live.watch` (pure) and :mod:`~gpuscale.live.watcher` (I/O):
  ``gpuscale watch`` and its timeline.
- :mod:`~gpuscale.live.discovery`: which REST path serves a kind (discovery, cached).
- :mod:`~gpuscale.live.apply` (pure) and :mod:`~gpuscale.live.applier` (I/O):
  ``gpuscale deploy`` (server-side apply in dependency order).
- :mod:`~gpuscale.live.verify` (pure) and :mod:`~gpuscale.live.verifier` (I/O):
  ``gpuscale verify`` (every link of the chain, read-only).
"""

__all__: list[str] = []
