"""A local OpenAI-compatible server for offline runs, tests and benchmarks.

Real HTTP on 127.0.0.1 (ephemeral port, one thread per connection) serving
``POST /v1/chat/completions``, ``GET /v1/models`` and the Batch API (``POST /v1/files``,
``GET /v1/files/{id}/content``, ``POST /v1/batches``, ``GET /v1/batches/{id}``). Answers come from a pluggable
responder; latency and a fault schedule (429 with Retry-After, 500, slow replies that
time the client out, 200s with a broken body) are configurable; every request is logged by the sha256 of its body
so tests can prove that nothing was asked twice.

Models are checked as OpenAI checks them: a reasoning model (o1, o3, o4, gpt-5 ids, or the
names given as ``reasoning_models``) refuses ``max_tokens`` and a temperature other than 1
with OpenAI's 400 ``invalid_request_error``, and takes ``max_completion_tokens`` and
``reasoning_effort``; a chat model refuses ``reasoning_effort``. So a wrongly shaped request
fails a test instead of passing unnoticed.

    with LLMStandIn(latency_s=0.1) as server:
        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp)

Command line: ``python -m dlbench.standins.llm [--port N] [--latency S]``.
"""

from __future__ import annotations

import argparse
import email.policy
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler
from typing import Any, get_args

from dlbench.config import ReasoningEffort, model_family
from dlbench.standins.server import FaultSchedule, LocalServer
from dlbench.store import digest

CHARS_PER_TOKEN = 4
REASONING_EFFORTS = get_args(ReasoningEffort)


@dataclass(frozen=True)
class Reply:
    """A responder's answer; ``finish_reason`` 'length' marks a deliberately cut answer."""

    text: str
    finish_reason: str = "stop"


Responder = Callable[[dict[str, Any], int], "str | Reply"]  # (request body, choice index)


@dataclass(frozen=True)
class Fault:
    """One injected failure: ``kind`` is 'rate_limit' (429), 'server_error' (500), 'timeout'
    or 'malformed' (200 whose ``body`` is not a usable chat completion)."""

    kind: str
    retry_after: float | None = 0.05
    delay_s: float = 5.0  # for 'timeout': how long the reply is held back
    body: str = '{"id": "chatcmpl-broken", "object": "chat.completion"}'  # for 'malformed': no choices
    content_type: str = "application/json"

    def __post_init__(self) -> None:
        if self.kind not in {"rate_limit", "server_error", "timeout", "malformed"}:
            raise ValueError(f"unknown fault kind {self.kind!r}")


@dataclass(frozen=True)
class LoggedRequest:
    key: str  # sha256 of the request body (canonical JSON)
    status: int
    body: dict[str, Any]


def tokens(text: str) -> int:
    """Rough token count (4 characters a token), enough for usage and cost figures."""
    return max(1, -(-len(text) // CHARS_PER_TOKEN)) if text else 0


# ------------------------------------------------------------------ responders

_DEF_RE = re.compile(r"^[ \t]*((?:async\s+)?def\s+\w+\s*\(.*?\)\s*(?:->\s*[^:\n]+)?:)", re.S | re.M)
_NAME_RE = re.compile(r"(?:function|method)\s+[`'\"]?([A-Za-z_]\w*)")


def code_responder(body: dict[str, Any], index: int) -> str:
    """Deterministic answer to 'write this function': a fenced block defining it.

    The function is taken from the last ``def`` in the last user message (or a
    "function `name`" phrase); choice ``index`` varies the body when sampling.
    """
    prompt = _last_user_text(body)
    signature = _signature(prompt)
    if signature is None:
        return "I could not find a function to write in the request."
    name = re.search(r"def\s+(\w+)", signature).group(1)  # type: ignore[union-attr]
    variant = f"    # variant {index}\n" if index else ""
    code = f'{signature}\n    """Stand-in implementation of {name}."""\n{variant}    return None\n'
    return f"Here is the implementation of `{name}`:\n\n```python\n{code}```\n"


def _signature(prompt: str) -> str | None:
    matches = _DEF_RE.findall(prompt)
    if matches:
        return " ".join(matches[-1].split()).replace("( ", "(").replace(" )", ")")
    named = _NAME_RE.findall(prompt)
    return f"def {named[-1]}(*args, **kwargs):" if named else None


def _last_user_text(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content", "") if users else ""
    if isinstance(content, list):  # content parts
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


class ScriptedResponder:
    """Answers from a script: in order (repeating the last), or by a substring of the prompt."""

    def __init__(self, script: Sequence[str | Reply] | dict[str, str | Reply]):
        self.script = script
        self._lock = threading.Lock()
        self._next = 0

    def __call__(self, body: dict[str, Any], index: int) -> str | Reply:
        if isinstance(self.script, dict):
            prompt = _last_user_text(body)
            for needle, answer in self.script.items():
                if needle in prompt:
                    return answer
            raise LookupError(f"no scripted answer matches the prompt: {prompt[:80]!r}")
        with self._lock:
            answer = self.script[min(self._next, len(self.script) - 1)]
            self._next += 1
        return answer


# ------------------------------------------------------------------ server


class LLMStandIn(LocalServer):
    """The server; a context manager that serves on a background thread."""

    thread_name = "llm-standin"

    def __init__(
        self,
        responder: Responder = code_responder,
        latency_s: float = 0.0,
        faults: Iterable[Fault] = (),
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "standin-model",
        batch_delay_s: float = 0.2,
        reasoning_models: Iterable[str] | None = None,
    ):
        """``reasoning_models``: the model ids served as reasoning models (None: OpenAI's, by name)."""
        self.responder = responder
        self.reasoning_models = None if reasoning_models is None else frozenset(reasoning_models)
        self.latency_s = latency_s
        self.model = model
        self.log: list[LoggedRequest] = []
        self.faults: FaultSchedule[Fault] = FaultSchedule(queued=faults)
        self._lock = threading.Lock()
        super().__init__(_handler_for(self), host, port)
        self.batches = _Batches(self, batch_delay_s)

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    # -- faults and the request log
    def fail_next(self, *faults: Fault) -> None:
        """Queue faults; each of the next chat requests consumes one."""
        self.faults.add_next(*faults)

    def counts(self, status: int | None = 200) -> Counter[str]:
        """Requests per body hash (only those answered with ``status``; None: all)."""
        with self._lock:
            return Counter(r.key for r in self.log if status is None or r.status == status)

    @property
    def served(self) -> int:
        """Chat requests answered successfully."""
        return sum(self.counts().values())

    def repeated(self) -> dict[str, int]:
        """Body hashes answered successfully more than once (should be empty)."""
        return {k: n for k, n in self.counts().items() if n > 1}

    def is_reasoning(self, model: str) -> bool:
        if self.reasoning_models is None:
            return model_family(model) == "reasoning"
        return model in self.reasoning_models

    # -- request handling (called on server threads)
    def refusal(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """OpenAI's 400 body for a parameter the model does not take, or None."""
        model = str(body.get("model", self.model))
        if not self.is_reasoning(model):
            if body.get("reasoning_effort") is not None:
                return _refusal(
                    "Unsupported parameter: 'reasoning_effort' is not supported with this model.", "reasoning_effort"
                )
            return None
        if body.get("max_tokens") is not None:
            return _refusal(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "max_tokens",
            )
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return _refusal(
                f"Unsupported value: 'temperature' does not support {_shown(temperature)} with this model. "
                "Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            )
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in REASONING_EFFORTS:
            return _refusal(
                f"Unsupported value: 'reasoning_effort' does not support {effort!r} with this model. "
                f"Supported values are: {', '.join(repr(e) for e in REASONING_EFFORTS)}.",
                "reasoning_effort",
                "unsupported_value",
            )
        return None

    def _record(self, body: dict[str, Any], status: int) -> None:
        with self._lock:
            self.log.append(LoggedRequest(digest(body), status, body))

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The chat.completion object answering ``body``."""
        n = int(body.get("n") or 1)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        choices, out_tokens = [], 0
        for index in range(n):
            reply = self.responder(body, index)
            reply = Reply(reply) if isinstance(reply, str) else reply
            text, finish = _truncate(reply, max_tokens)
            out_tokens += tokens(text)
            choices.append({"index": index, "message": {"role": "assistant", "content": text}, "finish_reason": finish})
        in_tokens = sum(tokens(str(m.get("content", ""))) for m in body.get("messages", []))
        return {
            "id": "chatcmpl-" + digest(body)[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": choices,
            "usage": {
                "prompt_tokens": in_tokens,
                "completion_tokens": out_tokens,
                "total_tokens": in_tokens + out_tokens,
            },
        }


def _truncate(reply: Reply, max_tokens: int | None) -> tuple[str, str]:
    if max_tokens is not None and tokens(reply.text) > max_tokens:
        return reply.text[: max_tokens * CHARS_PER_TOKEN], "length"
    return reply.text, reply.finish_reason


def _handler_for(server: LLMStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the client reuses connections
        disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by design
            pass

        def do_GET(self) -> None:
            path = self.path.rstrip("/")
            if path in ("/v1/models", "/models"):
                self._send(
                    200, {"object": "list", "data": [{"id": server.model, "object": "model", "owned_by": "dlbench"}]}
                )
            elif match := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
                self._send_bytes(*server.batches.file_content(match.group(1)))
            elif match := re.fullmatch(r"/v1/batches/([\w-]+)", path):
                self._send(*server.batches.get(match.group(1)))
            else:
                self._send(404, _error(f"no route {self.path}", "not_found"))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.rstrip("/")
            if path == "/v1/files":
                self._send(*server.batches.upload(self.headers.get("Content-Type", ""), raw))
                return
            if path == "/v1/batches":
                self._send(*server.batches.create(json.loads(raw or b"{}")))
                return
            if path not in ("/v1/chat/completions", "/chat/completions"):
                self._send(404, _error(f"no route {self.path}", "not_found"))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError as exc:
                self._send(400, _error(f"body is not JSON: {exc}", "invalid_request_error"))
                return
            if server.latency_s:
                time.sleep(server.latency_s)
            fault = server.faults.take()
            if fault is not None:
                self._fault(body, fault)
                return
            refusal = server.refusal(body)
            if refusal is not None:
                server._record(body, 400)
                self._send(400, refusal)
                return
            try:
                answer = server.complete(body)
            except Exception as exc:  # a responder bug must show up as a 500, not a hang
                server._record(body, 500)
                self._send(500, _error(f"responder failed: {exc}", "server_error"))
                return
            server._record(body, 200)
            self._send(200, answer)

        def _fault(self, body: dict[str, Any], fault: Fault) -> None:
            if fault.kind == "timeout":
                time.sleep(fault.delay_s)
                server._record(body, 599)
                self.close_connection = True
                return
            if fault.kind == "malformed":
                server._record(body, 200)
                self._send_bytes(200, fault.body.encode("utf-8"), content_type=fault.content_type)
                return
            status = 429 if fault.kind == "rate_limit" else 500
            server._record(body, status)
            headers = {"Retry-After": f"{fault.retry_after}"} if status == 429 and fault.retry_after is not None else {}
            kind = "rate_limit_exceeded" if status == 429 else "server_error"
            self._send(status, _error(f"injected {fault.kind}", kind), headers)

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            self._send_bytes(status, json.dumps(payload).encode("utf-8"), headers)

        def _send_bytes(
            self,
            status: int,
            data: bytes,
            headers: dict[str, str] | None = None,
            content_type: str = "application/json",
        ) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (timeout); nothing to tell it

    return Handler


class _Batches:
    """Batch API: uploaded files, and batches answered line by line after ``delay_s``."""

    def __init__(self, server: LLMStandIn, delay_s: float):
        self.server, self.delay_s = server, delay_s
        self.files: dict[str, bytes] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def upload(self, content_type: str, raw: bytes) -> tuple[int, dict[str, Any]]:
        form = BytesParser(policy=email.policy.HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        parts = {p.get_param("name", header="content-disposition"): p for p in form.iter_parts()}
        if "file" not in parts:
            return 400, _error("multipart form without a 'file' part", "invalid_request_error")
        data = parts["file"].get_payload(decode=True) or b""
        file_id = self._store(data)
        purpose = parts["purpose"].get_content().strip() if "purpose" in parts else "batch"
        filename = parts["file"].get_filename() or "upload.jsonl"
        return 200, _file_object(file_id, len(data), filename, purpose)

    def _store(self, data: bytes) -> str:
        with self._lock:
            file_id = f"file-{len(self.files):06d}"
            self.files[file_id] = data
        return file_id

    def file_content(self, file_id: str) -> tuple[int, bytes]:
        if file_id not in self.files:
            return 404, json.dumps(_error(f"no file {file_id}", "not_found")).encode()
        return 200, self.files[file_id]

    def create(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        input_id = body.get("input_file_id")
        if input_id not in self.files:
            return 400, _error(f"no file {input_id}", "invalid_request_error")
        with self._lock:
            batch_id = f"batch-{len(self.jobs):06d}"
            self.jobs[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body.get("endpoint", "/v1/chat/completions"),
                "input_file_id": input_id,
                "completion_window": body.get("completion_window", "24h"),
                "status": "in_progress",
                "created_at": int(time.time()),
                "output_file_id": None,
                "error_file_id": None,
                "request_counts": {"total": 0, "completed": 0, "failed": 0},
            }
        threading.Thread(target=self._run, args=(batch_id,), daemon=True).start()
        return 200, dict(self.jobs[batch_id])

    def get(self, batch_id: str) -> tuple[int, dict[str, Any]]:
        with self._lock:
            job = self.jobs.get(batch_id)
            return (200, dict(job)) if job else (404, _error(f"no batch {batch_id}", "not_found"))

    def _run(self, batch_id: str) -> None:
        time.sleep(self.delay_s)
        job = self.jobs[batch_id]
        lines = [json.loads(line) for line in self.files[job["input_file_id"]].splitlines() if line.strip()]
        out = [self._answer(line) for line in lines]
        failed = sum(o["response"]["status_code"] != 200 for o in out)
        output_id = self._store("".join(json.dumps(o) + "\n" for o in out).encode())
        with self._lock:
            job.update(
                status="completed",
                output_file_id=output_id,
                completed_at=int(time.time()),
                request_counts={"total": len(out), "completed": len(out) - failed, "failed": failed},
            )

    def _answer(self, line: dict[str, Any]) -> dict[str, Any]:
        """One output line; a queued fault is consumed here too ('malformed': a 200 line with
        the broken body, any other kind: a 500 line)."""
        body = line.get("body", {})
        fault = self.server.faults.take()
        refusal = self.server.refusal(body)
        try:
            if fault is None and refusal is not None:
                status, answer = 400, refusal
            elif fault is None:
                status, answer = 200, self.server.complete(body)
            elif fault.kind == "malformed":
                status, answer = 200, _json_or_text(fault.body)
            else:
                status, answer = 500, _error(f"injected {fault.kind}", "server_error")
        except Exception as exc:  # one bad line fails alone, as on the real service
            status, answer = 500, _error(f"responder failed: {exc}", "server_error")
        self.server._record(body, status)
        response = {"status_code": status, "request_id": digest(body)[:16], "body": answer}
        return {"id": f"batch_req_{digest(line)[:16]}", "custom_id": line.get("custom_id"), "response": response}


def _file_object(file_id: str, size: int, filename: str, purpose: str) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": size,
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": purpose,
        "status": "processed",
    }


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": kind}}


def _shown(value: Any) -> str:
    """A value as OpenAI's messages show it: 0.3, 0, 'text'."""
    return f"{value:g}" if isinstance(value, int | float) and not isinstance(value, bool) else repr(value)


def _refusal(message: str, param: str, code: str = "unsupported_parameter") -> dict[str, Any]:
    """OpenAI's body for a request parameter the model does not take (HTTP 400)."""
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Local OpenAI-compatible stand-in server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: an ephemeral port (printed).")
    parser.add_argument("--latency", type=float, default=0.0, help="Seconds added to every chat request.")
    args = parser.parse_args(argv)
    server = LLMStandIn(latency_s=args.latency, host=args.host, port=args.port)
    print(server.base_url, flush=True)
    server.serve_until_interrupted()


if __name__ == "__main__":
    main()
