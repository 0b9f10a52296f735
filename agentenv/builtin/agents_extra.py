"""More built-in agents: ``random``, ``replay:FILE``, ``command:CMD`` and ``openai:URL#MODEL``.

``command`` and ``openai`` are how a model that is not Python code is plugged in:

* ``command:CMD`` starts *CMD* (split like a shell would, no shell involved) once per agent and
  talks JSON lines with it. For each step agentenv writes one line on the program's stdin::

      {"type": "observation", "task_id": "...", "mode": "agentic", "new_episode": true,
       "round": 0, "prompt": "...", "output": "...", "seed": 3}

  and reads one line from its stdout: the action as JSON (a JSON string holding the program text
  single-shot, an action object agentic). The program's stderr passes through to ours.
* ``openai:URL#MODEL[&temperature=0.2&max_tokens=2048]`` calls an OpenAI-compatible
  ``/v1/chat/completions`` endpoint (vLLM, llama.cpp server, ...) at *URL* (``/chat/completions``
  is appended unless URL already ends with it), with the API key from ``OPENAI_API_KEY`` when set.
  Standard library only.

An agent that cannot reach its model raises :class:`agentenv.InfrastructureError` (``agentenv
eval`` retries such episodes and reports them apart from model failures); any other exception
from an agent is the agent's own failure.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import shlex
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Mapping

import agentenv
from agentenv import SINGLE_SHOT, Agent, AgentError, InfrastructureError

def _observation_fields(observation: Mapping[str, Any]) -> dict[str, Any]:
    rnd = observation.get("round", 0)
    return {"round": int(rnd), "prompt": str(observation.get("prompt", "")),
            "output": str(observation.get("output", ""))}


# --------------------------------------------------------------------------- random

class RandomAgent(Agent):
    """A seeded random policy: a baseline that any learned policy must beat.

    Single-shot it sends the file unchanged, with a random line dropped, or random text. Agentic it
    lists, reads, runs the tests or mangles a random file a few times, then submits.
    """

    name = "random"

    def __init__(self, fixed_seed: int | None = None, max_actions: int = 4):
        self.fixed_seed, self.max_actions = fixed_seed, max_actions

    def reset(self, task, mode, seed=None):
        self.task, self.mode = task, mode
        self.rng = random.Random(self.fixed_seed if self.fixed_seed is not None else seed)
        self.files = {k: v.decode("utf-8", "replace") for k, v in task.workspace.read().items()}
        self.left = self.rng.randint(0, self.max_actions)

    def _mangle(self, text: str) -> str:
        lines = text.splitlines(keepends=True)
        choice = self.rng.random()
        if choice < 0.3 or not lines:
            return text
        if choice < 0.7:
            del lines[self.rng.randrange(len(lines))]
            return "".join(lines)
        return "".join(self.rng.choice("abcdefghij (){}:=+-\n") for _ in range(self.rng.randint(0, 200)))

    def act(self, observation, info):
        if self.mode == SINGLE_SHOT:
            return self._mangle(self.files.get(self.task.single_shot_path, ""))
        if self.left <= 0:
            return {"action": "submit"}
        self.left -= 1
        paths = sorted(self.files)
        kind = self.rng.choice(["list_files", "read_file", "run_command", "overwrite_file"])
        if kind == "list_files" or not paths:
            return {"action": "list_files"}
        path = self.rng.choice(paths)
        if kind == "read_file":
            return {"action": "read_file", "path": path}
        if kind == "run_command":
            return {"action": "run_command", "command": self.rng.choice(["ls", "python -m pytest -q -x"])}
        return {"action": "overwrite_file", "path": path, "content": self._mangle(self.files[path])}


def _random_factory(arg, task, mode):
    if arg is None:
        return RandomAgent()
    try:
        return RandomAgent(int(arg))
    except ValueError:
        raise AgentError(f"agent 'random:{arg}': the argument is a seed (an integer), e.g. random:7") from None


# --------------------------------------------------------------------------- replay

class ReplayAgent(Agent):
    """Plays actions recorded in a JSONL file.

    Each line is an object with an ``action``; ``task_id`` (optional) restricts it to one task and
    ``episode_id`` or ``sample`` (optional) groups lines into episodes. In an evaluation the agent
    plays the episode of the sample it is given (:attr:`agentenv.Agent.sample`; of a sample
    recorded more than once, the last attempt), whatever worker plays it, and refuses a sample the
    recording does not have; elsewhere it plays the episodes in turn, one per ``reset``. Lines of
    other ``type`` than ``step`` are skipped, so an ``agentenv eval`` ``trajectories.jsonl``
    replays as it is. When an episode's actions run out the agent submits.
    """

    name = "replay"

    def __init__(self, path: str, task_id: str):
        self.path = path
        self.episodes = self._load(path, task_id)
        if not self.episodes:
            raise AgentError(f"{path}: no actions for task {task_id!r} (each line needs an \"action\" field, "
                             "and \"task_id\" when given must match the task)")
        self.count = 0

    @staticmethod
    def _load(path: str, task_id: str) -> list[list[Any]]:
        try:
            lines = open(path, encoding="utf-8").read().splitlines()
        except OSError as exc:
            raise AgentError(f"agent replay: cannot read {path}: {exc.strerror}; give replay:FILE with a JSONL "
                             "file of {\"action\": ...} lines") from exc
        groups: dict[Any, list[Any]] = {}
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except (ValueError, RecursionError) as exc:  # (nested past the parser's depth, an int past str's digits)
                if number == len(lines):
                    continue  # the last line of an interrupted recording may be cut short
                if isinstance(exc, json.JSONDecodeError):
                    why = exc.msg
                else:
                    why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)[:100]
                raise AgentError(f"{path}:{number}: not JSON ({why}); each line must be an object with an "
                                 "\"action\" field") from None
            if not isinstance(doc, dict) or doc.get("type", "step") != "step":
                continue
            if "action" not in doc:
                raise AgentError(f"{path}:{number}: the line has no \"action\" field")
            if doc.get("task_id", task_id) != task_id:
                continue
            key = (doc["sample"], doc.get("attempt")) if "sample" in doc else doc.get("episode_id")
            try:
                hash(key)
            except TypeError:
                raise AgentError(f"{path}:{number}: \"sample\", \"attempt\" and \"episode_id\" must be numbers or "
                                 "text") from None
            groups.setdefault(key, []).append(doc["action"])
        by_sample: dict[Any, list[Any]] = {}
        for key, actions in groups.items():  # a retried sample: its last attempt is the episode
            by_sample[key[0] if isinstance(key, tuple) else key] = actions
        return list(by_sample.values())

    def reset(self, task, mode, seed=None):
        self.mode = mode
        if self.sample is None:
            index = self.count % len(self.episodes)
        elif self.sample < len(self.episodes):
            index = self.sample
        else:
            raise AgentError(f"{self.path}: the recording has {len(self.episodes)} episode(s) of task "
                             f"{task.task_id}, and sample {self.sample} was asked for; record more episodes or "
                             f"lower --samples to {len(self.episodes)}")
        self.pending = list(self.episodes[index])
        self.count += 1

    def act(self, observation, info):
        if self.pending:
            return self.pending.pop(0)
        if self.mode == SINGLE_SHOT:
            raise AgentError(f"{self.path}: the recording has no action left for this single-shot episode")
        return {"action": "submit"}


def _replay_factory(arg, task, mode):
    if not arg:
        raise AgentError("agent 'replay' needs a file: replay:PATH/TO/actions.jsonl")
    return ReplayAgent(arg, task.task_id)


# --------------------------------------------------------------------------- command

class CommandAgent(Agent):
    """An external program that reads observations as JSON lines and answers actions (see the
    module docstring for the protocol)."""

    name = "command"

    def __init__(self, command: str, timeout_s: float = 600.0):
        self.argv = shlex.split(command)
        if not self.argv:
            raise AgentError("agent 'command' needs a program: command:'python my_policy.py'")
        self.command, self.timeout_s = command, timeout_s
        self.proc: subprocess.Popen | None = None
        self.new_episode = False

    def _start(self) -> subprocess.Popen:
        if self.proc is None or self.proc.poll() is not None:
            try:
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             text=True, encoding="utf-8", bufsize=1)
            except OSError as exc:
                raise AgentError(f"agent command:{self.command}: cannot start {self.argv[0]!r}: {exc.strerror}") from exc
        return self.proc

    def reset(self, task, mode, seed=None):
        self.task_id, self.mode, self.seed = task.task_id, mode, seed
        self.new_episode = True

    def act(self, observation, info):
        proc = self._start()
        message = {"type": "observation", "task_id": self.task_id, "mode": self.mode,
                   "new_episode": self.new_episode, "seed": self.seed, **_observation_fields(observation)}
        self.new_episode = False
        try:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise AgentError(f"agent command:{self.command} exited (status {proc.wait()}) before reading "
                             "the observation") from None
        line = self._readline(proc)
        if not line:
            raise AgentError(f"agent command:{self.command} closed its stdout (status {proc.poll()}) instead of "
                             "answering an action line")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise AgentError(f"agent command:{self.command} answered a line that is not JSON: {line[:200]!r}; "
                             'answer e.g. {"action": "submit"} or a JSON string with the code') from None

    def _readline(self, proc: subprocess.Popen) -> str:
        box: list[str] = []
        reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.timeout_s)
        if reader.is_alive():
            self.close()
            raise AgentError(f"agent command:{self.command} gave no action within {self.timeout_s:g} s")
        return box[0] if box else ""

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _command_factory(arg, task, mode):
    if not arg:
        raise AgentError("agent 'command' needs a program: command:'python my_policy.py'")
    return CommandAgent(arg)


# --------------------------------------------------------------------------- openai

SYSTEM_SINGLE_SHOT = ("You fix code. Reply with the complete new content of the file you are asked for, in one "
                      "fenced code block, and nothing else.")
SYSTEM_AGENTIC = ("You fix code in a sandboxed workspace, one action per reply. Each reply is exactly one JSON "
                  "object, for example {\"action\": \"read_file\", \"path\": \"main.py\"}, "
                  "{\"action\": \"run_command\", \"command\": \"python -m pytest -q\"}, "
                  "{\"action\": \"overwrite_file\", \"path\": \"main.py\", \"content\": \"...\"} or "
                  "{\"action\": \"submit\"} when you are done.")
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.S)
#: how many ``{`` of a reply :func:`extract_action` tries to decode (as ``ChatEnv`` does)
MAX_JSON_CANDIDATES = 200


def extract_code(text: str) -> str:
    """The first fenced block of a chat reply, or the whole reply when there is none."""
    match = _FENCE.search(text)
    return match.group(1) if match else text


def extract_action(text: str) -> Any:
    """The first JSON object with an ``action`` in a chat reply (fenced blocks first, then the whole
    reply); the raw text when none parses, so the environment answers it as an invalid action and
    the model sees why. The reply is the model's output: JSON nested past the recursion limit is a
    candidate that does not parse, and at most :data:`MAX_JSON_CANDIDATES` ``{`` are tried, so one
    reply costs one round, never the episode (an exception here is the agent's own failure)."""
    decoder = json.JSONDecoder()
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    starts = ((candidate, i) for candidate in candidates for i, ch in enumerate(candidate) if ch == "{")
    for candidate, start in itertools.islice(starts, MAX_JSON_CANDIDATES):
        try:
            value, _ = decoder.raw_decode(candidate, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and "action" in value:
            return value
    return text


class OpenAIAgent(Agent):
    """A chat model behind an OpenAI-compatible ``/v1/chat/completions`` endpoint."""

    name = "openai"

    def __init__(self, url: str, model: str, options: Mapping[str, Any] | None = None,
                 timeout_s: float = 300.0, retries: int = 3):
        self.url = url.rstrip("/")
        if not self.url.endswith("/chat/completions"):
            self.url += "/chat/completions"
        self.model, self.options = model, dict(options or {})
        self.timeout_s, self.retries = timeout_s, retries
        self.messages: list[dict[str, str]] = []

    def reset(self, task, mode, seed=None):
        self.mode, self.seed = mode, seed
        self.messages = [{"role": "system", "content": SYSTEM_SINGLE_SHOT if mode == SINGLE_SHOT else SYSTEM_AGENTIC}]

    def act(self, observation, info):
        obs = _observation_fields(observation)
        if len(self.messages) == 1:
            self.messages.append({"role": "user", "content": obs["prompt"]})
        else:
            self.messages.append({"role": "user", "content": obs["output"] or "(no output)"})
        reply = self._complete()
        self.messages.append({"role": "assistant", "content": reply})
        return extract_code(reply) if self.mode == SINGLE_SHOT else extract_action(reply)

    def _complete(self) -> str:
        body = {"model": self.model, "messages": self.messages, **self.options}
        if self.seed is not None:
            body.setdefault("seed", self.seed)
        headers = {"Content-Type": "application/json"}
        if os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {os.environ['OPENAI_API_KEY']}"
        request = urllib.request.Request(self.url, data=json.dumps(body).encode(), headers=headers, method="POST")
        problem = ""
        for attempt in range(self.retries):
            if attempt:
                time.sleep(min(2 ** attempt * 0.25, 5))
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    doc = json.loads(response.read())
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:300].decode("utf-8", "replace")
                if exc.code < 500 and exc.code != 429:  # the request itself is wrong: retrying cannot help
                    raise AgentError(f"agent openai: {self.url} answered HTTP {exc.code}: {detail}") from exc
                problem = f"HTTP {exc.code}: {detail}"
                continue
            except (urllib.error.URLError, OSError, ValueError) as exc:
                problem = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
                continue
            try:
                return str(doc["choices"][0]["message"]["content"] or "")
            except (KeyError, IndexError, TypeError):
                raise AgentError(f"agent openai: {self.url} answered without choices[0].message.content: "
                                 f"{json.dumps(doc)[:300]}") from None
        raise InfrastructureError(f"agent openai: {self.url} failed {self.retries} times; last: {problem}")


def parse_openai_spec(arg: str | None) -> tuple[str, str, dict[str, Any]]:
    """``URL#MODEL[&key=value...]`` -> (url, model, options); values are JSON when they parse."""
    if not arg or "#" not in arg:
        raise AgentError("agent 'openai' needs URL#MODEL, e.g. openai:http://127.0.0.1:8000/v1#Qwen2.5-Coder-7B"
                         "[&temperature=0.2]")
    url, _, rest = arg.partition("#")
    model, *pairs = rest.split("&")
    if not url.startswith(("http://", "https://")) or not model:
        raise AgentError(f"agent openai:{arg}: expected http(s)://HOST[:PORT]/v1#MODEL")
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise AgentError(f"agent openai:{arg}: option {pair!r} is not key=value")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = urllib.parse.unquote(value)
    return url, model, options


def _openai_factory(arg, task, mode):
    url, model, options = parse_openai_spec(arg)
    return OpenAIAgent(url, model, options)


@agentenv.hookimpl
def agentenv_add_agents(registry) -> None:
    registry.add_agent("random", _random_factory, "a seeded random baseline (random[:SEED])")
    registry.add_agent("replay", _replay_factory, "actions recorded in a JSONL file (replay:FILE)")
    registry.add_agent("command", _command_factory,
                       "an external program speaking JSON lines on stdin/stdout (command:CMD)")
    registry.add_agent("openai", _openai_factory,
                       "an OpenAI-compatible chat endpoint (openai:URL#MODEL[&temperature=T])")
