"""commons: a memory for coding agents that learns from their mistakes, and a commons to share it."""

__version__ = "0.1.0"
