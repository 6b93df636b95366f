"""How each agent CLI reads the Markdown files commons writes, as far as it matters to what a lesson
could smuggle in: which ``@path`` it would import, what it strips before the model reads.

Written from each CLI's rule, for tests that a rendered file is inert as its reader reads it:

* Gemini CLI (``packages/core/src/utils/memoryImportProcessor.ts``, 0.61): ``findImports`` walks
  every ``@``; one counts when it is the first character or follows a space, tab, CR or LF, and the
  path after it (up to the next of those) starts with ``.``, ``/`` or an ASCII letter.
  ``findCodeRegions`` pairs runs of backticks of the same length over the whole file (lazily, across
  lines); an ``@`` inside such a region is left as text.
* Claude Code (``CLAUDE.md`` imports, memory files): ``(?:^|\\s)@((?:[^\\s\\\\]|\\\\ )+)`` on the
  text outside fenced code blocks and code spans, the path starting with ``./``, ``~/``, ``/`` or a
  character of ``[A-Za-z0-9._-]``; HTML comments (``<!--[\\s\\S]*?-->``) are removed from what the
  model reads. Both patterns are in the 2.1.197 binary, beside ``codespan`` (docs/claude-code.md).
"""

from __future__ import annotations

import re

_GEMINI_SPACE = " \t\n\r"
_GEMINI_CODE = re.compile(r"(`+)([\s\S]*?)\1")
_CLAUDE_IMPORT = re.compile(r"(?:^|\s)@((?:[^\s\\]|\\ )+)")
_CLAUDE_FENCE = re.compile(r"^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$", re.MULTILINE)
_CLAUDE_CODESPAN = re.compile(r"(`+)[^`][\s\S]*?\1")
_HTML_COMMENT = re.compile(r"<!--[\s\S]*?-->")


def gemini_imports(content: str) -> list[str]:
    """The paths Gemini CLI's memory import processor would import from ``content``."""
    code = [(m.start(), m.end()) for m in _GEMINI_CODE.finditer(content)]
    found, i = [], 0
    while (i := content.find("@", i)) >= 0:
        if i > 0 and content[i - 1] not in _GEMINI_SPACE:
            i += 1
            continue
        j = i + 1
        while j < len(content) and content[j] not in _GEMINI_SPACE:
            j += 1
        path = content[i + 1: j]
        inside_code = any(s <= i < e for s, e in code)
        if path and (path[0] in "./" or ("A" <= path[0] <= "Z") or ("a" <= path[0] <= "z")) and not inside_code:
            found.append(path)
        i = j + 1
    return found


def claude_imports(content: str) -> list[str]:
    """The paths Claude Code would import from ``content`` (code blocks and spans skipped)."""
    text = _CLAUDE_CODESPAN.sub(" ", _CLAUDE_FENCE.sub("", content))
    return [m.group(1) for m in _CLAUDE_IMPORT.finditer(text)
            if re.match(r"(?:\./|~/|/(?!/)|[A-Za-z0-9._-])", m.group(1))]


def claude_model_view(content: str) -> str:
    """What the model reads of a memory file: HTML comments removed."""
    return _HTML_COMMENT.sub("", content)
