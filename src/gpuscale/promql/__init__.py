"""A PromQL engine that answers as Prometheus does: an in-memory series store and an
evaluator on ``promql-parser``'s syntax tree. Pure.
"""
