"""Talking to and running a real Prometheus: an HTTP API client (httpx) and a launcher for
the Debian ``prometheus`` binary on loopback.
"""
