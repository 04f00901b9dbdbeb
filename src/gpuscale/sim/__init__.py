"""The discrete-event simulator: an event heap in virtual time running the controller
models at their real periods over modelled pods and nodes. Pure.
"""
