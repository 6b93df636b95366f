"""Render targets: where lessons are written for an agent to read.

``memory_folder`` writes a memory folder (an index ``MEMORY.md`` and one file per lesson), the
layout Claude Code's auto memory reads. A new target is a module here with the same shape: it is
handed the lessons to show and returns what it wrote; ``commons.node.rendering`` decides what goes in.
"""
