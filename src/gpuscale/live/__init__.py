"""Commands against a real cluster: deploy, verify, load and watch, through the Kubernetes
client and Prometheus' HTTP API.
"""
