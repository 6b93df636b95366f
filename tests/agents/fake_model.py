"""A fake model server on loopback that scripts one coding session for any of the three agents.

It speaks as much of each model API as the CLIs need to run a session (`tests/agents/record.py`
points each CLI at it):

- Anthropic Messages (``POST /v1/messages``, streamed as server-sent events, or not) for Claude Code,
- OpenAI Responses (``POST /v1/responses``, streamed) for Codex,
- Gemini (``POST /v1beta/models/<model>:streamGenerateContent`` / ``:generateContent`` /
  ``:countTokens``) for Gemini CLI.

Whatever the API, the model plays the same `SCRIPT`, deciding each step from the conversation the
CLI sent (so a CLI that retries or resumes gets the answer that fits):

1. the person asks to run the project's checks → the model runs ``python3 check.py``, which
   really fails (``config.ini`` is missing);
2. the failure comes back → the model writes ``config.ini`` with the agent's file tool;
3. the write comes back → the model runs ``python3 check.py`` again, which now passes;
4. the pass comes back → the model says it is done and suggests ``pip install -r requirements.txt``;
5. the person says "no, that is wrong: use uv instead of pip in this project" → the model agrees.

Requests that carry no tools (titles, summaries, Gemini's routing and next-speaker checks) get a
short answer of the shape asked for. Every request is appended to a log (``--log``) so a new CLI
release that asks for something else shows what it asked.

Run alone: ``python tests/agents/fake_model.py --port 0`` prints the port it listens on.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CHECK = "python3 check.py"
CONFIG_TEXT = "[checks]\nmode = strict\n"
DONE_TEXT = ("The checks pass now: config.ini was missing, so I created it with `mode = strict`. "
             "To install the dependencies, run `pip install -r requirements.txt`.")
CORRECTION = "no, that is wrong: use uv instead of pip in this project"
AGREED_TEXT = "Understood: this project uses uv, so the dependencies install with `uv sync`, not pip."
TITLE_TEXT = "Run the project checks"


# -- the script, over a neutral view of the conversation ----------------------------------------


@dataclass(frozen=True)
class Say:
    text: str


@dataclass(frozen=True)
class Shell:
    command: str


@dataclass(frozen=True)
class WriteFile:
    name: str  # relative to the session's folder
    content: str


Step = Say | Shell | WriteFile


@dataclass
class Conversation:
    """What the model needs of a request: the person's messages and the tool results after the last."""

    person: list[str] = field(default_factory=list)
    results_since_person: int = 0
    has_tools: bool = True
    wants_json: bool = False

    def said(self, text: str) -> None:
        self.person.append(text)
        self.results_since_person = 0

    def result(self) -> None:
        self.results_since_person += 1


def next_step(conversation: Conversation) -> Step:
    if not conversation.has_tools:
        return Say(TITLE_TEXT)
    last = conversation.person[-1] if conversation.person else ""
    if "uv instead of pip" in last:
        return Say(AGREED_TEXT)
    done = conversation.results_since_person
    if done == 0:
        return Shell(CHECK)
    if done == 1:
        return WriteFile("config.ini", CONFIG_TEXT)
    if done == 2:
        return Shell(CHECK)
    return Say(DONE_TEXT)


def _is_person_text(text: str) -> bool:
    """The person's words, not a wrapper the CLI adds (context, reminders, instructions)."""
    stripped = text.strip()
    return bool(stripped) and not stripped.startswith(("<", "# AGENTS.md", "This is the Gemini CLI"))


# -- Anthropic Messages (Claude Code) -------------------------------------------------------------


def anthropic_conversation(body: dict[str, Any]) -> Conversation:
    convo = Conversation(has_tools=bool(body.get("tools")))
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        if message.get("role") != "user":
            continue
        if any(b.get("type") == "tool_result" for b in blocks):
            for b in blocks:
                if b.get("type") == "tool_result":
                    convo.result()
            continue
        texts = [b["text"] for b in blocks if b.get("type") == "text" and _is_person_text(b.get("text", ""))]
        if texts:
            convo.said(texts[-1])
    return convo


def anthropic_blocks(step: Step, ids: itertools.count, cwd: str) -> tuple[list[dict[str, Any]], str]:
    if isinstance(step, Say):
        return [{"type": "text", "text": step.text}], "end_turn"
    n = next(ids)
    if isinstance(step, Shell):
        tool = {"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": "Bash",
                "input": {"command": step.command, "description": "Run the project checks"}}
    else:
        tool = {"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": "Write",
                "input": {"file_path": f"{cwd}/{step.name}", "content": step.content}}
    return [{"type": "text", "text": "Running the checks." if isinstance(step, Shell) else "Adding config.ini."},
            tool], "tool_use"


def anthropic_sse(model: str, blocks: list[dict[str, Any]], stop: str, n: int) -> bytes:
    out: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
        "id": f"msg_fake{n:04d}", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}})]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            out.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                "content_block": {"type": "text", "text": ""}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                "delta": {"type": "text_delta", "text": block["text"]}}))
        else:
            out.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            out.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                  "usage": {"output_tokens": 20}}))
    out.append(("message_stop", {"type": "message_stop"}))
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in out)


# -- OpenAI Responses (Codex) ---------------------------------------------------------------------


def responses_conversation(body: dict[str, Any]) -> Conversation:
    convo = Conversation(has_tools=bool(_tool_names(body)))
    for item in body.get("input", []):
        kind = item.get("type")
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            convo.result()
        elif kind == "message" and item.get("role") == "user":
            parts = item.get("content")
            parts = [{"text": parts}] if isinstance(parts, str) else parts or []
            texts = [p.get("text", "") for p in parts if _is_person_text(p.get("text", ""))]
            if texts:
                convo.said(texts[-1])
    return convo


def _tool_names(body: dict[str, Any]) -> dict[str, str]:
    """The tools a Responses request offers, name → type (``function`` or ``custom``): in ``tools``,
    and (newer Codex) in ``additional_tools`` input items, grouped in namespaces."""
    names: dict[str, str] = {}

    def walk(tools: list[dict[str, Any]]) -> None:
        for tool in tools:
            if tool.get("type") == "namespace":
                walk(tool.get("tools") or [])
                continue
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if name:
                names[name] = tool.get("type", "function")

    walk(body.get("tools") or [])
    for item in body.get("input", []):
        if item.get("type") == "additional_tools":
            walk(item.get("tools") or [])
    return names


def _patch(step: WriteFile) -> str:
    return (f"*** Begin Patch\n*** Add File: {step.name}\n" + "".join(f"+{line}\n" for line in step.content.splitlines())
            + "*** End Patch\n")


def responses_item(step: Step, body: dict[str, Any], n: int) -> dict[str, Any]:
    if isinstance(step, Say):
        return {"type": "message", "role": "assistant", "id": f"msg_fake{n:04d}",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
    tools = _tool_names(body)
    call_id = f"call_fake{n:04d}"
    if tools.get("exec") == "custom":  # code mode: the model writes JavaScript that calls the tools
        if isinstance(step, Shell):
            source = f"const result = await tools.exec_command({{ cmd: {json.dumps(step.command)} }});\ntext(result);\n"
        else:
            source = f"const result = await tools.apply_patch({json.dumps(_patch(step))});\ntext(result);\n"
        return {"type": "custom_tool_call", "id": f"ctc_fake{n:04d}", "call_id": call_id, "name": "exec",
                "input": source, "status": "completed"}
    if isinstance(step, WriteFile) and "apply_patch" in tools:
        if tools["apply_patch"] == "custom":
            return {"type": "custom_tool_call", "id": f"ctc_fake{n:04d}", "call_id": call_id, "name": "apply_patch",
                    "input": _patch(step), "status": "completed"}
        return {"type": "function_call", "id": f"fc_fake{n:04d}", "call_id": call_id, "name": "apply_patch",
                "arguments": json.dumps({"input": _patch(step)})}
    command = step.command if isinstance(step, Shell) else (
        f"printf '%s' {json.dumps(step.content)} > {step.name}")
    if "exec_command" in tools:
        name, arguments = "exec_command", {"cmd": command}
    elif "shell_command" in tools:
        name, arguments = "shell_command", {"command": command}
    else:
        name, arguments = "shell", {"command": ["bash", "-lc", command]}
    return {"type": "function_call", "id": f"fc_fake{n:04d}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments)}


def responses_sse(model: str, item: dict[str, Any], n: int) -> bytes:
    response = {"id": f"resp_fake{n:04d}", "object": "response", "model": model, "status": "in_progress", "output": []}
    done = dict(response, status="completed", output=[item], usage={
        "input_tokens": 12, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 20,
        "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 32})
    events = [
        ("response.created", {"type": "response.created", "response": response}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
    ]
    if item["type"] == "message":
        events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                                      "item_id": item["id"], "content_index": 0,
                                                      "delta": item["content"][0]["text"]}))
    events += [
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": done}),
    ]
    return b"".join(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events)


# -- Gemini (Gemini CLI) --------------------------------------------------------------------------


def gemini_conversation(body: dict[str, Any]) -> Conversation:
    tools = body.get("tools") or []
    has_tools = any(t.get("functionDeclarations") for t in tools if isinstance(t, dict))
    config = body.get("generationConfig") or {}
    convo = Conversation(has_tools=has_tools, wants_json=config.get("responseMimeType") == "application/json")
    for content in body.get("contents", []):
        if content.get("role") != "user":
            continue
        parts = content.get("parts") or []
        if any("functionResponse" in p for p in parts):
            for p in parts:
                if "functionResponse" in p:
                    convo.result()
            continue
        texts = [p["text"] for p in parts if isinstance(p.get("text"), str) and _is_person_text(p["text"])]
        if texts:
            convo.said(texts[-1])
    return convo


def gemini_parts(step: Step, convo: Conversation, body: dict[str, Any], cwd: str) -> list[dict[str, Any]]:
    if isinstance(step, Say):
        if convo.wants_json:
            return [{"text": json.dumps(_json_answer(body))}]
        return [{"text": step.text}]
    if isinstance(step, Shell):
        call = {"name": "run_shell_command", "args": {"command": step.command, "description": "Run the project checks"}}
    else:
        call = {"name": "write_file", "args": {"file_path": f"{cwd}/{step.name}", "content": step.content}}
    return [{"functionCall": call}]


def _json_answer(body: dict[str, Any]) -> dict[str, Any]:
    """An object of the shape a JSON-mode request asks for (its schema's required keys)."""
    schema = (body.get("generationConfig") or {}).get("responseJsonSchema") or (
        body.get("generationConfig") or {}).get("responseSchema") or {}
    text = json.dumps(body)
    answer: dict[str, Any] = {}
    for key, spec in (schema.get("properties") or {}).items():
        kind = str(spec.get("type", "string")).lower()
        if spec.get("enum"):
            answer[key] = "user" if "user" in spec["enum"] else spec["enum"][0]
        elif kind == "boolean":
            answer[key] = False
        elif kind in ("number", "integer"):
            answer[key] = 0
        elif kind == "array":
            answer[key] = []
        elif kind == "object":
            answer[key] = {}
        else:
            answer[key] = "flash" if key == "model_choice" else "The person's turn."
    if not answer and "next_speaker" in text:
        answer = {"reasoning": "The model finished its turn.", "next_speaker": "user"}
    return answer


def gemini_chunk(parts: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 20, "totalTokenCount": 32},
            "modelVersion": model}


# -- the server -----------------------------------------------------------------------------------


class FakeModel(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, log: Path | None, cwd: str) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.log_path = log
        self.cwd = cwd  # the session's folder, for the file tool's absolute path
        self.ids = itertools.count(1)
        self.lock = threading.Lock()

    def note(self, entry: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        with self.lock, self.log_path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry) + "\n")


class _Handler(BaseHTTPRequestHandler):
    server: FakeModel

    def log_message(self, format: str, *args: Any) -> None:  # the request log is ours
        pass

    def do_GET(self) -> None:
        self.server.note({"method": "GET", "path": self.path})
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            self._json({"object": "list", "data": [], "models": []})
        else:
            self._json({"error": {"message": f"the fake model has no {self.path}"}}, status=404)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        self.server.note({"method": "POST", "path": self.path, "body": body})
        n = next(self.server.ids)
        if path.endswith("/v1/messages/count_tokens"):
            self._json({"input_tokens": 12})
        elif path.endswith("/v1/messages"):
            self._anthropic(body, n)
        elif path.endswith("/responses"):
            self._responses(body, n)
        elif ":countTokens" in path:
            self._json({"totalTokens": 12})
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self._gemini(body, path, n)
        else:
            self._json({"error": {"message": f"the fake model has no {self.path}"}}, status=404)

    def _anthropic(self, body: dict[str, Any], n: int) -> None:
        convo = anthropic_conversation(body)
        blocks, stop = anthropic_blocks(next_step(convo), self.server.ids, self.server.cwd)
        model = str(body.get("model", "claude-fake"))
        if body.get("stream"):
            self._sse(anthropic_sse(model, blocks, stop, n))
        else:
            self._json({"id": f"msg_fake{n:04d}", "type": "message", "role": "assistant", "model": model,
                        "content": blocks, "stop_reason": stop, "stop_sequence": None,
                        "usage": {"input_tokens": 12, "output_tokens": 20}})

    def _responses(self, body: dict[str, Any], n: int) -> None:
        convo = responses_conversation(body)
        item = responses_item(next_step(convo), body, n)
        self._sse(responses_sse(str(body.get("model", "gpt-fake")), item, n))

    def _gemini(self, body: dict[str, Any], path: str, n: int) -> None:
        convo = gemini_conversation(body)
        model = re.search(r"models/([^:/]+)", path)
        name = model.group(1) if model else "gemini-fake"
        chunk = gemini_chunk(gemini_parts(next_step(convo), convo, body, self.server.cwd), name)
        if ":streamGenerateContent" in path:
            self._sse(f"data: {json.dumps(chunk)}\n\n".encode())
        else:
            self._json(chunk)

    def _json(self, value: Any, status: int = 200) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, data: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(port: int = 0, log: Path | None = None, cwd: str = ".") -> FakeModel:
    """Start the server in a thread; ``server.server_address[1]`` is its port, ``shutdown()`` stops it."""
    server = FakeModel(port, log, cwd)
    threading.Thread(target=server.serve_forever, name="fake-model", daemon=True).start()
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve the scripted fake model on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: a free one, printed)")
    parser.add_argument("--log", type=Path, help="append every request to this JSONL file")
    parser.add_argument("--cwd", default=".", help="the session's folder (the file tool writes under it)")
    args = parser.parse_args(argv)
    server = FakeModel(args.port, args.log, args.cwd)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
