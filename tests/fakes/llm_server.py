"""A scripted LLM server on 127.0.0.1 that speaks the OpenAI and Anthropic wire formats.

It is the only stand-in the project allows: the real ``openai`` / ``anthropic`` SDKs talk to it over HTTP,
so retries, parsing and accounting are exercised for real. Stdlib only, so benchmarks can use it too::

    with ScriptedLLMServer(rules=[Rule(r"PASS", user=r"polite")], default="FAIL") as server:
        settings = LLMSettings(model="openai:fake", base_url=server.openai_url, api_key_env="K")

Endpoints: ``POST /v1/chat/completions`` (also ``/chat/completions``) and ``POST /v1/messages`` (also
``/messages``). ``base_url`` is the root (what the Anthropic SDK wants); ``openai_url`` is ``base_url/v1``.

Scripting, all changeable while the server runs:
- ``rules``: the first ``Rule`` whose regexes match the system prompt and/or the last user message answers;
  a reply is a string, a list of strings (served in turn, the last one repeated) or ``callable(body) -> str``.
- ``default``: the reply when no rule matches (string or callable).
- ``fail_next(429, 500)``: queue forced HTTP statuses served before normal answers, with a short
  ``retry-after-ms`` header so SDK retries are fast.
- ``delay``: seconds each request sleeps (throughput benchmarks).
- ``usage``: fixed ``(tokens_in, tokens_out)``; by default the word counts of the input and the reply.
- ``requests``: every request received, as ``Recorded`` (forced failures included).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = str | list[str] | Callable[[dict[str, Any]], str]

OPENAI_PATHS = ("/v1/chat/completions", "/chat/completions")
ANTHROPIC_PATHS = ("/v1/messages", "/messages")


@dataclass
class Rule:
    """Answer ``reply`` when every given regex matches (``re.search``, DOTALL): ``system`` against the
    system prompt, ``user`` against the last user message. A rule with neither matches everything."""

    reply: Reply
    user: str | None = None
    system: str | None = None
    _served: int = field(default=0, repr=False)

    def matches(self, system: str, user: str) -> bool:
        if self.system is not None and not re.search(self.system, system, re.DOTALL):
            return False
        return self.user is None or re.search(self.user, user, re.DOTALL) is not None


@dataclass
class Recorded:
    """One request as the server saw it."""

    api: str
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    system: str
    user: str
    status: int


def _text_of(content: Any) -> str:
    """Message content as text: a string, or the text blocks of a list of content blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


def _split_prompt(api: str, body: dict[str, Any]) -> tuple[str, str]:
    messages = body.get("messages") or []
    if api == "anthropic":
        system = _text_of(body.get("system", ""))
    else:
        system = "\n".join(_text_of(m.get("content")) for m in messages if m.get("role") == "system")
    users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    return system, users[-1] if users else ""


class ScriptedLLMServer:
    """An OpenAI-/Anthropic-compatible HTTP server on loopback, driven by rules. Use as a context manager,
    or call ``start()`` / ``stop()``."""

    def __init__(
        self,
        rules: list[Rule] | None = None,
        default: str | Callable[[dict[str, Any]], str] = "OK",
        *,
        delay: float = 0.0,
        usage: tuple[int, int] | None = None,
        retry_after_ms: int = 5,
    ) -> None:
        self.rules: list[Rule] = list(rules or [])
        self.default = default
        self.delay = delay
        self.usage = usage
        self.retry_after_ms = retry_after_ms
        self.requests: list[Recorded] = []
        self._statuses: deque[int] = deque()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------------------------
    def add_rule(self, reply: Reply, *, user: str | None = None, system: str | None = None) -> Rule:
        """Append a rule (checked after earlier ones) and return it."""
        rule = Rule(reply, user=user, system=system)
        self.rules.append(rule)
        return rule

    def fail_next(self, *statuses: int) -> None:
        """Serve these HTTP statuses, one per request, before answering normally again."""
        with self._lock:
            self._statuses.extend(statuses)

    def reset(self) -> None:
        """Forget rules, queued failures and recorded requests."""
        with self._lock:
            self.rules.clear()
            self._statuses.clear()
            self.requests.clear()
            self.default = "OK"

    # -- lifecycle ---------------------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_url(self) -> str:
        return f"{self.base_url}/v1"

    def start(self) -> ScriptedLLMServer:
        server = self

        class Handler(_Handler):
            owner = server

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler, bind_and_activate=False)
        # The default backlog (5) drops connections under a burst of 32 concurrent clients.
        httpd.request_queue_size = 256
        httpd.daemon_threads = True
        httpd.server_bind()
        httpd.server_activate()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour ---------------------------------------------------------------------------------------
    def _next_status(self) -> int:
        with self._lock:
            return self._statuses.popleft() if self._statuses else 200

    def _reply(self, body: dict[str, Any], system: str, user: str) -> str:
        with self._lock:
            rules = list(self.rules)
        for rule in rules:
            if rule.matches(system, user):
                return _serve(rule, body, self._lock)
        default = self.default
        return default(body) if callable(default) else default

    def _record(self, item: Recorded) -> None:
        with self._lock:
            self.requests.append(item)


def _serve(rule: Rule, body: dict[str, Any], lock: threading.Lock) -> str:
    reply = rule.reply
    if callable(reply):
        return reply(body)
    if isinstance(reply, list):
        with lock:
            index = min(rule._served, len(reply) - 1)
            rule._served += 1
        return reply[index]
    return reply


def _words(text: str) -> int:
    return len(text.split())


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedLLMServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        return None

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        api = "openai" if path in OPENAI_PATHS else "anthropic" if path in ANTHROPIC_PATHS else None
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        if api is None:
            self._send(404, {"error": {"message": f"no such endpoint: {path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(400, _error_body(api, 400, "request body is not JSON"))
            return
        system, user = _split_prompt(api, body)
        owner = self.owner
        status = owner._next_status()
        headers = {k.lower(): v for k, v in self.headers.items()}
        owner._record(Recorded(api, path, body, headers, system, user, status))
        if owner.delay:
            time.sleep(owner.delay)
        if status != 200:
            extra = {"retry-after-ms": str(owner.retry_after_ms)}
            self._send(status, _error_body(api, status, f"scripted failure {status}"), extra)
            return
        try:
            text = owner._reply(body, system, user)
        except Exception as exc:  # a broken test callable should show up as a server error, not a hang
            self._send(
                500, _error_body(api, 500, f"reply callable failed: {exc!r}"), {"x-should-retry": "false"}
            )
            return
        if owner.usage is not None:
            tokens_in, tokens_out = owner.usage
        else:
            prompt = " ".join([system, *(_text_of(m.get("content")) for m in body.get("messages") or [])])
            tokens_in, tokens_out = _words(prompt), _words(text)
        model = str(body.get("model", "scripted"))
        self._send(200, _answer(api, model, text, tokens_in, tokens_out))

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


def _error_body(api: str, status: int, message: str) -> dict[str, Any]:
    kind = {429: "rate_limit_error", 400: "invalid_request_error"}.get(status, "api_error")
    if api == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": str(status)}}


def _answer(api: str, model: str, text: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
    if api == "anthropic":
        return {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": tokens_in,
            "completion_tokens": tokens_out,
            "total_tokens": tokens_in + tokens_out,
        },
    }
