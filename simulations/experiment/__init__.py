"""The two-agent experiment (design paper §7.5): real homes, the real CLI, SQLite and daemons.

Unlike the network simulator beside it (``simulations/``, the pure core in memory), this harness
runs whole nodes as subprocesses: ``python -m simulations.experiment --json`` (``make experiment``).
"""
