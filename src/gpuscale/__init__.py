"""gpuscale: autoscale GPU workloads on Kubernetes with KEDA and Prometheus, and know
before paying for a GPU-hour how that setup will behave.

The public Python API is what ``__all__`` lists; everything else is private and may
change. Most users meet gpuscale through its command, ``gpuscale --help``.
"""

from gpuscale.errors import (
    GpuscaleError,
    InputError,
    KeyPath,
    ManifestError,
    ProfileError,
    RetryableError,
    UnavailableError,
    format_key_path,
)

__version__ = "0.1.0"

__all__ = [
    "GpuscaleError",
    "InputError",
    "KeyPath",
    "ManifestError",
    "ProfileError",
    "RetryableError",
    "UnavailableError",
    "__version__",
    "format_key_path",
]
