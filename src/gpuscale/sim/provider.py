"""What the cloud provider writes on every node: the labels naming its pool and the
``spec.providerID`` kube-state-metrics reports as ``kube_node_info{provider_id}``. Pure.

Data, one entry per ``cluster.provider`` of the profile: DOKS labels each node with its
pool (``doks.digitalocean.com/node-pool``) and gives it a ``digitalocean://<droplet id>``
provider ID (DigitalOcean's cloud controller manager, ``digitalocean/digitalocean-cloud-
controller-manager`` ``cloud-controller-manager/do/common.go``); a generic cluster's
nodes carry only what the profile's pools give them and the kubelet's own
``kubernetes.io/hostname``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROVIDERS", "NodeProvider"]


@dataclass(frozen=True, slots=True)
class NodeProvider:
    """How one provider marks its nodes."""

    name: str
    pool_label: str | None
    """The label whose value is the node's pool name (None: the provider sets none)."""
    provider_id_prefix: str
    """``spec.providerID`` is this followed by the node's number ("" writes none)."""

    def node_labels(self, pool_labels: dict[str, str], pool: str, node: str) -> dict[str, str]:
        """A node's labels: its pool's, the kubelet's hostname, and the provider's pool label."""
        labels = {**pool_labels, "kubernetes.io/hostname": node}
        if self.pool_label is not None:
            labels[self.pool_label] = pool
        return labels

    def template_labels(self, pool_labels: dict[str, str], pool: str) -> dict[str, str]:
        """The labels of a pool's template node (what the cluster autoscaler simulates)."""
        labels = dict(pool_labels)
        if self.pool_label is not None:
            labels[self.pool_label] = pool
        return labels

    def provider_id(self, index: int) -> str:
        """The node's ``spec.providerID``."""
        return f"{self.provider_id_prefix}{index}" if self.provider_id_prefix else ""


PROVIDERS = {
    "doks": NodeProvider("doks", "doks.digitalocean.com/node-pool", "digitalocean://"),
    "generic": NodeProvider("generic", None, ""),
}
"""The providers by the profile's ``cluster.provider``."""
