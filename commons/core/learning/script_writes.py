"""The files an inline script writes: ``python - <<'PY' … Path(x).write_text(…)``, ``node -e
"fs.writeFileSync('x', …)"``, ``ruby -e "File.write('x', …)"``.

An agent whose edit tool failed (the patch would not apply, the file tool refused) often rewrites
the file from a script instead; that script is the edit tried again (`commons.core.learning.
evidence.retry_part`). A path is taken only where the code writes it (a write call on it, or on a
name bound to it), never from a file it only reads.

Pure functions over one shell sub-command's text.
"""

from __future__ import annotations

import re

# A script run inline: code after -c/-e, or a here-document (`python - <<'PY'`, `node <<'JS'`).
_SCRIPT = re.compile(r"^\s*(?:sudo\s+)?(?:\S*/)?(python[\d.]*|node|ruby|perl|deno|bun)\b")
_INLINE_CODE = re.compile(r"\s-[ce]\s|<<-?\s*['\"]?[A-Za-z_]\w*")
_Q = r"(?P<q>['\"`])(?P<path>[^'\"`\n]+?)(?P=q)"
# Names bound to a path: `p = Path("x")`, `path = pathlib.Path('x')`, `const out = "x"`, `f = 'x'`.
_BOUND = re.compile(r"(?:\b(?:const|let|var)\s+)?\b(?P<name>[A-Za-z_]\w*)\s*=\s*(?:(?:pathlib\.)?Path\(\s*)?" + _Q)
# Writes of a literal path.
_WRITES_LITERAL = (
    re.compile(r"(?:pathlib\.)?Path\(\s*" + _Q + r"\s*\)\s*\.write_(?:text|bytes)\("),
    re.compile(r"\bopen\(\s*" + _Q + r"(?=\s*,\s*(?:mode\s*=\s*)?['\"][wax])"),
    re.compile(r"\b(?:fs\.)?(?:writeFileSync|writeFile|appendFileSync)\(\s*" + _Q),
    re.compile(r"\bDeno\.writeTextFile(?:Sync)?\(\s*" + _Q),
    re.compile(r"\bBun\.write\(\s*" + _Q),
    re.compile(r"\bFile\.write\(\s*" + _Q),
    re.compile(r"\bFile\.open\(\s*" + _Q + r"(?=\s*,\s*['\"][wa])"),
)
# Writes of a bound name.
_WRITES_NAME = (
    re.compile(r"\b(?P<name>[A-Za-z_]\w*)\.write_(?:text|bytes)\("),
    re.compile(r"\bopen\(\s*(?P<name>[A-Za-z_]\w*)(?=\s*,\s*(?:mode\s*=\s*)?['\"][wax])"),
    re.compile(r"\b(?:fs\.)?(?:writeFileSync|writeFile|appendFileSync)\(\s*(?P<name>[A-Za-z_]\w*)\s*,"),
    re.compile(r"\bFile\.write\(\s*(?P<name>[A-Za-z_]\w*)\s*,"),
)


def is_inline_script(segment: str) -> bool:
    """Whether ``segment`` runs code written into the command (``-c``/``-e`` or a here-document)."""
    return bool(_SCRIPT.match(segment)) and bool(_INLINE_CODE.search(segment))


def script_writes(segment: str) -> list[tuple[str, str]]:
    """(path, the write that names it) for each file the inline script of ``segment`` writes; []
    for a segment that runs no inline script."""
    if not is_inline_script(segment):
        return []
    found = [(m.group("path"), m.group(0)) for rx in _WRITES_LITERAL for m in rx.finditer(segment)]
    bound = {m.group("name"): m.group("path") for m in _BOUND.finditer(segment)}
    found += [(bound[m.group("name")], m.group(0)) for rx in _WRITES_NAME for m in rx.finditer(segment)
              if m.group("name") in bound]
    return list(dict.fromkeys(found))


def script_write_step(segment: str, path_name: str) -> str | None:
    """A script's write of a file named short: its program and the write (``python …
    Path('ui/src/App.tsx').write_text``, ``node … fs.writeFileSync(out (ui/src/App.tsx)``), or None
    when the script writes no file of that name."""
    program = _SCRIPT.match(segment)
    for path, write in script_writes(segment):
        if program and path.rstrip("/").rsplit("/", 1)[-1] == path_name:
            write = " ".join(write.split()).rstrip("(, ")
            write += ", …)" if write[-1] in "'\"`" else ""
            return f"{program.group(1)} … {write}" + ("" if path in write else f" ({path})")
    return None
