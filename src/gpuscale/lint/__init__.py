"""``gpuscale lint``: autoscaling mistakes in manifests, each with file:line, why and the fix."""
