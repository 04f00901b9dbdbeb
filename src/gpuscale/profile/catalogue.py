"""Built-in catalogue of DigitalOcean Droplet sizes used as node-pool defaults.

A node pool in the profile names a size slug; when the slug is here, its GPU vendor and
model, GPUs per node, vCPUs, memory and hourly price need not be written. A profile's
own ``catalogue:`` entries add sizes or override these by slug.

Sources (GPU slugs: DigitalOcean's Kubernetes and Droplet release notes, Nov 2025):

- GPU list prices: docs.digitalocean.com/products/droplets/details/pricing/, validated
  28 May 2026 (MI300X $1.99, MI300X×8 $15.92, H100 $3.39, H100×8 $23.92, L40S $1.57),
  and the 22 Apr 2025 version of the same page (RTX 4000 Ada $0.76, RTX 6000 Ada $1.89).
- vCPU and memory of GPU sizes, and the CPU sizes' prices (monthly list price / 672 h):
  DigitalOcean's published plan tables, not present in the stored sources; treat them as
  approximate and override them in the profile, or read ``GET /v2/sizes`` (which has
  ``price_hourly``, ``vcpus``, ``memory`` and ``gpu_info``) before relying on them.
- Prices change. DigitalOcean advises reading ``price_hourly`` from ``/v2/sizes`` at run
  time; :data:`PRICES_READ` says when these were read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["CATALOGUE", "DOKS_LABEL_DOMAIN", "PRICES_READ", "GpuVendor", "Size", "size_for"]

GpuVendor = Literal["amd", "nvidia", "none"]

DOKS_LABEL_DOMAIN = "doks.digitalocean.com"
"""Domain of the labels DOKS puts on its nodes (``gpu-brand``, ``gpu-model``, ``node-pool``)."""

PRICES_READ = "2026-05-28"
"""The date the GPU list prices below were read (pricing page 'validated on')."""

_GIB = 1024.0**3


@dataclass(frozen=True)
class Size:
    """A Droplet size as a Kubernetes node: what it offers and what it costs."""

    slug: str
    gpu_vendor: GpuVendor
    gpu_model: str | None
    gpus: int
    vcpus: float
    memory: float
    """Bytes."""
    price_per_hour: float
    """US dollars per node-hour, list price."""
    prices_read: str = PRICES_READ
    note: str = ""


CATALOGUE: tuple[Size, ...] = (
    Size("gpu-mi300x1-192gb", "amd", "mi300x", 1, 20, 240 * _GIB, 1.99),
    Size("gpu-mi300x8-1536gb", "amd", "mi300x", 8, 160, 1920 * _GIB, 15.92),
    Size("gpu-h100x1-80gb", "nvidia", "h100", 1, 20, 240 * _GIB, 3.39),
    Size("gpu-h100x8-640gb", "nvidia", "h100", 8, 160, 1920 * _GIB, 23.92),
    Size("gpu-l40sx1-48gb", "nvidia", "l40s", 1, 8, 64 * _GIB, 1.57),
    Size("gpu-4000adax1-20gb", "nvidia", "rtx4000-ada", 1, 8, 32 * _GIB, 0.76, "2025-04-22"),
    Size("gpu-6000adax1-48gb", "nvidia", "rtx6000-ada", 1, 8, 64 * _GIB, 1.89, "2025-04-22"),
    Size("s-2vcpu-4gb", "none", None, 0, 2, 4 * _GIB, round(24 / 672, 5)),
    Size("s-4vcpu-8gb", "none", None, 0, 4, 8 * _GIB, round(48 / 672, 5)),
    Size("s-8vcpu-16gb", "none", None, 0, 8, 16 * _GIB, round(96 / 672, 5)),
)
"""Sizes gpuscale knows by slug. MI325X, MI350X, H200 and B300 are sold per contract and
are not listed: add them to the profile's ``catalogue:`` with your price."""


def size_for(slug: str, extra: tuple[Size, ...] = ()) -> Size | None:
    """The size called ``slug``, looking at ``extra`` (the profile's entries) first."""
    for size in (*extra, *CATALOGUE):
        if size.slug == slug:
            return size
    return None
