"""Which line of a failed tool's output says what failed, and which sub-command it belongs to.

Pure functions over strings. A tool's output opens with whatever the tool printed first —
preambles ("Getting extensions in current project..."), progress ("Compiling 41 files (.ex)"),
banners, warnings — and the failure itself sits later: an ``error:`` line, a traceback's last
line, pytest's ``E`` lines and short summary, ``npm error``, a hook's finding. `failure_line`
picks that line by rules tried in order of how sure they are:

1. a tool's input validation error: the issue it names, not its header;
2. pytest's short summary (``FAILED path::test - message``) when it carries a message;
3. a traceback's last line (the exception and its message);
4. the first line with a failure marker (``error``, ``fatal``, ``E   ``, ``XError:``, ``npm error``,
   ``** (Mix)``, ``[rejected]``); a marker with no words of its own ("error ->") takes the next line; a
   logger's record with its level in a column (``ERROR | …``) only when no other line has a marker;
5. a hook reported as failed (pre-commit's ``hook-id......Failed``) with what it found;
6. the first line where a program the command ran names itself (``adb: more than one device/emulator``);
7. the first line that is neither noise nor a warning.

`attribute` names the sub-command of a compound shell command (``a && b``, ``;``, pipes) that
the output shows failed; `is_informative` is the measure the lessons report uses.
"""

from __future__ import annotations

import functools
import re

from commons.core.learning.scope import command_head, is_redirection, past_prefixes, remote_command, shell_words
from commons.core.policy import clip, cut, scrub

FAILURE_CHARS = 300

_EXIT = re.compile(r"^(?:Error: )?Exit code (-?\d+)\s*$", re.MULTILINE)
_TAGS = re.compile(r"</?tool_use_error>")

# Lines that carry no meaning of their own: exit codes, rules, pytest headers, traceback frames,
# npm's code/path lines, git hints, the preambles and progress build tools print, and markup or
# minified code a request printed (a stylesheet's `a{x:1;y:2}b{z:3}`: braces and colons, and semicolons or no
# sentence; an error object's JSON has no semicolons and says a sentence).
_NOISE = re.compile(
    r"""^(?:
        (?:Error:\s*)?Exit\ code\ -?\d+
      | [=\-_*~#.+|>]{3,}.*
      | (?:platform|rootdir|configfile|cachedir|plugins|collected|collecting|asyncio|testpaths|cachedir)\b.*
      | Traceback\ \(most\ recent\ call\ last\):
      | File\ ".*
      | \^+ | ~+\^*~*
      | npm\ (?:ERR!|error)(?:\s+(?:code|errno|syscall|path|A\ complete\ log)\b.*)?
      | npm\ (?:WARN|warn)\b.*
      | >\ .*
      | hint:.*
      | To\ \S+
      | Getting\ extensions\ in\ current\ project.*
      | (?:Compiling|Compiled|Checking|Generated|Resolving|Resolved|Downloading|Downloaded|Fetching|
         Installing|Building|Built|Preparing|Collecting|Using|Running|Finished|Analyzing|Loading|
         Randomized\ with\ seed|Including\ tags|Excluding\ tags|Updating|Locking|Audited|Prepared|
         Uninstalled|Installed|Creating|Writing|Pulling|Pulled|Extracting|Waiting|Verifying|Starting|Stopping|
         Recreating|Attaching|Digest:|Status:)\b.*
      | \S+\ +(?:Pulling|Pulled|Waiting|Creating|Created|Starting|Started|Stopping|Stopped|Removing|Removed|
                  Recreated?|Building|Built|Downloading|Extracting|Verifying|Pull\ complete|Already\ exists|
                  Download\ complete|Pulling\ fs\ layer|Verifying\ Checksum)\b.*
      | -\ (?:Local|Network|Environments|Experiments):\ .* | ✓\ .* | (?i:suggestion|tip):\ .*
      | \|[\s^~|+\-]*
      | (?:\[[^\]]*\]\s*)+
      | FAIL\s+\S+\s+(?:\[[^\]]*\]|[\d.]+s) | FAIL
      | \#\ [\w./\-]+
      | RUN\ +v\d[\w.\-]*\b.* | (?:DEV|DONE|PASS)\ +v?\d.*
      | \[\d+/\d+\].* | \[(?:INFO|WARNING|WARN|\+)\].* | [⠿✔✘⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏].*
      | \d+\ (?:files?|tests?|examples?)\ (?:reformatted|left\ unchanged|would\ be\ reformatted)\b.*
      | (?:\S+:\d+:\d+:\ )?(?i:warning)\b.*
      | \S*Warning:.*
      | ▲\ .* | Now\ using\ node\ v.* | Found\ '[^']*\.nvmrc'.*
      | .*\b[Ii]n\ (?:function|member\ function|constructor)\ [`'‘"][^`'’"]*[`'’"]:? | In\ file\ included\ from\ .*
      | (?:\S+:\ )?In\ function\ .*: | \S+:\d+:\ running\ "\S+":\ exit\ status\ \d+
      | \*\*\ (?!\().* | .*\bpost-quantum\b.* | .*store\ now,\ decrypt\ later.*
      | ;\s*<<>>\s*DiG.* | ;;\s*(?:global\ options|Got\ answer|QUESTION\ SECTION|ANSWER\ SECTION|AUTHORITY\ SECTION|
                            Query\ time|SERVER|WHEN|MSG\ SIZE|flags|OPT\ PSEUDOSECTION).*
      | BusyBox\ v.* | (?i:usage):?\ .* | Try\ '[^']+\ --help'.*
      | v?\d+(?:\.\d+){1,3}(?:[-+][\w.]+)? | (?i:node|npm|pnpm|yarn|bun|deno|python|go\ version|git\ version|ruby|rustc|cargo|
                                               java|openjdk|gcc|clang)\ v?\d+(?:\.\d+)+\b.*
      | (?:Wall\ time|Total\ output\ lines|Exit\ code):\ .* | Output: | Chunk\ ID:\ .*
      | Output\ too\ large\.\ Showing\ .*
      | %\s+Total\s+%\s+Received.* | .*--:--:--.* | \s*Dload\s+Upload.*
      | go:\ (?:downloading|finding|extracting|found)\ .*
      | time="[^"]*"\ level=(?:warning|info|debug|trace)\b.*
      | (?:Hit|Get|Ign):\d+\ .* | [WN]:\ .* | Fetched\ .* | Reading\ (?:package\ lists|state\ information|database)\b.*
      | \(Reading\ database\ .* | Selecting\ previously\ unselected\ .* | (?:Unpacking|Setting\ up|Processing\ triggers\ for)\ .*
      | debconf:\ .* | Need\ to\ get\ .* | After\ this\ operation,.* | \d+\ upgraded,\ \d+\ newly\ installed\b.*
      | The\ following\ (?:NEW\ |additional\ )?packages\ will\ be\ .*
      | --\d{4}-\d\d-\d\d\ [\d:]+--\s+\S+ | Connecting\ to\ \S+.*\.\.\.\ connected\. | Length:\ \d+.* | Saving\ to:\ .*
      | building\ with\ ".*"\ instance\b.* | transferring\ \w+:.* | (?:DONE|CACHED)(?:\ [\d.]+s)? | resolve\ \S+.* | sha256:\S+.*
      | (?:\[internal\]|\[[\w\s.-]*\d+/\d+\])\ .*
      | \+\ (?:CategoryInfo|FullyQualifiedErrorId)\s*:.* | \+\ .*
      | [⚠△].* | [+\-]\ [\w.\-\[\],]+==[\w.+\-]+
      | .*\b(?:have\ been|has\ been|will\ be|are\ being)\ ignored\b.* | .*\b(?:is|are)\ deprecated\b.*
      | (?:\d{4}-\d\d-\d\d[T\ ][\d:,.]+\s+)?(?:\S+\s+)?-?\s*(?:INFO|DEBUG|TRACE)\s+-\s.*
      | .*\s-\s(?:INFO|DEBUG|WARNING|WARN)\s-\s.* | \S+:\d+:\ \S*Warning:.*
      | \s*\d+\s*[|│].*
      | [A-Za-z_]+\.(?:py|ex|exs|js|ts|rs|go)\ [.FEsx]+\s*(?:\[\s*\d+%\])?
      | (?=(?:[^{}]*[{}]){4})(?=(?:[^:]*:){2})(?:(?=(?:[^;]*;){2})|(?!.*\s\w+\s+\w+\s)).*
      # nix realising what a shell or build needs: what it builds, fetches and copies, and the store paths it lists
      | building\ '/nix/store/[^']*'(?:\.\.\.)? | these\ \d+\ (?:paths|derivations)\ will\ be\ (?:fetched|built)\b.*
      | copying\ path\ '/nix/store/.* | /nix/store/\S+ | (?:evaluating|fetching|unpacking|querying)\ .*'\S+'.*\.\.\.
      # cargo's lock file and cache, npm/pnpm/yarn's summaries, pip's notes on what it already has
      | Adding\ \S+\ v\d\S*(?:\ \(.*\))? | Blocking\ waiting\ for\ file\ lock\b.*
      | added\ \d+\ packages?\b.* | (?:up\ to\ date|changed\ \d+\ packages?|removed\ \d+\ packages?),?\ .*audited\b.*
      | found\ 0\ vulnerabilities | \d+\ packages?\ (?:are|is)\ looking\ for\ funding | run\ `npm\ fund`.*
      | Progress:\ resolved\ \d+.* | Packages:\ [+\-]\d+.* | WARN\ +(?:deprecated|Issues?\ with\ peer)\b.* | Done\ in\ [\d.]+m?s\b.*
      | Requirement\ already\ satisfied:\ .* | Obtaining\ \S+.* | Attempting\ uninstall:\ .* | Found\ existing\ installation:\ .*
      | Successfully\ (?:installed|uninstalled|built|tagged)\ .*
      # ESLint's crash banner, vitest's header of each failed test, Playwright's word that its web server did not start
      | Oops!\ Something\ went\ wrong!\ :\( | ESLint:\ v?\d\S* | FAIL\ +\S+\ +>\ .*
      | Error:\ Process\ from\ config\.webServer\ was\ not\ able\ to\ start\b.*
    )$""",
    re.VERBOSE,
)
_MARKER = re.compile(
    r"""^(?:
        (?i:error|fatal|panic)\b
      | \*\*\ \(\w[\w.]*\)
      | E\s{2,}\S
      | FAILED\b | FAIL\b | Failed:
      | (?:\S+:\d+(?::\d+)?:\ )?(?:error|fatal)\b
      | \S*(?:Error|Exception)\b
      | \S*ERR_[A-Z][A-Z_]+\b
      | npm\ (?:ERR!|error)\s+\S
      | !\s*\[(?:remote\ )?rejected\]
      | (?:\S+:\ )*\S+:\ (?i:command\ not\ found|no\ such\ file\ or\ directory|permission\ denied)
      | .*\S:\ (?i:command\ not\ found|no\ such\ file\ or\ directory|permission\ denied)$
      | time="[^"]*"\ level=(?:error|fatal)\b
      | E:\ \S
      | \S+\(\d+,\d+\):\ (?:error|fatal)\b
      | \S+\.\w{1,5}:\d+(?::\d+)?:\ (?!warning|note)\S
      | \S+\ (?:[^\s.]+\ )*\.{3,}\s*Failed
      | \[[A-Z]\]\ [→↗↘↑]\ \S
      | [A-Z][a-z]+\ error:\ \S
      | [\w.\-/]+:\ (?:fatal\ )?error\b
      | [\w.\-/]+:\ (?:could\ not|couldn't|unable\ to)\ \S
      | .*\bundefined\ reference\ to\b | .*\berror\ while\ loading\ shared\ libraries\b
      | \[(?i:error|fatal)\]\ \S
    )""",
    re.VERBOSE,
)
# A marker with nothing after it: "error", "Error:", "error ->", "FAILED".
_BARE_MARKER = re.compile(r"^(?:\W*(?i:error|fatal|failed|failure)\W*)$")
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR)\s+\S+\s+-\s+\S")
_FRAME = re.compile(r'^(?:File ".*|\s+.*)$')
_EXCEPTION = re.compile(r"^(?:[\w.]+(?:Error|Exception|Exit|Interrupt|Warning)|[\w.]+\.[A-Z]\w+)(?::\s*.*)?$")
_VALIDATION = re.compile(r"InputValidationError|failed due to the following issues?:", re.IGNORECASE)
_HOOK_FAILED = re.compile(r"^(\S[^.]*?)\s*\.{3,}\s*Failed$")
_HOOK_FINDING = re.compile(r"^-\s+(?!hook id:|exit code:|duration:)(.+)$")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")


# Codex's words before what a command printed when its sandbox ran it, and Gemini CLI's before a
# shell command's output: framing, not the output.
_SANDBOX_FRAME = re.compile(r"^(?:failed in sandbox|Output): (?=\S)", re.MULTILINE)
# A console's rows padded with spaces to its width, captured with no line ends between them
# (PowerShell under Gemini CLI): a run this long parts two rows, never two columns of a table.
_ROW_PADDING = re.compile(r" {30,}")
# BuildKit's prefix of each line of a step, its number and the seconds into it ("#5 2.345 ERROR: …"),
# and Playwright's of each line its web server printed ("[WebServer] Error: listen EPERM …").
_BUILDKIT_STEP = re.compile(r"^(?:#\d+ (?:\d+\.\d+ )?|\s*\[WebServer\]\s*)", re.MULTILINE)
_CARETS = re.compile(r"^\s*\+?\s*[~^]+\s*$")  # a line pointing at a column ("+      ~"): its spaces are its point


def _lines(text: str) -> list[str]:
    if "\x00" in text:  # UTF-16 read as bytes (Windows tools): the letters are there between NULs
        text = text.replace("\x00", "")
    text = _TAGS.sub("\n", _ANSI.sub("", text))  # colours are no part of what a line says
    text = _BUILDKIT_STEP.sub("", _SANDBOX_FRAME.sub("", text))
    rows = [row for raw in text.splitlines() for row in ((raw,) if _CARETS.match(raw) else _ROW_PADDING.split(raw))]
    # Box-drawing gutters (credo's "┃", compilers' "│") frame a finding; the finding is the line.
    return [" ".join(raw.strip().lstrip("┃│").split()) for raw in rows]


def exit_code_of(text: str) -> int | None:
    found = _EXIT.search(text)
    return int(found.group(1)) if found else None


def failure_line(text: str, command: str = "") -> tuple[str, int | None]:
    """The line of a failed tool's output that says what failed, and the exit code it reports.
    ``command``: the sub-command the failure belongs to, when known (not used yet by every rule)."""
    exit_code = exit_code_of(text)
    lines = _lines(text)
    line = _choose(lines, frozenset(program_of(part) for part in segments(command)) - {""})
    if line:
        return _ends_of(line), exit_code  # scrubbed, then cut: a cut first can halve a key
    return (f"Exit code {exit_code}" if exit_code is not None else ""), exit_code


def _ends_of(line: str) -> str:
    """A line within `FAILURE_CHARS`: a long one keeps its head and its tail, where a chain of
    causes ("Cannot start service x: failed to create task: … apparmor failed to apply") ends in
    the one that says why; and the message an error term printed whole carries inside it
    (`embedded_message`), which neither end may hold."""
    line = scrub(line)  # scrubbed, then cut: a cut first can halve a key
    if len(line) <= FAILURE_CHARS:
        return line
    head = cut(line, 120 if line.count(": ") >= 4 else 200)  # a chain of causes: more of its end
    tail = _word_tail(line, FAILURE_CHARS - len(head) - 1)
    said = embedded_message(line, beyond=len(head.removesuffix("…")))
    if said is not None and said.start() < len(line) - len(tail):
        # Neither end holds the message the term carries: the ends give it room, the head first.
        words = cut(said.group(0), FAILURE_CHARS // 3)  # with its key: a shorter quote of the line finds it again
        head = cut(line[:said.start()], (FAILURE_CHARS - len(words)) // 2)
        tail = _word_tail(line[said.end():], FAILURE_CHARS - len(head) - len(words) - 2)
        return f"{head} {words} {tail}"
    return f"{head} {tail}"


def _word_tail(line: str, n: int) -> str:
    """The last ``n`` characters of ``line``, from a word's start."""
    tail = line[-n:]
    return tail[tail.find(" ") + 1:] if " " in tail[:30] else tail


# The message an error term printed whole carries (Elixir's `{:shutdown, {:failed_to_start_child, …,
# %Mix.Error{message: "failed to open a TCP socket …, reason: :eperm"}}}`, a JSON error object's
# `"message": "…"`, Python's `message='…'`, Ruby's `:message => "…"`): the words that say why, deep inside
# a term that otherwise says only where.
_EMBEDDED_MESSAGE = re.compile(r"""(?<![\w.])["':]?message["']?\s*(?::|=>?)\s*(?P<q>["'])(?P<text>(?:\\.|(?!(?P=q)).){12,}?)(?P=q)""")


def embedded_message(line: str, beyond: int = 0) -> re.Match[str] | None:
    """The first ``message: "…"`` inside ``line`` that ends past its first ``beyond`` characters, or None."""
    return next((m for m in _EMBEDDED_MESSAGE.finditer(line) if m.end() > beyond), None)


def shortened(line: str, n: int) -> str:
    """``line`` (scrubbed) cut to ``n`` characters; where the cut would drop the message an error term
    carries inside it (`embedded_message`), the head is shortened to make room for that message's words."""
    if len(line) <= n:
        return line
    said = embedded_message(line, beyond=n - 1)  # what a cut to n keeps, its ellipsis aside
    if said is None or n < 60:
        return cut(line, n)
    words = cut(said.group("text"), n - 21)
    return f"{cut(line[:said.start()], n - len(words) - 1)} {words}"


# PowerShell's error record: "Cmdlet : message" (wrapped over lines), then its position
# ("At line:1 char:40", localised: "строка:2 знак:1"), then "+ ..." lines.
_PS_POSITION = re.compile(r"^(?:At )?\S+:\d+ \S+:\d+$")


# The head of a record: the cmdlet or program and its message ("Invoke-WebRequest : <!DOCTYPE html>…",
# "docker : The term 'docker' is not recognized…").
_PS_HEAD = re.compile(r"^[A-Za-z][\w.]*(?:-[A-Z]\w*)? : \S")
PS_RECORD_LINES = 2000  # how far back a record's head is looked for: a message can be a whole web page
PS_MESSAGE_LINES = 12  # a message wrapped over at most this many lines (a narrow console) is read whole


def _powershell_record(lines: list[str]) -> str:
    for i, line in enumerate(lines):
        if i and _PS_POSITION.match(line) and i + 1 < len(lines) and lines[i + 1].startswith("+ "):
            start = i - 1
            while start > 0 and " : " not in lines[start] and i - start < 4 and lines[start - 1]:
                start -= 1
            if " : " not in lines[start]:  # a long message: its head, cmdlet and first words, says it
                head = next((k for k in range(i - 1, max(i - PS_RECORD_LINES, 0) - 1, -1)
                             if _PS_HEAD.match(lines[k]) or lines[k].startswith("+ ")), None)
                if head is not None and _PS_HEAD.match(lines[head]):
                    if i - head > PS_MESSAGE_LINES or not all(lines[head:i]):
                        return lines[head]
                    start = head  # a message a narrow console wrapped: read from its head
            parts = [part for part in lines[start:i] if part and not _EXIT.fullmatch(part)]
            message = " ".join(part for part in parts if not _NOISE.match(part))
            if message or parts:  # the record's message, or only the markup a request printed
                return message
            # A parser error gives its position first, then the code, then the message.
            after = next((line for line in lines[i + 1:i + 8] if line and not line.startswith("+")), "")
            if after:
                return after
    return ""


# pip runs a package's build in a subprocess and frames what it printed: "╰─> [23 lines of
# output]" … "[end of output]". Its own lines around the frame ("error: subprocess-exited-with-error",
# "error: metadata-generation-failed") are the same for every build that fails; the cause is inside.
_SUBPROCESS_OPENS = re.compile(r"^╰─>\s*\[\d+ lines? of output\]$")
_SUBPROCESS_ENDS = "[end of output]"


def _subprocess_output(lines: list[str]) -> str:
    """The failure line of the first build output pip framed: '' when there is none, or none of
    its lines says it failed (then pip's own line is all there is)."""
    start = next((i for i, line in enumerate(lines) if _SUBPROCESS_OPENS.match(line)), None)
    if start is None:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i] == _SUBPROCESS_ENDS), len(lines))
    inner = lines[start + 1:end]
    return _choose(inner) if any(_MARKER.match(line) for line in inner if line) else ""


# git's trailer after every failure to reach a remote: the line before it says why (ssh could not
# resolve the host, the key was refused, no such repository), the trailer is the same for all.
_GIT_REMOTE_TRAILER = re.compile(r"^(?:fatal: Could not read from remote repository\.|Please make sure you have the "
                                 r"correct access rights|and the repository exists\.)$")


def _choose(lines: list[str], programs: frozenset[str] = frozenset()) -> str:
    """The failure line of ``lines`` (the rules of the module's docstring, in order); ``programs``:
    those the failed command runs, whose own word on what failed ("adb: more than one device/emulator")
    is the line when no line carries a marker."""
    meaningful = [(i, line) for i, line in enumerate(lines) if line and not _NOISE.match(line)]
    if not meaningful:
        return ""
    said = [(i, line) for i, line in meaningful if not _GIT_REMOTE_TRAILER.match(line)]
    meaningful = said or meaningful  # the trailer alone is still what git said
    record = _powershell_record(lines) or _subprocess_output(lines)
    if record:
        return record
    if _VALIDATION.search("\n".join(lines[:3])):  # the header opens a validation error
        after = [line for i, line in meaningful if not _VALIDATION.search(line)]
        if after:
            return after[0]
    for _, line in meaningful:
        if _PYTEST_SUMMARY.match(line):
            return line
    traceback = _traceback_tail(lines)
    if traceback:
        return traceback
    # A logger's record of its own run, its level in a column ("ERROR | Setting read-only feature…", the
    # Android emulator's), yields to a line that says the failure in a program's own words.
    for k in sorted(range(len(meaningful)), key=lambda k: bool(_LOG_RECORD.match(meaningful[k][1]))):
        line = meaningful[k][1]
        if _MARKER.match(line) and not _HOOK_FAILED.match(line):
            if (_BARE_MARKER.match(line) or _PYDANTIC.search(line)) and k + 1 < len(meaningful):
                return " ".join(part for _, part in meaningful[k + 1:k + 3]) if _PYDANTIC.search(line) \
                    else f"{line} {meaningful[k + 1][1]}"
            return _continued(line, meaningful[k + 1][1] if k + 1 < len(meaningful) else "")
    hook = _hook_finding(lines)
    if hook:
        return hook
    said = _program_said(meaningful, programs)
    if said:
        return said
    return _continued(meaningful[0][1], meaningful[1][1] if len(meaningful) > 1 else "")


def _program_said(meaningful: list[tuple[int, str]], programs: frozenset[str]) -> str:
    """The first line where a program the command ran names itself ("unzip: cannot find zipfile
    directory in one of x.zip", "adb: more than one device/emulator"): with no failure marker
    anywhere, the program's own word on what went wrong, not the listing or banner it printed first."""
    for k, (_, line) in enumerate(meaningful):
        said = _PROGRAM_SAYS.match(line)
        if said and said.group(1) in programs:
            return _continued(line, meaningful[k + 1][1] if k + 1 < len(meaningful) else "")
    return ""


# A log record with its level in a column: "ERROR | …", "FATAL | …" (padding squeezed by `_lines`).
_LOG_RECORD = re.compile(r"^[A-Z][A-Z_]{2,} \| \S")
# "1 validation error for applyArguments": the field and its issue follow on the next two lines.
_PYDANTIC = re.compile(r"\b\d+ validation errors? for \w+")


# A frame of a JavaScript or Java stack ("at Module._compile (node:internal/modules/cjs/loader:760:23)",
# "at internal/main/run_main_module.js:21:11", "at com.x.App.main(App.java:10)"): where, never what.
_STACK_FRAME = re.compile(r"^at (?:.+ \((?:\S+:\d+(?::\d+)?|<anonymous>|native)\)|(?:file://)?\S+:\d+(?::\d+)?"
                          r"|[\w$.<>]+\([\w$.]+:\d+\))$")


def _continued(line: str, after: str) -> str:
    """A line with what carries it on: a line ending in a colon is a header of what follows
    ("There's one or more errors in your config file:"), and one that stops mid-sentence is wrapped
    onto the next when that opens in lower case ("… because ensurepip is not" / "available.").
    The stack under an exception's message is no part of it."""
    if not after or len(line) >= FAILURE_CHARS or after.split(None, 1)[0] == line.split(None, 1)[0]:
        return line  # the next record of the same program ("npm error …" after "npm error …") is its own
    if _STACK_FRAME.match(after):
        return line
    if line.endswith(":") or (line[-1:].isalpha() and after[:1].islower()):
        return f"{line} {after.lstrip('*-• ')}"
    return line


def _traceback_tail(lines: list[str]) -> str:
    """The exception line that ends the last traceback in ``lines``, if there is one."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if not starts:
        return ""
    for line in lines[starts[-1] + 1:]:
        if not line or line.startswith("File ") or line.startswith("^") or line.startswith("~"):
            continue
        if _EXCEPTION.match(line):
            return line
    return ""


def _hook_finding(lines: list[str]) -> str:
    """pre-commit's ``ruff-format....Failed`` and what the hook said it found."""
    for i, line in enumerate(lines):
        found = _HOOK_FAILED.match(line)
        if not found:
            continue
        finding = ""
        for after in lines[i + 1: i + 6]:
            detail = _HOOK_FINDING.match(after)
            if detail:
                finding = detail.group(1)
                break
        name = found.group(1)
        return f"hook {name} failed: {finding}" if finding else f"hook {name} failed"
    return ""


_INFORMATIVE_WORDS = re.compile(r"[A-Za-z]{3,}")


def is_informative(line: str) -> bool:
    """Whether a chosen failure line says what failed: not empty, not a bare exit code or marker,
    not a preamble or progress line, and with at least two words of its own."""
    if not line or _NOISE.match(line) or _BARE_MARKER.match(line):
        return False
    words = [w for w in _INFORMATIVE_WORDS.findall(line) if w.lower() not in {"error", "fatal", "failed"}]
    return len(words) >= 2


# --------------------------------------------------------------------------------------------
# Compound commands

_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n|(?<!\|)\|(?!\|))\s*")
# Programs that only move, print or filter: rarely the one a failure is about.
_PLUMBING = frozenset({
    "cd", "echo", "printf", "export", "source", ".", "true", "set", "sleep", "tail", "head", "grep",
    "rg", "sort", "uniq", "wc", "tee", "cat", "less", "more", "cut", "awk", "sed", "tr", "xargs",
    "clear", "pwd", "ls", "mkdir", "exit", "return", "",  # `status=$?` (assignments only), `exit $status`
})  # fmt: skip
# What an output's lines say about which program printed them.
_SIGNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\S[^.\n]*\.{3,}\s*(?:Failed|Passed|Skipped)\s*$|^- hook id:", re.MULTILINE), "git commit"),
    (re.compile(r"\[(?:remote )?rejected\]|failed to push some refs|has no upstream branch", re.MULTILINE), "git push"),
    (re.compile(r"^(?:fatal|error): .*(?:push|pull|upstream|remote|branch|merge|rebase|commit)|^hint: ", re.MULTILINE | re.IGNORECASE), "git"),
    (re.compile(r"^npm (?:error|ERR!)", re.MULTILINE), "npm"),
    (re.compile(r"externally-managed-environment|^ERROR: (?:Could not|No matching)", re.MULTILINE), "pip"),
    (re.compile(r"test session starts|^(?:FAILED|ERROR) \S+::", re.MULTILINE), "pytest"),
    (re.compile(r"^\*\* \(Mix\)|^\*\* \(\w+Error\)|\.exs?:\d+", re.MULTILINE), "mix"),
    (re.compile(r"^error\[E\d+\]|could not compile `", re.MULTILINE), "cargo"),
    (re.compile(r"^make(?:\[\d+\])?: \*\*\*", re.MULTILINE), "make"),
    (re.compile(r"^(?:\S+:\d+:\d+: )?[A-Z]{1,4}\d{3,4} |^Found \d+ errors?\b", re.MULTILINE), "ruff check"),
    (re.compile(r"^(?:cc1\w*|collect2|/usr/bin/ld|ld): |^\S+\.(?:c|cc|cpp|h|hpp):\d+:\d+: (?:fatal )?error: ", re.MULTILINE),
     "gcc|cc|g++|clang|clang++"),
)
# "bash: x: command not found", "sh: 1: x: not found", Android's mksh "/system/bin/sh: x: inaccessible or not found".
_NOT_FOUND = re.compile(r"(?:^|\s)(?:bash: |zsh: |sh: )?(?:line \d+: )?([\w.\-/]+): (?:command not found|not found"
                        r"|inaccessible or not found)", re.MULTILINE)


def split_command(command: str) -> list[tuple[str, str]]:
    """(sub-command, the separator after it) pairs of a shell command line, split at ``&&``,
    ``||``, ``;``, pipes and newlines outside quotes; a here-document's body stays with its command."""
    return list(_split_command(command))


# A night judges every open prediction against the same sessions' commands, night after night.
@functools.lru_cache(maxsize=4096)
def _split_command(command: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    buf: list[str] = []
    quote = ""
    i, n = 0, len(command)
    heredoc = ""
    while i < n:
        c = command[i]
        if heredoc:
            end = command.find("\n" + heredoc, i - 1)
            if end < 0:
                buf.append(command[i:])
                break
            stop = end + 1 + len(heredoc)
            buf.append(command[i:stop])
            i, heredoc = stop, ""
            continue
        if quote:
            buf.append(c)
            if c == "\\" and quote == '"' and i + 1 < n:
                buf.append(command[i + 1])
                i += 2
                continue
            if c == quote:
                quote = ""
            i += 1
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            buf.append(command[i:i + 2])
            i += 2
            continue
        if command.startswith("<<", i) and not command.startswith("<<<", i):
            found = re.match(r"<<-?\s*(['\"]?)([A-Za-z_][\w]*)\1", command[i:])
            if found:
                heredoc = found.group(2)
                buf.append(found.group(0))
                i += len(found.group(0))
                continue
        sep = next((s for s in ("&&", "||", ";", "\n", "|") if command.startswith(s, i)), "")
        if sep:
            seg = "".join(buf).strip()
            if seg:
                out.append((seg, sep))
            elif out:
                out[-1] = (out[-1][0], sep)
            buf = []
            i += len(sep)
            continue
        buf.append(c)
        i += 1
    seg = "".join(buf).strip()
    if seg:
        out.append((seg, ""))
    return tuple(out)


# "mkdir: cannot create directory '~/.claude': File exists": a program naming itself at a line's start.
_PROGRAM_SAYS = re.compile(r"^([a-z][\w.\-]*): (?=\S)(?!\s*\d)", re.MULTILINE)
# "/bin/bash: line 1: cd: build: No such file or directory": the shell names the program that failed.
_SHELL_SAYS = re.compile(r"^(?:/\S*/)?(?:ba|z)?sh: (?:line \d+: )?([\w.\-/]+): ", re.MULTILINE)


def segments(command: str) -> list[str]:
    """The sub-commands of a shell command line (`split_command` without the separators)."""
    return [seg for seg, _ in split_command(command)]


def program_of(segment: str) -> str:
    words = past_prefixes([w for w in segment.split() if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)])
    return words[0].rsplit("/", 1)[-1].lower() if words else ""


def attribute(command: str, output: str) -> str:
    """The sub-command of ``command`` that ``output`` shows failed; the whole command if it has
    one part. Without a sign in the output, the last part that is not plumbing (in ``a && b``
    the failure stopped the chain, and ``cd x && make test`` is about ``make test``)."""
    parts = segments(command)
    if len(parts) <= 1:
        return command.strip()
    for said in _PROGRAM_SAYS.finditer(output):  # "mkdir: cannot create directory …"
        for part in parts:
            if program_of(part) == said.group(1):
                return part
    named = _SHELL_SAYS.search(output)
    if named:
        for part in parts:
            if program_of(part) == named.group(1).rsplit("/", 1)[-1]:
                return part
    missing = _NOT_FOUND.search(output)
    if missing:
        name = missing.group(1).rsplit("/", 1)[-1]
        for part in parts:
            if program_of(part) == name:
                return part
    for sign, who in _SIGNS:
        if not sign.search(output):
            continue
        program, _, sub = who.partition(" ")
        programs = set(program.split("|"))
        for part in parts:
            words = part.split()
            if program_of(part) in programs or (program == "pytest" and "pytest" in words[:4]):
                if not sub or sub in words[1:3]:
                    return part
    real = [p for p in parts if program_of(p) not in _PLUMBING]
    return real[-1] if real else parts[-1]


# --------------------------------------------------------------------------------------------
# Not every non-zero exit is a failure

# How a reader opens the output of a call its agent's harness refused to run, when the agent's own
# words do not say so (Codex's policy, approval settings, auto-reviewer or hooks, a sandbox it could
# not set up): the reason follows.
NOT_RUN_OPENING = "Not run: "
# The harness refused the call, the person declined or interrupted it, a hook blocked it, or it
# was cancelled because a sibling call failed: nothing the agent's step did failed.
_NOT_RUN = re.compile(
    rf"\A{re.escape(NOT_RUN_OPENING)}|requires approval|has been denied|doesn.t want to (?:proceed|take this action)|tool use was rejected"
    r"|Request interrupted by user|Interrupted by user|\[Request interrupted|interrupted by user for tool use"
    r"|\bAbortError\b|The operation was aborted|Tool permission request failed|Cancelled: parallel tool call|Sibling tool call errored"
    r"|(?:PreToolUse|PostToolUse|UserPromptSubmit)\S* hook (?:error|blocked)|blocked by (?:a |the )?hook"
    r"|Bash command blocked|denied by policy|not allowed in plan mode|You are in Plan Mode"
    r"|Permission to use \S+ (?:has been|was) denied|user (?:rejected|declined|denied)"
    # Claude Code's auto mode could not have the call judged safe (its classifier model was down): not run
    r"|auto mode cannot determine the safety of",
    re.IGNORECASE | re.MULTILINE)
# Commands whose non-zero exit is their answer ("no match", "not there"), and the printers of a
# file's lines, whose failure to open a guessed path says only that it is not there.
PROBES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "which", "whereis", "test", "[", "[[", "diff", "cmp",
                    "ls", "find", "pgrep", "stat", "file", "type", "cat", "head", "tail", "readlink", "realpath",
                    "test-path", "get-command", "where", "command",
                    "sed", "awk", "gawk", "mawk", "wc", "nl", "less", "more", "bat", "batcat", "xxd", "od", "hexdump"})
_PROBE_ANSWER = re.compile(
    r"^(?:(?:Error:\s*)?Exit code -?\d+|Error|"
    r"(?:\S+:\s+)*(?:cannot access|can't access|can't read|cannot open|can't open|no such file or directory|"
    r"not found|no matches found|"
    r"does not exist|no \S+ in \(|file not found)\b.*|.*: (?:No such file or directory|not found)(?: \(os error \d+\))?|"
    r"\S+ not found|no matches found: .*|Binary files? \S+ (?:and \S+ )?differ|[<>] .*|---|\d+[acd]\d+.*|)$",
    re.IGNORECASE)
_READ_MISSING = re.compile(r"^(?:<tool_use_error>)?File does not exist\b", re.IGNORECASE)
# The file tools whose "File does not exist" is a guessed path's answer: a Read, and an edit of a file
# that is not there (an edit changes a file; it does not make one, as Write does).
_GUESSING_TOOLS = frozenset({"read", "edit", "multiedit"})


# What a look answers when there is nothing to see: no repository, no commits, no such path, no
# server listening yet (a probe of a local port).
_LOOK_ANSWER = re.compile(
    r"not a git repository|does not appear to be a git repository|does not have any commits yet|Cannot find path .* because it does not exist"
    r"|No such file or directory|cannot access|does not exist|not found",
    re.IGNORECASE)
_LOOKS = frozenset({"git status", "git log", "git branch", "git remote", "git ls-remote", "git show", "git diff", "git rev-parse",
                    "git describe", "git tag", "get-content", "get-childitem", "get-item", "cat", "head", "tail",
                    "ls", "stat", "find", "tree", "du", "file"})
_LOCAL_PROBE = re.compile(r"\bcurl\b.*\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)\b")
_NO_SERVER = re.compile(r"Failed to connect|Connection refused|Couldn't connect to server", re.IGNORECASE)


def _is_look(part: str) -> bool:
    head = command_head("bash", part)
    return head in _LOOKS or head.split()[0] in _LOOKS


# `touch x/perm_test && rm x/perm_test`: a file made to be removed asks whether the folder is writable.
_NOT_WRITABLE = re.compile(r"Permission denied|Operation not permitted|Read-only file system", re.IGNORECASE)


def _asks_version(part: str) -> bool:
    """`x --version`, `x --help` (its redirections aside): asks what `x` is, and whether it is there."""
    words = [w for w in part.split() if not is_redirection(w)]
    return len(words) == 2 and words[1] in {"--version", "-v", "-V", "version", "--help"}


def _writes_and_removes(parts: list[str]) -> bool:
    """Whether a command only makes a file and removes it again (a writability probe)."""
    made = [p.split()[-1] for p in parts if program_of(p) == "touch" and len(p.split()) >= 2]
    removed = {w for p in parts if program_of(p) == "rm" for w in p.split()[1:] if not w.startswith("-")}
    return bool(made) and all(f in removed for f in made) \
        and all(program_of(p) in {"touch", "rm", "echo", "cd"} for p in parts)


# A redirection of a command's output into a file (`cat <<'EOF' > src/new.ts`, `echo x >> log`), read
# on the command's first line: a here-document's body (code with `=>`, `->`) follows it.
_WRITES_TO = re.compile(r"(?<![\d&<=>\-])>>?\s*(['\"]?)([^\s;&|<>'\"]+)\1")


def redirect_targets(segment: str) -> list[str]:
    """The files a shell sub-command's redirections write (not ``/dev/null``, not ``>&2``)."""
    head = segment.split("\n", 1)[0]
    return [m.group(2) for m in _WRITES_TO.finditer(head) if not m.group(2).startswith(("/dev/", "&"))]


# sed that took its script for a file (BSD's `sed -i '' 's|a|b|' f` run by GNU sed, whose `-i`
# takes no suffix: '' becomes the script and the script a file): "can't read s|a|b|: No such file".
_SED_SCRIPT_AS_FILE = re.compile(r"can't read [sy]([^\w\s\\])[^\n]*?\1[^\n]*?\1\w*: No such file", re.IGNORECASE)


# -- answers a search or a report gives with a non-zero exit --------------------------------------
# Each rule is about what programs do, whatever the project: a search exits 1 for "no match"; a
# package manager's report of what is out of date exits 1 when something is.

SEARCHES = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
# `npm outdated`, `yarn outdated`, `pnpm outdated`, `bundle outdated`, `mix hex.outdated`: the sub-command;
# the table they print opens with a header naming the current and the latest (or wanted) version.
_OUTDATED = re.compile(r"(?:^|[\s.:])outdated(?=\s|$)")
_OUTDATED_HEADER = re.compile(r"^(?:\S+\s+){0,3}Current\s+(?:\S+\s+){0,2}(?:Latest|Wanted)\b")


def is_outdated_report(command: str, output: str) -> bool:
    """A report of outdated packages: the table is the answer its non-zero exit stands for."""
    if not any(_OUTDATED.search(part) for part in segments(command)):
        return False
    lines = [line for line in _lines(output) if line and not _EXIT.fullmatch(line)]
    return any(_OUTDATED_HEADER.match(line) for line in lines[:6]) and not any(_MARKER.match(line) for line in lines)


def _said_by_a_program(line: str) -> bool:
    return bool(_MARKER.match(line) or _PROGRAM_SAYS.match(line) or _SHELL_SAYS.match(line))


def found_nothing_after_looks(command: str, output: str) -> bool:
    """`ls -la lib/x && rg -n "defmodule" lib/x`: looks that printed what they saw, then a search at
    the end that found nothing (exit 1, a search's "no match") and no line in which a program says
    anything went wrong: what was printed is the answer."""
    parts = segments(command)
    if len(parts) < 2 or program_of(parts[-1]) not in SEARCHES or exit_code_of(output) != 1:
        return False
    if not all(_is_look(part) or program_of(part) in PROBES for part in parts[:-1]):
        return False
    return not any(_said_by_a_program(line) for line in _lines(output) if line and not _EXIT.fullmatch(line))


# A search given a path that is not there says so for that path and searches the others
# (`rg: priv/x.exs: No such file or directory (os error 2)`).
_MISSING_OPERAND = re.compile(r"^(?P<program>[a-z]+): (?P<path>[^:]+): No such file or directory(?: \(os error 2\))?$")
_PATH_LIKE = re.compile(r"/|\.\w{1,5}$")


def searched_beside_a_guess(command: str, output: str) -> bool:
    """`rg -n "schema" priv/repo/schema.exs lib`: a search given a guessed path beside real ones, which
    found its matches in the real ones: the matches are the answer, the missing path a guess. A missing
    name with neither a folder nor an extension (`rg -n "Phase 4" -n "T021" tasks.md` -> "rg: T021: No
    such file") is a pattern the search took for a path: a misuse, not a guess."""
    parts = segments(command)
    if not parts or program_of(parts[-1]) not in SEARCHES:
        return False
    lines = [line for line in _lines(output) if line and not _EXIT.fullmatch(line)]
    missing = [m for m in map(_MISSING_OPERAND.match, lines) if m is not None]
    operands = set(shell_words(parts[-1]))
    if not missing or any(m.group("path") not in operands or not _PATH_LIKE.search(m.group("path")) for m in missing):
        return False
    program = program_of(parts[-1])
    found = [line for line in lines if not _MISSING_OPERAND.match(line)]  # its matches, `path:line: text`
    return bool(found) and all(m.group("program") == program for m in missing) \
        and not any(line.startswith(f"{program}: ") for line in found)  # nothing else the search complains of


def is_probe(command: str, output: str, call: str = "") -> bool:
    """A probing command (grep, which, test, ls of a missing path, `git log` outside a repository,
    `curl` of a local server not up yet…) whose failure says only "no" — not found, no match, a
    diff, nothing there — and nothing else. A printer writing into a file (`cat <<'EOF' > x/new.ts`)
    whose file the shell could not open (its folder not made yet) is a write that failed, no look."""
    parts = segments(command)
    if not parts:
        return False
    remote = remote_command(parts[-1]) if len(parts) == 1 else None
    if remote is not None:
        # `adb shell "ls /sbin"`, `docker exec web cat /x`: the look is the command run there.
        return is_probe(remote, output, remote)
    if any(target in output for part in parts for target in redirect_targets(part)):
        return False
    looking = _is_look(parts[-1]) or any(_is_look(p) for p in parts) and all(_is_look(p) or program_of(p) in PROBES
                                                                           for p in parts)
    if looking and _LOOK_ANSWER.search(output[:600]) and len(_lines(output)) <= 12:
        return True  # `git log`, `git ls-remote origin | grep x`: nothing there to look at
    if _writes_and_removes(segments(call or command)) and _NOT_WRITABLE.search(output[:600]) and len(_lines(output)) <= 6:
        return True
    if _asks_version(parts[-1]) and len(_lines(output)) <= 4 and _NOT_FOUND.search(output) \
            and _NOT_FOUND.search(output).group(1).rsplit("/", 1)[-1] == program_of(parts[-1]):
        return True  # `pnpm --version` answered that there is no pnpm: asked as `which pnpm` is
    if _LOCAL_PROBE.search(parts[-1]) and _NO_SERVER.search(output):
        return True
    if is_outdated_report(command, output) or found_nothing_after_looks(call or command, output) \
            or searched_beside_a_guess(command, output):
        return True
    words = parts[-1].split()
    program = program_of(parts[-1])
    if program == "sed" and _SED_SCRIPT_AS_FILE.search(output[:2000]):
        return False  # its script was read as a file: a usage error, no look at a missing path
    if program == "command" and "-v" in words or program == "git" and words[1:2] in (["diff"], ["rev-parse"], ["ls-files"]):
        pass
    elif program not in PROBES:
        return False
    return all(_PROBE_ANSWER.match(line) for line in _lines(output) if line)


def not_a_failure(tool: str, command: str, output: str, failure: str, call: str = "") -> str:
    """Why a tool call that returned an error is no failure of the agent's step, or "".
    ``command``: the part of the call that failed; ``call``: the whole call, when it had more parts.

    Refused or interrupted calls and cascades ("not run"), probes that answered no ("probe"),
    and outputs with nothing to say what failed ("bare"): kept in the archive, no lesson."""
    head = output[:2000]
    if _NOT_RUN.search(head):
        return "not run"
    inner = sandboxed_output(output)
    if inner is not None:
        # The sandbox reported the command's own non-zero exit as a denial: judged on what it printed.
        output, failure = inner, failure_line(inner, command)[0] if inner.strip() else ""
    if tool.lower() in _GUESSING_TOOLS and _READ_MISSING.match(output.strip()):
        return "probe"
    if tool.lower() in _SHELLS and is_probe(command, output, call):
        return "probe"
    if is_bare(failure):
        return "bare"
    return ""


# Codex (2025) wrapped a command's own non-zero exit in the sandbox's words: "failed in sandbox
# LinuxSeccomp with execution error: Denied { output: ExecToolCallOutput { exit_code: 1, stdout: …,
# aggregated_output: StreamOutput { text: "…" …": nothing was denied; the exit and the text are the command's.
_SANDBOX_WRAPPED = re.compile(r"Denied \{ output: ExecToolCallOutput \{ exit_code: -?\d+,.*?"
                              r'aggregated_output: StreamOutput \{ text: \\?"(?P<text>(?:[^"\\]|\\.)*?)\\?", truncated',
                              re.S)


def sandboxed_output(output: str) -> str | None:
    """What a command printed, when the sandbox reported its non-zero exit as a denial; else None."""
    m = _SANDBOX_WRAPPED.search(output[:20000])
    if m is None:
        return None
    return m.group("text").replace("\\\\n", "\n").replace("\\n", "\n").replace('\\"', '"')


def is_bare(line: str) -> bool:
    """A failure line with nothing to say what failed: empty, an exit code, a bare marker."""
    line = line.strip()
    return not line or bool(_EXIT.fullmatch(line) or _BARE_MARKER.match(line)) or not re.search(r"[A-Za-z]{2}", line)


_SHELLS = frozenset({"bash", "shell", "sh", "run_command", "terminal", "exec", "run_shell_command", "shell_command"})
