"""The demonstration `make demo` runs: a few nodes on this machine, driven through the CLI.

Every step is a real `commons` command run in a node's home (``COMMONS_HOME``), printed as a
person would type it, so the demo doubles as a walkthrough. With ``--json`` only a summary is
printed, naming each node's home, author key and memory folder, so that a script can go on
inspecting the nodes with the CLI afterwards.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from commons.demo import machine
from commons.demo.machine import DEMO_SESSIONS, ENV_DROP, ENV_SET, DemoNode
from commons.demo.federation import Federation, export_ids
from commons.errors import CommonsError

NODE_NAMES = ("ada", "grace", "linus")
INGESTED_AT = "2026-11-10T18:00:00Z"  # after the last bundled session
NIGHTS = ("2026-11-03T03:00Z", "2026-11-05T03:00Z", "2026-11-07T03:00Z", "2026-11-09T03:00Z",
          "2026-11-11T03:00Z")  # scripted nights of sleep; each sees the sessions before it
SIGNED_AT = "2026-11-11T08:00:00Z"  # ada writes a lesson by hand and starts publishing
FEDERATION_AT = "2026-11-11T09:00:00Z"  # the daemons' clocks start the morning after the last night
HAND_LESSON = "Debian 12's system Python refuses `pip install`: it fails with 'error: externally-managed-environment'."


HOOK_NODE, HOOK_SESSION = "grace", "day-10-worker-tests.jsonl"  # held back: it ends while the demo watches
HOOK_AT = "2026-11-11T08:30:00Z"  # the session-end hook's clock: the morning after the last night
HOOK_WAIT = 30.0  # seconds the demo waits for the hook's lesson (it takes about 2 s)
class Demo:
    def __init__(self, root: Path, *, quiet: bool):
        self.root = root
        self.quiet = quiet
        self.nodes = [DemoNode(name, root / name) for name in NODE_NAMES]

    def say(self, text: str = "") -> None:
        if not self.quiet:
            print(text, flush=True)

    def run_cli(self, node: DemoNode, argv: list[str]) -> tuple[int, str, str]:
        """`commons ARGV` in this process with the node's environment: (exit code, stdout, stderr).

        The very CLI a person runs, minus the 0.5–1 s each new Python process spends importing
        commons, which over the demo's ~200 commands was most of its time."""
        from commons.cli import main

        saved = {key: os.environ.get(key) for key in (*ENV_SET, *ENV_DROP)}
        for key in ENV_DROP:
            os.environ.pop(key, None)
        os.environ.update(COMMONS_HOME=str(node.home), HOME=str(node.person))
        out, err = io.StringIO(), io.StringIO()
        try:
            with redirect_stdout(out), redirect_stderr(err):
                code = main(argv)
        except SystemExit as exited:  # --help and argparse's own exits
            code = exited.code if isinstance(exited.code, int) else 0
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        return code, out.getvalue(), err.getvalue()

    def commons(
        self, node: DemoNode, *args: str, at: str | None = None, check: bool = True, show: bool = True
    ) -> str:
        """Run `commons ARGS` in a node's home, as a person would; return its stdout."""
        shown = f"$ COMMONS_HOME={node.home} commons " + " ".join(shlex.quote(a) for a in args)
        self.say(shown)
        code, out, err = self.run_cli(node, (["--at", at] if at else []) + list(args))
        if not show:
            self.say(f"  ({len(out.splitlines())} lines)")
        elif not self.quiet and out.strip():
            print("  " + out.rstrip().replace("\n", "\n  "), flush=True)
        if not self.quiet and code != 0 and err.strip():
            print("  " + err.rstrip().replace("\n", "\n  "), flush=True)
        if check and code != 0:
            raise CommonsError(f"demo step failed: {shown}\n{err.strip()}")
        return out

    def node_json(self, node: DemoNode, *args: str, at: str | None = None, show: bool = True) -> dict:
        return json.loads(self.commons(node, *args, "--json", at=at, show=show))

    def query(self, node: DemoNode, *args: str, at: str | None = None):
        """A command's --json answer, unprinted (what the demo polls while daemons run)."""
        code, out, err = self.run_cli(node, (["--at", at] if at else []) + list(args) + ["--json"])
        if code != 0:
            raise CommonsError(f"demo query failed: commons {' '.join(args)}: {err.strip()}")
        return json.loads(out)

    def run(self) -> dict:
        self.say(f"# commons demo: {len(self.nodes)} nodes in {self.root}\n")
        self.say("## 1. Each node gets its identity: an author key, a transport key, a hashing secret")
        keys = {}
        for node in self.nodes:
            if not (node.home / "data" / "keys").exists():
                self.commons(node, "init")
            keys[node.name] = self.node_json(node, "id")
        self.say()
        self._ingest_sessions()
        rendered = self._sleep_nights()
        hook = self._session_end()
        ada, grace, linus = self.nodes
        self.say("## 4. ada signs records: a lesson in her own words, her shared lessons, a vouch for grace")
        self.commons(ada, "lessons", "add", HAND_LESSON, "--scope", "shared", at=SIGNED_AT)
        self.commons(ada, "publish", "on", at=SIGNED_AT)  # signs every shared lesson; local ones stay home
        self.commons(ada, "vouch", keys["grace"]["author"], at=SIGNED_AT)
        self.say()
        self.say("## 5. ada exports its records; grace imports them, checking each as if from a peer")
        exported = self.commons(ada, "export", show=False)
        export_file = self.root / "ada-export.jsonl"
        export_file.write_text(exported, encoding="utf-8")
        self.commons(grace, "import", str(export_file), at=SIGNED_AT)
        self.say("\n## 6. A tampered copy is refused, saying why")
        tampered = self.root / "tampered.jsonl"
        tampered.write_text(_tamper(exported, "fails", "works"), encoding="utf-8")
        self.commons(linus, "import", str(tampered), at=SIGNED_AT, check=False)
        self.say()
        self.say("## 7. Every store passes its integrity check")
        for node in self.nodes:
            self.commons(node, "store", "check")
        self.say()
        self._federation()
        # steps 9 and 10 (commons/demo/review.py)
        from commons.demo.review import peer_review_and_revocation

        review = peer_review_and_revocation(self, keys)
        return {
            "root": str(self.root),
            "review": review,
            "session_end_hook": hook,
            "nodes": [
                {
                    "name": node.name,
                    "home": str(node.home),
                    "person_home": str(node.person),
                    "public_key": keys[node.name]["author"],
                    "transport_key": keys[node.name]["transport"],
                    "memory_folders": rendered.get(node.name, []),
                }
                for node in self.nodes
            ],
        }

    # -- step 2: ingest ----------------------------------------------------------------------

    def _ingest_sessions(self) -> None:
        """Each node's person has Claude Code sessions in ~/.claude/projects/; the node reads them
        from there (the [ingest] roots' default): episodes in, raw bytes archived."""
        self.say("## 2. Each node ingests its agent's sessions from ~/.claude/projects: errors, corrections")
        for node in self.nodes:
            sessions = sorted((DEMO_SESSIONS / node.name).glob("day-*.jsonl"))
            laid = machine.lay_down_all(node.person, node.name,
                                        [s for s in sessions if (node.name, s.name) != (HOOK_NODE, HOOK_SESSION)])
            self.say(f"# {node.name}'s HOME={node.person}: {len(laid)} sessions in "
                     f"{len({p.parent for p in laid})} project folder(s) of ~/.claude/projects")
            self.commons(node, "ingest", at=INGESTED_AT)
            self.commons(node, "episodes", "--limit", "4")
        self.say()

    # -- step 3: sleep, lessons, report, recall, each project's memory ---------------------------

    def _sleep_nights(self) -> dict[str, list[str]]:
        """Each node sleeps its scripted nights; returns the memory folders each one rendered into."""
        self.say("## 3. Each node sleeps five scripted nights: lessons, predictions checked, and each")
        self.say("##    project's lessons rendered into that project's Claude Code memory")
        folders = {}
        for node in self.nodes:
            for night in NIGHTS[:-1]:
                self.commons(node, "sleep", at=night, show=False)
            last = json.loads(self.commons(node, "sleep", "--json", at=NIGHTS[-1], show=False))
            folders[node.name] = [f["folder"] for f in last["render"]["folders"]]
            self.commons(node, "lessons", at=NIGHTS[-1])
            self.commons(node, "report", at=NIGHTS[-1], show=False)
            self.commons(node, "recall", "pip install externally managed", "-k", "2", at=NIGHTS[-1])
            for index in node.memory_indexes:
                self.say(f"$ cat {index}")
                self.say("  " + index.read_text(encoding="utf-8").rstrip().replace("\n", "\n  "))
            self.say()
        return folders

    # -- step 3b: a session ends, the hook naps ----------------------------------------------------

    def _session_end(self) -> dict:
        """grace's day-10 session ends: Claude Code runs the SessionEnd hook, which ingests it and
        naps, so its correction is in the project's MEMORY.md within seconds, before any night."""
        node = next(n for n in self.nodes if n.name == HOOK_NODE)
        self.say("## 3b. A session ends: the SessionEnd hook ingests it and naps, no night needed")
        transcript = machine.lay_down(node.person, node.name, DEMO_SESSIONS / node.name / HOOK_SESSION)
        cwd = machine.session_cwd(transcript.read_text(encoding="utf-8"))
        event = {"session_id": transcript.stem, "transcript_path": str(transcript), "cwd": cwd,
                 "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}
        self.say(f"$ echo '{json.dumps(event)}' | COMMONS_HOME={node.home} commons --at {HOOK_AT} hook session-end")
        before = node.memory_text()
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "commons", "--at", HOOK_AT, "hook", "session-end"],
                       input=json.dumps(event).encode(), env=node.env(), check=True, timeout=HOOK_WAIT)
        while "pnpm" not in node.memory_text() and time.monotonic() - started < HOOK_WAIT:
            time.sleep(0.1)
        took = time.monotonic() - started
        landed = "pnpm" in node.memory_text() and "pnpm" not in before
        log = (node.home / "data" / "logs" / "hook.log")
        self.say("  " + (log.read_text(encoding="utf-8").rstrip().replace("\n", "\n  ") if log.exists() else ""))
        lines = [line for line in node.memory_text().splitlines() if "pnpm" in line]
        self.say(f"  the correction is in the project's MEMORY.md {took:.1f} s after the session ended:" if landed
                 else f"  the hook's lesson did not arrive within {HOOK_WAIT:.0f} s")
        for line in lines:
            self.say(f"    {line}")
        self.say()
        if not landed:
            raise CommonsError(f"the session-end hook made no lesson within {HOOK_WAIT:.0f} s (see {log})")
        return {"node": node.name, "seconds": round(took, 2), "lesson": lines[0] if lines else None}

    # -- step 8: a local federation of daemons -----------------------------------------------------

    def _federation(self) -> None:
        """Each node runs its daemon on loopback; ada publishes, grace and linus receive."""
        self.say("## 8. A local federation: a daemon per node on 127.0.0.1, ada publishes, the others receive")
        ada, grace, linus = self.nodes
        with Federation(self, self.nodes, FEDERATION_AT) as federation:
            self.commons(ada, "publish", "on", at=FEDERATION_AT)
            wanted = export_ids(self, ada, "lesson")
            federation.wait_until(lambda: all(wanted <= export_ids(self, node, "lesson") for node in (grace, linus)),
                                  f"grace and linus hold ada's {len(wanted)} published lessons")
            for node in self.nodes:
                self.commons(node, "status")
        self.say()


def _tamper(exported: str, word: str, other: str) -> str:
    """Change one word inside the signed body of the first record that has it: its id and signature
    no longer match, as if a relay had altered it."""
    lines = exported.splitlines()
    for index, line in enumerate(lines):
        if word.encode().hex() in json.loads(line)["body"]:
            lines[index] = line.replace(word.encode().hex(), other.encode().hex(), 1)
            break
    return "\n".join(lines) + "\n"


def run_demo(directory: Path | None, *, as_json: bool) -> dict:
    root = directory if directory is not None else Path(tempfile.mkdtemp(prefix="commons-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    summary = Demo(root.absolute(), quiet=as_json).run()
    return summary
