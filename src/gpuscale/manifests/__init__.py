"""Kubernetes, KEDA and prometheus-operator manifests: load (with file and line for every
key), validate against their schemas, scaffold and render. Pure: reads only the text it
is given.
"""
