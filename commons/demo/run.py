"""The demonstration `make demo` runs: a few nodes on this machine, driven through the CLI.

Every step is a real `commons` command run in a node's home (``COMMONS_HOME``), printed as a
person would type it, so the demo doubles as a walkthrough. With ``--json`` only a summary is
printed, naming each node's home, author key and memory folder, so that a script can go on
inspecting the nodes with the CLI afterwards.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from commons.demo.federation import Federation, export_ids
from commons.errors import CommonsError

NODE_NAMES = ("ada", "grace", "linus")
DEMO_SESSIONS = Path(__file__).resolve().parent / "sessions"  # <node name>/day-NN-*.jsonl
INGESTED_AT = "2026-11-10T18:00:00Z"  # after the last bundled session
NIGHTS = ("2026-11-03T03:00Z", "2026-11-05T03:00Z", "2026-11-07T03:00Z", "2026-11-09T03:00Z",
          "2026-11-11T03:00Z")  # scripted nights of sleep; each sees the sessions before it
SIGNED_AT = "2026-11-11T08:00:00Z"  # ada writes a lesson by hand and starts publishing
FEDERATION_AT = "2026-11-11T09:00:00Z"  # the daemons' clocks start the morning after the last night
HAND_LESSON = "Debian 12's system Python refuses `pip install`: it fails with 'error: externally-managed-environment'."


@dataclass(frozen=True)
class DemoNode:
    name: str
    home: Path

    @property
    def memory_folder(self) -> Path:
        return self.home / "data" / "memory"


class Demo:
    def __init__(self, root: Path, *, quiet: bool):
        self.root = root
        self.quiet = quiet
        self.nodes = [DemoNode(name, root / name) for name in NODE_NAMES]

    def say(self, text: str = "") -> None:
        if not self.quiet:
            print(text, flush=True)

    def commons(
        self, node: DemoNode, *args: str, at: str | None = None, check: bool = True, show: bool = True
    ) -> str:
        """Run `commons ARGS` in a node's home, as a person would; return its stdout."""
        argv = [sys.executable, "-m", "commons"] + (["--at", at] if at else []) + list(args)
        shown = f"$ COMMONS_HOME={node.home} commons " + " ".join(shlex.quote(a) for a in args)
        self.say(shown)
        env = dict(os.environ, COMMONS_HOME=str(node.home))
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if not show:
            self.say(f"  ({len(done.stdout.splitlines())} lines)")
        elif not self.quiet and done.stdout.strip():
            print("  " + done.stdout.rstrip().replace("\n", "\n  "), flush=True)
        if not self.quiet and done.returncode != 0 and done.stderr.strip():
            print("  " + done.stderr.rstrip().replace("\n", "\n  "), flush=True)
        if check and done.returncode != 0:
            raise CommonsError(f"demo step failed: {shown}\n{done.stderr.strip()}")
        return done.stdout

    def node_json(self, node: DemoNode, *args: str, at: str | None = None, show: bool = True) -> dict:
        return json.loads(self.commons(node, *args, "--json", at=at, show=show))

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
        # steps 9 and 10 (commons/demo/review.py), which builds on this module's DemoNode
        from commons.demo.review import peer_review_and_revocation

        review = peer_review_and_revocation(self, keys)
        return {
            "root": str(self.root),
            "review": review,
            "nodes": [
                {
                    "name": node.name,
                    "home": str(node.home),
                    "public_key": keys[node.name]["author"],
                    "transport_key": keys[node.name]["transport"],
                    "memory_folder": rendered.get(node.name, str(node.memory_folder)),
                }
                for node in self.nodes
            ],
        }

    # -- step 2: ingest ----------------------------------------------------------------------

    def _ingest_sessions(self) -> None:
        """Each node reads its agent's bundled November sessions: episodes in, raw bytes archived."""
        self.say("## 2. Each node ingests its agent's sessions: errors, corrections, the raw stream archived")
        for node in self.nodes:
            self.commons(node, "ingest", str(DEMO_SESSIONS / node.name), at=INGESTED_AT)
            self.commons(node, "episodes", "--limit", "4")
        self.say()

    # -- step 3: sleep, lessons, report, recall, the memory folder -------------------------------

    def _sleep_nights(self) -> dict[str, str]:
        """Each node sleeps its scripted nights; returns the memory folder each one rendered into."""
        self.say("## 3. Each node sleeps five scripted nights: lessons, predictions checked, memory rendered")
        folders = {}
        for node in self.nodes:
            for night in NIGHTS[:-1]:
                self.commons(node, "sleep", at=night, show=False)
            last = json.loads(self.commons(node, "sleep", "--json", at=NIGHTS[-1], show=False))
            folders[node.name] = last["render"]["folder"]
            self.commons(node, "lessons", at=NIGHTS[-1])
            self.commons(node, "report", at=NIGHTS[-1])
            self.commons(node, "recall", "pip install externally managed", "-k", "2", at=NIGHTS[-1])
            index = Path(folders[node.name]) / "MEMORY.md"
            self.say(f"$ cat {index}")
            if index.exists():
                self.say("  " + index.read_text(encoding="utf-8").rstrip().replace("\n", "\n  "))
            self.say()
        return folders

    # -- step 8: a local federation of daemons -----------------------------------------------------

    def _federation(self) -> None:
        """Each node runs its daemon on loopback; ada publishes, grace and linus receive."""
        self.say("## 8. A local federation: a daemon per node on 127.0.0.1, ada publishes, the others receive")
        ada, grace, linus = self.nodes
        with Federation(self, self.nodes, FEDERATION_AT) as federation:
            self.commons(ada, "publish", "on", at=FEDERATION_AT)
            wanted = export_ids(ada, "lesson")
            federation.wait_until(lambda: all(wanted <= export_ids(node, "lesson") for node in (grace, linus)),
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
