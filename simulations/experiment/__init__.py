"""The N-agent experiment (issue #17; design paper §7.5): real homes, the real CLI, SQLite and daemons.

Unlike the network simulator beside it (``simulations/``, the pure core in memory), this harness
runs whole nodes: ``python -m simulations.experiment --json`` (``make experiment``).
"""
