"""The profile, ``gpuscale.yaml``: what manifests do not say (node pools, GPU prices,
provisioning and start-up times, per-replica capacity, Prometheus' scrape interval),
validated, with a documented default for every field. Pure.
"""
