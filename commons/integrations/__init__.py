"""Where commons meets the agents it serves: their folders, settings and hooks.

``claude_code`` knows Claude Code's layout (the config folder, project slugs, auto memory and the
settings that move or disable it); ``claude_settings`` edits Claude Code's JSON settings as text
in, text out, for `commons setup claude-code`; ``session_end`` is what the `SessionEnd` hook does.
See docs/claude-code.md for the documented behaviour each rule follows.
"""
