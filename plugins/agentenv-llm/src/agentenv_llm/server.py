"""A small OpenAI-compatible HTTP server for a Hugging Face causal LM: ``/v1/chat/completions``
(tools included) and ``/v1/models``.

For running agentenv's ``openai`` agent, the ``rubric`` judge and rollouts against a local model
without vLLM: ``agentenv llm-serve MODEL_DIR --port 8000``. The chat template of the model's
tokenizer renders messages and tools; tool calls written as ``<tool_call>{...}</tool_call>`` (Qwen,
Hermes) come back as OpenAI ``tool_calls``. One generation runs at a time (a CPU or one GPU);
requests queue. Standard library HTTP; torch and transformers for the model.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentenv.wrappers import parse_reply

log = logging.getLogger("agentenv.llm.server")
MAX_BODY = 32 << 20


class ModelServer:
    """Serves *model_path* (a directory or hub name; nothing is downloaded on machines without access)."""

    def __init__(self, model_path: str, *, name: str | None = None, host: str = "127.0.0.1", port: int = 0,
                 device: str = "auto", max_new_tokens: int = 256):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.name = name or model_path.rstrip("/").rsplit("/", 1)[-1]
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModelForCausalLM.from_pretrained(model_path).to(self.device).eval()
        self.max_new_tokens = max_new_tokens
        self.lock = threading.Lock()
        self.requests = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug("%s " + fmt, self.address_string(), *args)

            def _send(self, status: int, doc: dict[str, Any]) -> None:
                data = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
                self._send(status, {"error": {"message": message, "type": kind}})

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.name, "object": "model", "owned_by": "agentenv"}]})
                elif self.path.rstrip("/") in ("/health", "/v1/health"):
                    self._send(200, {"status": "ok"})
                else:
                    self._error(404, f"no route {self.path}")

            def do_POST(self) -> None:
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    return self._error(404, f"no route {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    return self._error(413, f"the request body is {length} bytes; at most {MAX_BODY}")
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError as exc:
                    return self._error(400, f"the body is not JSON: {exc}")
                if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
                    return self._error(400, "the body needs a non-empty 'messages' list")
                if body.get("model") not in (None, server.name):
                    return self._error(404, f"model {body.get('model')!r} is not served here (this server serves "
                                            f"{server.name!r})", "not_found_error")
                try:
                    self._send(200, server.complete(body))
                except (ValueError, TypeError, KeyError) as exc:
                    self._error(400, f"cannot render the conversation: {type(exc).__name__}: {exc}")

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        import torch

        messages = [_for_template(m) for m in body["messages"]]
        tools = body.get("tools") or None
        inputs = self.tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True,
                                                    return_tensors="pt", return_dict=True)
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        max_new = int(body.get("max_tokens") or body.get("max_completion_tokens") or self.max_new_tokens)
        temperature = float(body.get("temperature", 1.0))
        options: dict[str, Any] = {"max_new_tokens": max(1, min(max_new, 4096))}
        if temperature <= 0:
            options["do_sample"] = False
        else:
            options.update(do_sample=True, temperature=temperature, top_p=float(body.get("top_p", 1.0)))
        with self.lock:
            self.requests += 1
            if body.get("seed") is not None:
                torch.manual_seed(int(body["seed"]))
            with torch.no_grad():
                output = self.model.generate(**inputs, **options)
        prompt_tokens = int(inputs["input_ids"].shape[1])
        new = output[0][prompt_tokens:]
        text = self.tokenizer.decode(new, skip_special_tokens=False)
        finished = any(text.endswith(t) for t in (self.tokenizer.eos_token or "\0", "<|endoftext|>"))
        for marker in (self.tokenizer.eos_token, "<|endoftext|>"):
            if marker:
                text = text.split(marker, 1)[0]
        message: dict[str, Any] = {"role": "assistant", "content": text}
        reason = "stop" if finished else "length"
        if tools:
            reply = parse_reply(text)
            calls = [c for c in reply.calls if not c.error]
            if calls:
                message = {"role": "assistant", "content": text.split("<tool_call>", 1)[0].strip() or None,
                           "tool_calls": [c.to_openai() for c in calls]}
                reason = "tool_calls"
        return {"id": "chatcmpl-" + uuid.uuid4().hex[:16], "object": "chat.completion", "created": int(time.time()),
                "model": self.name, "choices": [{"index": 0, "message": message, "finish_reason": reason}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": int(new.shape[0]),
                          "total_tokens": prompt_tokens + int(new.shape[0])}}

    def start(self) -> "ModelServer":
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="agentenv-llm-server", daemon=True)
        self.thread.start()
        return self

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self.thread is not None:
            self.thread.join(timeout=10)

    def __enter__(self) -> "ModelServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _for_template(message: Any) -> dict[str, Any]:
    """An OpenAI message as chat templates expect it: tool-call arguments as objects, content text."""
    if not isinstance(message, dict):
        raise TypeError(f"a message is an object, not {type(message).__name__}")
    out = dict(message)
    if isinstance(out.get("content"), list):
        out["content"] = "".join(p.get("text", "") for p in out["content"] if isinstance(p, dict))
    if out.get("content") is None:
        out["content"] = ""
    calls = []
    for call in out.get("tool_calls") or ():
        function = dict(call.get("function") or {})
        if isinstance(function.get("arguments"), str):
            try:
                function["arguments"] = json.loads(function["arguments"])
            except ValueError:
                pass
        calls.append({**call, "function": function})
    if calls:
        out["tool_calls"] = calls
    return out
