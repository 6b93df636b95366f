"""A commons home driven through its command line, as the experiment drives each node."""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from commons.cli.context import Context
from commons.clock import parse_time
from commons.errors import UsageError
from commons.home import Home
from simulations.experiment.inline import threads_inline

REPO = Path(__file__).resolve().parents[2]


class ExperimentError(RuntimeError):
    """The experiment could not run as set up (a command failed, a daemon did not start)."""


# --------------------------------------------------------------------------------------------
# A node: one home driven through the command line


@functools.cache
def _in_process_main():
    """``commons.cli.main``, building its parser once: the harness runs thousands of commands in
    one process, and building every subcommand's parser is a fifth of each one's time. The parser
    holds no state between parses (each gets a fresh namespace)."""
    import commons.cli as cli

    parser = cli.build_parser()  # every command's (None: all modules)
    cli.build_parser = lambda argv=None: parser
    return cli.main


class _CommandClock:
    """The clock of a node's kept context: the ``--at`` of the command running now (the real clock
    for a command without one, as for `commons` itself)."""

    def __init__(self) -> None:
        self.at: float | None = None

    def now(self) -> float:
        return time.time() if self.at is None else self.at


class KeptContext(Context):
    """One node's context kept across the harness's commands in its home: its config, keys and node
    context (with its trust evaluation, which takes in only what arrived since the last command)
    built once, not once a command; each command moves only its clock. Dropped whenever the harness
    changes the home's config or keys (:meth:`Node.configure`, :meth:`Node.init`)."""

    def __init__(self, home: Home) -> None:
        super().__init__(home, None, inline_store=True)
        self._command_clock = _CommandClock()

    @property
    def clock(self) -> _CommandClock:
        return self._command_clock

    def for_command(self, args) -> KeptContext:
        """This context at the time of the command ``args`` parsed to: --at, then COMMONS_AT, then
        [clock] at, then the real clock (as :attr:`HomeContext.clock`)."""
        self.at = getattr(args, "at", None) or os.environ.get("COMMONS_AT") or None
        fixed = self.at or self.config.clock.at
        try:
            self._command_clock.at = parse_time(fixed) if fixed else None
        except ValueError as error:
            raise UsageError(str(error)) from None
        return self


@dataclass
class Node:
    """One commons home, its agent's transcripts folder and memory folder, under ``root``."""

    name: str
    root: Path
    subprocess_cli: bool = False  # run each command in its own process (slower; same code)
    ingest_counts: list[dict] = field(default_factory=list)  # per night: episodes by kind
    night_counts: list[dict] = field(default_factory=list)  # per night: sleep's counts
    author: str = ""  # its author key (hex), known after init
    # Its secrets derived from this text (``f"{seed}/{name}"``: the same keys, so the same record ids,
    # on every run of a seed); None: fresh ones, as `commons init` makes.
    secrets_from: str | None = None
    _context: KeptContext | None = field(default=None, repr=False, compare=False)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def paths(self) -> Home:
        """Its home's folders, as ``COMMONS_HOME`` makes them (for what runs in this process)."""
        return Home.from_environment({"COMMONS_HOME": str(self.home)})

    @property
    def transcripts(self) -> Path:
        return self.root / "transcripts"

    @property
    def memory(self) -> Path:
        return self.root / "memory"

    def cli(self, *argv: str, at: str | None = None, parse: bool = True, check: bool = True):
        """``commons [--at AT] ARGV`` in this home: its JSON output (or text with parse=False)."""
        args = (["--at", at] if at else []) + list(argv)
        if self.subprocess_cli:
            done = subprocess.run([sys.executable, "-m", "commons", *args], capture_output=True, text=True,
                                  env=dict(os.environ, COMMONS_HOME=str(self.home)), cwd=REPO)
            code, out, err = done.returncode, done.stdout, done.stderr
        else:
            main = _in_process_main()
            saved = os.environ.get("COMMONS_HOME")
            os.environ["COMMONS_HOME"] = str(self.home)
            out_buf, err_buf = io.StringIO(), io.StringIO()
            if self._context is None:
                self._context = KeptContext(self.paths)
            try:
                with contextlib.redirect_stdout(out_buf), contextlib.redirect_stderr(err_buf), threads_inline():
                    code = main(args, context=self._context.for_command)
            finally:
                if saved is None:
                    os.environ.pop("COMMONS_HOME", None)
                else:
                    os.environ["COMMONS_HOME"] = saved
            out, err = out_buf.getvalue(), err_buf.getvalue()
        if check and code != 0:
            raise ExperimentError(f"node {self.name}: `commons {' '.join(args)}` exited {code}: {err.strip()}")
        return json.loads(out) if parse and out.strip() else out

    def init(self) -> dict:
        """Create the home, pointed at its transcripts and memory folders; its ids."""
        for path in (self.home, self.transcripts, self.memory):
            path.mkdir(parents=True, exist_ok=True)
        if self.secrets_from is not None:  # written first: `commons init` keeps keys it finds
            from commons import identity

            identity.create(self.paths, identity.derived(self.secrets_from))
        self.cli("init", "--json")
        self._context = None  # made before the home had its config and keys
        # The night's `commons ingest` has read every session before the daemons start, and no
        # session is written while they run: a daemon's watch finds nothing new after its first look
        # at start-up, so it looks again only at the product's default interval, not every half second.
        self.configure({"ingest": {"roots": [str(self.transcripts)]},
                        "render": {"folder": str(self.memory)}})
        ids = self.cli("id", "--json")
        self.author = ids["author"]
        return ids

    def configure(self, sections: dict[str, dict]) -> None:
        """Append ``sections`` to the home's config.toml (each section once per home)."""
        config = self.home / "config.toml"
        text = config.read_text("utf-8")
        for name, values in sections.items():
            text += f"\n[{name}]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items())
        config.write_text(text, "utf-8")
        self._context = None  # its config is read again by the next command

    def night(self, at: str) -> None:
        got = self.cli("ingest", str(self.transcripts), "--json", at=at)
        self.ingest_counts.append(dict(got["episodes"]))
        slept = self.cli("sleep", "--json", at=at)
        counts = dict(slept["counts"])
        # Received lessons judged against this node's sessions count as predictions too.
        for judged in slept["review"]["judged"]:
            key = f"received_{'failed' if judged['how'] == 'fix-failed' else judged['how']}"
            counts[key] = counts.get(key, 0) + 1
        self.night_counts.append(counts)

    def records(self) -> list[dict]:
        text = self.cli("export", parse=False)
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def _query(self, sql: str) -> set[bytes]:
        """The first column of ``sql`` over this node's store, read straight from SQLite (as another
        process would, while its daemon runs)."""
        import sqlite3

        db = sqlite3.connect(f"file:{self.home / 'data' / 'commons.db'}?mode=ro", uri=True, timeout=10)
        try:
            return {row[0] for row in db.execute(sql)}
        finally:
            db.close()

    def keys(self) -> set[bytes]:
        """Record keys this node holds."""
        return self._query("SELECT key FROM records")

    def served(self, publish: bool) -> set[bytes]:
        """Record keys its daemon serves to peers: all it holds, less its own lessons and
        verifications while publishing is off (they leave a node only by opt-in)."""
        if publish:
            return self.keys()
        return self._query("SELECT key FROM records WHERE NOT (origin = 'own' AND type IN ('lesson', 'verification'))")

    def known(self) -> set[bytes]:
        """Record keys it would not fetch again: those it holds and those its policy refused."""
        return self._query("SELECT key FROM records UNION SELECT key FROM refused")
