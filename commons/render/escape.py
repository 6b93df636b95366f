"""Words that cannot become structure: a lesson's text as one line of inert Markdown.

Every render target writes a lesson's text into a Markdown file that something parses before the
model reads it, and the model itself reads structure in the raw text. :func:`inline` turns any
text (a peer's, a hostile tool's output, what MCP ``remember`` was handed) into one line that each
reader takes as plain words, and nothing else:

* **Unicode and controls.** NFKC first (a fullwidth ``＜`` or ``＠`` is the ASCII one afterwards,
  and is escaped as such); ANSI escape sequences (CSI, OSC, two-byte) are dropped, other control
  characters become spaces and format characters (zero-width, bidi overrides) are dropped.
* **One line.** Every run of whitespace, newlines included, becomes one space: a lesson cannot
  open a heading, a fence, a list or a quote on a line of its own.
* **Line start.** The line begins inside commons' own prefix (``- [`` in ``MEMORY.md``, ``- `` in
  ``AGENTS.md``, nothing in a lesson's own file), so a leading ``#``, ``>``, ``-``, ``+``, ``*``,
  ``_``, ``=``, ``|``, three backticks or tildes, or ``1.`` is backslash-escaped: ``- # x`` would be
  a heading inside a list item, ``- ```` a fence. One backtick is left: most lessons start with a
  command in a code span, and on one line it cannot open a block.
* **HTML.** ``<`` before a letter, ``!``, ``/`` or ``?`` is written ``&lt;``: no tag, no HTML
  comment (so no commons marker: they are HTML comments), no autolink ``<file:///…>``. The raw
  bytes hold no ``<!--`` at all, which matters because Claude Code strips comments from the raw
  text, whatever a Markdown parser would say. One shape is left as written: a placeholder, a bare
  lowercase word in angle brackets that is no HTML element (``<password>``, ``<branch>``,
  ``<user@host>``: what the scrubber and generalisation write). It has no attribute, no scheme and
  no content model, so no reader acts on it, and the model reads ``<branch>`` better than
  ``&lt;branch>``; ``<script>``, ``<details>`` or ``<b>`` are escaped.
* **Links.** ``[`` and ``]`` are escaped, so no inline link, reference link or image can form,
  whatever its scheme (``file:``, ``javascript:``, ``data:``); a bare ``https://`` URL stays a URL.
* **Imports.** An ``@`` at the start or after whitespace is written ``\\@``. Gemini CLI's memory
  import processor (``packages/core/src/utils/memoryImportProcessor.ts``, ``findImports``) takes
  ``@`` as an import only at the start or after a space, tab or newline, followed by ``.``, ``/`` or
  a letter; Claude Code's ``CLAUDE.md`` imports match ``(?:^|\\s)@((?:[^\\s\\\\]|\\\\ )+)`` outside
  code. With a backslash before it, neither reads an import, and in Markdown ``\\@`` shows ``@``.
  Code spans are not trusted to hide one: Gemini pairs backticks over the whole file, so another
  line's stray backtick moves what it thinks is code.
* **Backslashes** before ASCII punctuation are doubled first, so a text cannot undo the escapes
  above (``\\[`` in a text stays a backslash and a bracket); ``C:\\Users`` is left as it is.

Backticks inside the line are kept: code spans are how lessons name commands, and on one line they
cannot open a block. The escaping is for the file; the stored text is never changed.
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["inline", "strip_controls"]

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks (to BEL or ST)
    r"|\x1b[P^_][^\x1b]*(?:\x1b\\)?"  # DCS, PM, APC strings
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # the C1 form of CSI
)
_PUNCT_AFTER_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z!/?])")
_PLACEHOLDER = re.compile(r"[a-z][a-z0-9_.@-]*>")  # what may follow a `<` left as written
# Every HTML element name (WHATWG, with the obsolete ones browsers still parse, and SVG/MathML roots).
_HTML_ELEMENTS = frozenset("""
a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big blink
blockquote body br button canvas caption center cite code col colgroup data datalist dd del details
dfn dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset h1 h2
h3 h4 h5 h6 head header hgroup hr html i iframe image img input ins isindex kbd keygen label legend
li link listing main map mark marquee math menu menuitem meta meter multicol nav nextid nobr noembed
noframes noscript object ol optgroup option output p param picture plaintext pre progress q rb rp
rt rtc ruby s samp script search section select slot small source spacer span strike strong style
sub summary sup svg table tbody td template textarea tfoot th thead time title tr track tt u ul var
video wbr xmp
""".split())
_IMPORT = re.compile(r"(?:(?<=\s)|^)@")
_LEADING_BLOCK = re.compile(r"^(?:[#>\-+*_=|]|```|~~~|\d{1,9}(?=[.)]))")


@functools.lru_cache(maxsize=4096)  # every render escapes the same lessons' words again
def strip_controls(text: str) -> str:
    """``text`` in NFKC with ANSI escapes and format characters removed and other control
    characters (newlines too) turned into spaces."""
    text = _ANSI.sub("", unicodedata.normalize("NFKC", text))
    out = []
    for char in text:
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        out.append(" " if category == "Cc" else char)
    return "".join(out)


def _tag_open(found: re.Match[str]) -> str:
    rest = _PLACEHOLDER.match(found.string, found.end())
    if rest is not None and rest.group()[:-1] not in _HTML_ELEMENTS:
        return "<"
    return "&lt;"


def inline(text: str) -> str:
    """``text`` as one line of Markdown that every reader takes as words (see the module)."""
    line = " ".join(strip_controls(text).split())
    line = _PUNCT_AFTER_BACKSLASH.sub(r"\\\\", line)
    line = _TAG_OPEN.sub(_tag_open, line)
    line = line.replace("[", "\\[").replace("]", "\\]")
    line = _IMPORT.sub(r"\\@", line)
    found = _LEADING_BLOCK.match(line)
    if found:
        stop = found.end()
        line = ("\\" + line) if not found.group().isdigit() else line[:stop] + "\\" + line[stop:]
    return line
