"""The language-model face of the environments: tools from action schemas, chat messages, tool calls.

A chat model sees an episode as a conversation. :func:`tools` turns every registered action type
(built-in or a plugin's) into an OpenAI-compatible tool definition straight from the JSON Schema the
action declares, so a plugin's new action is a new tool with no extra code. :class:`ChatEnv` wraps a
:class:`CodingEnv` so that observations are chat messages and actions are assistant messages:

* ``reset()`` returns ``[system, user]``: the system prompt says how to act, the user turn is the
  task (for single-shot tasks, the environment's own prompt with the file to rewrite);
* ``step(assistant_message)`` takes an assistant message in OpenAI shape (``tool_calls`` with
  JSON-text ``arguments``), Anthropic shape (``tool_use`` content blocks), a plain string, or a
  Hermes-style ``<tool_call>{...}</tool_call>`` text, and returns the new messages: one ``tool``
  message per call, answering its ``tool_call_id``.

Each tool call is one round of the wrapped environment, and so is a malformed one (arguments that are
not a JSON object, an unknown tool, a reply with no tool call): the model reads why in the answer,
nothing is raised, and a model that only ever sends garbage runs out of rounds like any other.
The reward is the wrapped environment's, unchanged.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import itertools
import json
import os
import re
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import gymnasium as gym

from ._env import CodingEnv
from ._errors import UnknownNameError
from ._extension import ActionType
from ._plugins import registry
from ._schema import load_task
from ._spec import AGENTIC, SINGLE_SHOT, TaskSpec

#: what OpenAI (and most servers) accept as a function name
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: bounds on what one assistant message may make us do (it is the model's output: untrusted)
MAX_CALLS_PER_MESSAGE = 32
MAX_SCANNED_CHARS = 1_000_000
MAX_JSON_CANDIDATES = 200
MAX_JSON_WORK = 2_000_000  # characters the JSON parser may read in one reply, over all its starts

SYSTEM_SINGLE_SHOT = ("You are an expert programmer. Answer with the complete new content of the file you are "
                      "asked for, in one fenced code block, and nothing else.")
SYSTEM_AGENTIC = ("You are an expert programmer working in a sandboxed workspace. Act only through the tools you "
                  "are given: each tool call is one action and its result comes back to you. When the task is "
                  "done, call `submit`: the task's own tests then score the workspace (protected test files are "
                  "restored first, so editing them earns nothing).")
_NOT_RUN = "[not run: the episode ended before this call]"


# --------------------------------------------------------------------------- tasks

def resolve_task(task: TaskSpec | str | os.PathLike[str]) -> TaskSpec:
    """A :class:`TaskSpec` from itself, a task file, an env id (``agentenv/x-v0``) or a task id.

    Trainers keep tasks in dataset columns as strings; this is how such a string becomes a task."""
    if isinstance(task, TaskSpec):
        return task
    ref = os.fspath(task)
    if os.path.isfile(ref):
        return load_task(ref)
    ids = [i for i in gym.registry if i.startswith("agentenv/")]
    env_id = ref if ref in gym.registry else None
    if env_id is None:  # a bare task id: its newest version
        versions = [i for i in ids if re.fullmatch(re.escape(f"agentenv/{ref}") + r"-v\d+", i)]
        env_id = max(versions, key=lambda i: int(i.rsplit("-v", 1)[1])) if versions else None
    path = gym.spec(env_id).kwargs.get("task") if env_id else None
    if not path:
        names = [i[len("agentenv/"):].rsplit("-v", 1)[0] for i in ids if i != "agentenv/Task-v0"]
        close = difflib.get_close_matches(ref.removeprefix("agentenv/").rsplit("-v", 1)[0], names, n=5, cutoff=0.5)
        raise UnknownNameError("task (a task file, env id or task id)", ref, close or sorted(names)[:10])
    return load_task(path)


def task_reference(task: TaskSpec) -> str:
    """A string that :func:`resolve_task` turns back into *task*: its env id when that is registered,
    else its file (what a dataset column or a trajectory can hold)."""
    return task.env_id if task.env_id in gym.registry else task.source


# --------------------------------------------------------------------------- tools

def tool_name(action: str) -> str:
    """The tool name of an action: the action's own name when a chat API accepts it, else a safe,
    stable stand-in (characters outside ``[A-Za-z0-9_-]`` replaced, a hash keeps names distinct)."""
    if _TOOL_NAME.fullmatch(action):
        return action
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", action)[:55]
    return f"{safe}_{hashlib.sha1(action.encode()).hexdigest()[:8]}"


def _field_description(name: str, schema: Mapping[str, Any], root: str | None) -> str:
    kind = schema.get("type")
    kind = " or ".join(kind) if isinstance(kind, list) else kind
    if name in ("path", "cwd") and kind in (None, "string"):
        where = f" ({root})" if root else ""
        return f"A path in the workspace{where}: relative to its root, or absolute below it."
    return f"The {name} ({kind})." if kind else f"The {name}."


def tool_parameters(action: ActionType, root: str | None = None) -> dict[str, Any]:
    """The JSON Schema of an action's fields as a tool's ``parameters``: an object schema; closed
    (``additionalProperties: false``) when the action refuses unknown fields, as the env does; every
    property described (a model reads the descriptions)."""
    declared = action.fields_schema
    params = copy.deepcopy({k: v for k, v in declared.items() if k not in ("$schema", "$id")})
    params["type"] = "object"
    props = params.setdefault("properties", {})
    if isinstance(declared.get("properties"), Mapping) and "additionalProperties" not in declared:
        params["additionalProperties"] = False
    if isinstance(props, dict):
        props.pop("action", None)
        for name, sub in props.items():
            if isinstance(sub, dict) and "description" not in sub:
                sub["description"] = _field_description(name, sub, root)
    if "required" in params:
        params["required"] = [r for r in params["required"] if r != "action"]
    return params


def tools(task: TaskSpec | str | os.PathLike[str] | None = None, *, format: str = "openai",
          actions: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every action type as a tool definition, from the JSON Schema it declares.

    *format*: ``"openai"`` (``{"type": "function", "function": {name, description, parameters}}``,
    which vLLM, SGLang, transformers' chat templates and TRL read too) or ``"anthropic"``
    (``{name, description, input_schema}``). *task* (a TaskSpec, file, env id or task id) adds its
    workspace root to the descriptions of path fields. *actions* limits the list to those names."""
    if format not in ("openai", "anthropic"):
        raise ValueError(f"format must be 'openai' or 'anthropic', not {format!r}")
    root = resolve_task(task).root if task is not None else None
    kinds = registry().actions
    names = list(actions) if actions is not None else sorted(kinds)
    out = []
    for name in names:
        kind = registry().action(name)  # an unknown name: UnknownNameError with did-you-mean
        params = tool_parameters(kind, root)
        description = kinds[name].description or f"The {name} action."
        if format == "openai":
            out.append({"type": "function", "function": {"name": tool_name(name), "description": description,
                                                          "parameters": params}})
        else:
            out.append({"name": tool_name(name), "description": description, "input_schema": params})
    return out


def _action_names() -> dict[str, str]:
    """tool name -> action name, for every registered action."""
    return {tool_name(a): a for a in registry().actions}


# --------------------------------------------------------------------------- parsing a reply

@dataclass
class ToolCall:
    """One tool call of an assistant message; ``error`` says why it cannot run (it still costs a round)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    error: str | None = None

    def to_openai(self) -> dict[str, Any]:
        args = self.raw_arguments if self.arguments is None else json.dumps(self.arguments, ensure_ascii=False)
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": args}}


@dataclass
class AssistantReply:
    """An assistant message, whatever shape it came in, normalised to what the transcript keeps."""

    text: str
    calls: list[ToolCall] = field(default_factory=list)
    #: the message as a whole is unusable (wrong type, wrong role); said to the model, costs a round
    problem: str | None = None
    dropped_calls: int = 0

    def message(self) -> dict[str, Any]:
        """OpenAI shape: ``content`` text and ``tool_calls`` with JSON-text ``arguments``."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.calls:
            msg["tool_calls"] = [c.to_openai() for c in self.calls]
        return msg


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = value if isinstance(value, str) else repr(value)
    except Exception:  # (an int of more digits than str() takes, a nest past the recursion limit, a raising __repr__)
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _call_id() -> str:
    return "call_" + uuid.uuid4().hex[:12]


def _arguments(raw: Any) -> tuple[dict[str, Any] | None, str, str | None]:
    """(arguments, their text, error) from what a call carries: JSON text or an object."""
    if raw is None or raw == "":
        return {}, "{}", None
    if isinstance(raw, Mapping):  # (a client's object: bytes, sets or tuple keys are no JSON)
        text = _json_text(raw)
        if text is None:
            return None, _short(raw), "arguments must be JSON data (text, numbers, lists, objects with text keys)"
        return dict(raw), text, None
    if not isinstance(raw, str):
        return None, _short(raw), f"arguments must be a JSON object, not {type(raw).__name__}"
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        why = f"{exc.msg} at position {exc.pos}" if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        return None, raw, f"arguments are not valid JSON ({why})"
    if not isinstance(value, dict):
        return None, raw, f"arguments must be a JSON object, not {type(value).__name__}"
    return value, raw, None


def _json_text(value: Any) -> str | None:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return None


def _call(call_id: Any, name: Any, raw_args: Any) -> ToolCall:
    ident = call_id if isinstance(call_id, str) and call_id else _call_id()
    if not isinstance(name, str) or not name:
        args, text, _ = _arguments(raw_args)
        return ToolCall(ident, _short(name, 100) if name is not None else "", args, text,
                        "the tool call has no function name")
    args, text, error = _arguments(raw_args)
    return ToolCall(ident, name[:200], args, text, error)


_OPEN_TAG, _CLOSE_TAG = "<tool_call>", "</tool_call>"


def _json_objects(text: str) -> list[dict[str, Any]]:
    """JSON objects found in *text* (fenced or bare), bounded in the work done: at most
    MAX_JSON_CANDIDATES starts, and MAX_JSON_WORK characters read over all of them (each start
    read to the text's end: 199 nested ``{"k":`` before an unclosed list of a million characters
    held the host for 15 s a reply, red team, stop 36)."""
    decoder = json.JSONDecoder()
    found, tried, work = [], 0, MAX_JSON_WORK
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        if tried >= MAX_JSON_CANDIDATES or work <= 0:
            break
        tried += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            work -= exc.pos - start + 1
            continue
        except (ValueError, RecursionError):
            work -= len(text) - start
            continue
        work -= end - start
        if isinstance(value, dict):
            found.append(value)
    return found


def _tagged_blocks(text: str, limit: int) -> list[str]:
    """The stripped contents of the first *limit* ``<tool_call>...</tool_call>`` blocks of *text*, each
    closed by the first closing tag after it. Found with ``str.find``, in time linear in the text: a
    regex rescans the rest of the text from every opening tag that is never closed, which made a
    reply of unclosed tags quadratic (twenty minutes, holding the GIL, at the size a reply may have)."""
    blocks, at = [], 0
    while len(blocks) < limit:
        start = text.find(_OPEN_TAG, at)
        if start == -1:
            break
        end = text.find(_CLOSE_TAG, start + len(_OPEN_TAG))
        if end == -1:  # no later opening tag is closed either
            break
        blocks.append(text[start + len(_OPEN_TAG):end].strip())
        at = end + len(_CLOSE_TAG)
    return blocks


def calls_from_text(text: str) -> list[ToolCall]:
    """Tool calls written as text: Hermes/Qwen ``<tool_call>{"name", "arguments"}</tool_call>``
    blocks, else the first JSON object naming a tool (``{"name": ..., "arguments": ...}``) or an
    agentenv action object (``{"action": "run_command", ...}``)."""
    text = text[:MAX_SCANNED_CHARS]
    blocks = _tagged_blocks(text, MAX_CALLS_PER_MESSAGE + 1)
    if blocks:
        calls = []
        for block in blocks:
            try:
                value = json.loads(block)
            except (ValueError, RecursionError):
                calls.append(ToolCall(_call_id(), "", None, block[:2000], "the <tool_call> block is not valid JSON"))
                continue
            if not isinstance(value, dict):
                calls.append(ToolCall(_call_id(), "", None, block[:2000], "a <tool_call> block holds a JSON object"))
                continue
            calls.append(_call(None, value.get("name"), value.get("arguments", value.get("parameters"))))
        return calls
    for value in _json_objects(text):
        if isinstance(value.get("name"), str) and ("arguments" in value or "parameters" in value):
            return [_call(None, value["name"], value.get("arguments", value.get("parameters")))]
        if isinstance(value.get("action"), str):
            args = {k: v for k, v in value.items() if k != "action"}
            text = _json_text(args)
            if text is None:
                return [ToolCall(_call_id(), value["action"][:200], None, _short(args), "the arguments are nested too deeply")]
            return [ToolCall(_call_id(), value["action"][:200], args, text)]
    return []


def _plain(message: Any) -> Any:
    """SDK objects (openai, anthropic: pydantic models) as plain data."""
    dump = getattr(message, "model_dump", None)
    if callable(dump) and not isinstance(message, (str, bytes, Mapping, list)):
        try:
            return dump()
        except Exception:  # an object that only looks like a model: judged as it is
            return message
    return message


def parse_reply(message: Any, *, text_calls: bool = True) -> AssistantReply:
    """An assistant message in any accepted shape, as an :class:`AssistantReply`; never raises.

    Accepted: a string; an OpenAI message (``content`` text or parts, ``tool_calls`` or the legacy
    ``function_call``); an Anthropic message or its ``content`` list (``text`` and ``tool_use``
    blocks); SDK objects of either. With *text_calls*, a message without structured calls is searched
    for calls written as text (:func:`calls_from_text`)."""
    message = _plain(message)
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    if isinstance(message, str):
        calls = calls_from_text(message) if text_calls else []
        return _bounded(AssistantReply(message, calls))
    if isinstance(message, list):
        message = {"role": "assistant", "content": message}
    if not isinstance(message, Mapping):
        return AssistantReply("", problem=f"an assistant message is a string or an object, not {type(message).__name__}")
    role = message.get("role", "assistant")
    if role != "assistant":
        return AssistantReply("", problem=f"the reply must be an assistant message, not role {_short(role, 40)!r}")
    texts, calls = [], []
    content = message.get("content")
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for block in content:
            block = _plain(block)
            if isinstance(block, str):
                texts.append(block)
            elif isinstance(block, Mapping):
                kind = block.get("type")
                if kind in ("text", "output_text") and isinstance(block.get("text"), str):
                    texts.append(block["text"])
                elif kind == "tool_use":  # Anthropic
                    raw = block.get("input", {})
                    calls.append(_call(block.get("id"), block.get("name"), raw if raw is not None else {}))
    elif content is not None:
        return AssistantReply("", problem=f"the message's content must be text or a list of blocks, "
                                          f"not {type(content).__name__}")
    raw_calls = message.get("tool_calls")
    if isinstance(raw_calls, list):
        for raw in raw_calls:
            raw = _plain(raw)
            if not isinstance(raw, Mapping):
                calls.append(ToolCall(_call_id(), "", None, _short(raw), "a tool call is an object"))
                continue
            function = raw.get("function")
            function = function if isinstance(function, Mapping) else raw
            calls.append(_call(raw.get("id"), function.get("name"), function.get("arguments")))
    elif raw_calls is not None:
        return AssistantReply("\n".join(texts), problem="tool_calls must be a list")
    legacy = message.get("function_call")
    if isinstance(legacy, Mapping) and not calls:
        calls.append(_call(None, legacy.get("name"), legacy.get("arguments")))
    text = "\n".join(texts)
    if not calls and text_calls:
        calls = calls_from_text(text)
    return _bounded(AssistantReply(text, calls))


def _bounded(reply: AssistantReply) -> AssistantReply:
    if len(reply.calls) > MAX_CALLS_PER_MESSAGE:
        reply.dropped_calls = len(reply.calls) - MAX_CALLS_PER_MESSAGE
        reply.calls = reply.calls[:MAX_CALLS_PER_MESSAGE]
    return reply


_BACKTICKS = re.compile("`+")


def _fenced_block(text: str) -> str | None:
    """The body of the first block whose opening line starts with a fence (three or more backticks
    or tildes) and whose closing line is that fence alone (trailing spaces or tabs allowed), or None.
    An opening run with no closing line of its length after it is read as the longest fence it starts
    with that does close, as the regex this replaces did (five backticks, then a line of three: a
    block fenced with three).

    One pass over the lines, last to first, remembering the nearest closing line of each fence below:
    a regex rescanned the rest of the text from every opening line that never closes, quadratic in a
    reply of such lines (half an hour, holding the GIL, at the size a reply may have)."""
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
    nearest: dict[tuple[str, int], int] = {}  # (fence character, length) -> the nearest closing line below
    found = None
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        char = line[:1]
        if char not in ("`", "~") or not line.startswith(char * 3):
            continue
        if i < len(lines) - 1:  # an opening line ends with a newline
            run = len(line) - len(line.lstrip(char))
            closing = next((nearest[(char, n)] for n in range(run, 2, -1) if (char, n) in nearest), None)
            if closing is not None:
                found = (starts[i + 1], starts[closing])
        fence = line.rstrip(" \t")
        if fence == char * len(fence):
            nearest[(char, len(fence))] = i
    return text[found[0]:found[1]] if found else None


def _loose_block(text: str) -> str | None:
    """The body of the first block opened by a run of backticks (then anything but a backtick up to
    the end of the line) and closed by as many backticks anywhere later, such as the code's last line
    (small models write blocks so); or None. An opening run longer than every later run is read from
    where it is as long as the longest of them, as the regex this replaces did.

    Linear where the regex was quadratic: runs whose line holds another backtick are skipped, and the
    first run that opens a block decides (when no run of three follows it, none can close a block)."""
    start = text.find("```")
    while start != -1:
        end = _BACKTICKS.match(text, start).end()
        tick = text.find("`", end)
        newline = text.find("\n", end, len(text) if tick == -1 else tick)
        if newline != -1:
            longest = max(map(len, _BACKTICKS.findall(text, newline + 1)), default=0)
            width = min(end - start, longest)
            if width < 3:
                return None
            return text[newline + 1:text.find("`" * width, newline + 1)]
        start = -1 if tick == -1 else text.find("```", tick)
    return None


def extract_code(text: str) -> str | None:
    """The body of the first fenced code block of *text* (a fence of three or more backticks or
    tildes closes only on the same fence, so code that holds ``` can be fenced with ````), else of
    the first block closed at the end of its code's last line, or None."""
    text = text[:MAX_SCANNED_CHARS]
    body = _fenced_block(text)
    return body if body is not None else _loose_block(text)


def fence(code: str, language: str = "") -> str:
    """*code* in a fenced block whose fence is longer than any run of backticks in it."""
    runs = [len(m) for m in re.findall(r"`{3,}", code)]
    ticks = "`" * max([3] + [n + 1 for n in runs])
    return f"{ticks}{language}\n{code}{'' if code.endswith(chr(10)) else chr(10)}{ticks}"


# --------------------------------------------------------------------------- prompts

def agentic_prompt(task: TaskSpec, max_rounds: int) -> str:
    """The user turn of an agentic chat episode: the task, the workspace, the budget."""
    files = "\n".join(sorted(task.workspace.read())) or "(empty)"
    return (f"{task.description}\n\nThe workspace is {task.root}. Its files:\n{files}\n\n"
            f"You have {max_rounds} tool calls; call submit when you are done.")


def chat_prompt(task: TaskSpec, mode: str, max_rounds: int, env_prompt: str) -> list[dict[str, Any]]:
    """The opening ``[system, user]`` messages. Single-shot, the user turn is the environment's
    own prompt (it shows the file to rewrite); agentic, :func:`agentic_prompt`."""
    if mode == SINGLE_SHOT:
        return [{"role": "system", "content": SYSTEM_SINGLE_SHOT}, {"role": "user", "content": env_prompt}]
    return [{"role": "system", "content": SYSTEM_AGENTIC}, {"role": "user", "content": agentic_prompt(task, max_rounds)}]


def opening_messages(task: TaskSpec | str | os.PathLike[str], mode: str | None = None) -> list[dict[str, Any]]:
    """The ``[system, user]`` messages :class:`ChatEnv` opens an episode of *task* with (*mode*:
    single-shot where the task allows it, else agentic), for datasets built before any rollout.
    Single-shot, the environment's own prompt is read from a reset (one sandbox, opened and closed)."""
    spec = resolve_task(task)
    mode = mode or (SINGLE_SHOT if spec.supports_single_shot else AGENTIC)
    if mode == AGENTIC:
        return chat_prompt(spec, mode, spec.max_rounds, "")
    env = CodingEnv(spec, mode=mode)
    try:
        obs, _ = env.reset()
        return chat_prompt(spec, mode, env.max_rounds, obs["prompt"])
    finally:
        env.close()


def to_anthropic(messages: Sequence[Mapping[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """OpenAI-shape messages as Anthropic's ``(system, messages)``: tool calls become ``tool_use``
    blocks, consecutive ``tool`` messages one user turn of ``tool_result`` blocks."""
    system, out = [], []
    for msg in messages:
        role = msg.get("role")
        if role == "system":
            system.append(str(msg.get("content") or ""))
        elif role == "tool":
            block = {"type": "tool_result", "tool_use_id": msg.get("tool_call_id"), "content": str(msg.get("content") or "")}
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) \
                    and all(b.get("type") == "tool_result" for b in out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if msg.get("content"):
                blocks.append({"type": "text", "text": str(msg["content"])})
            for call in msg.get("tool_calls") or ():
                args, _, _ = _arguments(call["function"].get("arguments"))
                blocks.append({"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": args or {}})
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": ""}]})
        else:
            out.append({"role": "user", "content": str(msg.get("content") or "")})
    return "\n\n".join(system), out


# --------------------------------------------------------------------------- the wrapper

class ChatMessages(gym.spaces.Space):
    """A list of chat messages (objects with a string ``role``). Not sampled: a chat policy writes text."""

    def __init__(self) -> None:
        super().__init__(None, None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, list) and all(isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in x)

    def __repr__(self) -> str:
        return "ChatMessages()"


class AssistantMessages(gym.spaces.Space):
    """What ``ChatEnv.step`` accepts: a string, a message object, or a list of content blocks."""

    def __init__(self) -> None:
        super().__init__(None, None)

    def contains(self, x: Any) -> bool:
        return isinstance(x, (str, Mapping, list))

    def __repr__(self) -> str:
        return "AssistantMessages()"


class ChatEnv(gym.Wrapper):
    """A :class:`CodingEnv` spoken to in chat messages and tool calls (see the module docstring).

    ``env.messages`` holds the whole conversation (assistant messages normalised to OpenAI shape),
    ``env.tools`` the tool definitions to send with it (none single-shot). *on_no_tool_call*: what an
    agentic reply without any tool call does: ``"continue"`` (default: the model is told to call a tool;
    the reply costs a round) or ``"submit"`` (the reply ends the episode, as in chat loops that stop
    when the model stops calling tools). The reward, info and trajectory are the wrapped env's;
    ``info["tool_calls"]`` lists this step's calls with their outcome."""

    def __init__(self, env: gym.Env, *, on_no_tool_call: str = "continue", tool_format: str = "openai"):
        super().__init__(env)
        if on_no_tool_call not in ("continue", "submit"):
            raise ValueError(f"on_no_tool_call must be 'continue' or 'submit', not {on_no_tool_call!r}")
        self.core = env.unwrapped
        self.on_no_tool_call = on_no_tool_call
        self.mode = self.core.mode
        self.tools = tools(self.core.task, format=tool_format) if self.mode == AGENTIC else []
        self.messages: list[dict[str, Any]] = []
        self.observation_space = ChatMessages()
        self.action_space = AssistantMessages()
        self._names = _action_names()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        self.messages = chat_prompt(self.core.task, self.mode, self.core.max_rounds, obs["prompt"])
        return copy.deepcopy(self.messages), info

    def step(self, action: Any):
        reply = parse_reply(action, text_calls=self.mode == AGENTIC)
        self.messages.append(reply.message())
        if self.mode == SINGLE_SHOT:
            new, reward, terminated, truncated, info = self._single_shot(reply)
        else:
            new, reward, terminated, truncated, info = self._agentic(reply)
        self.messages.extend(new)
        return copy.deepcopy(new), reward, terminated, truncated, info

    # ---- single-shot: the reply is the file's new content
    def _single_shot(self, reply: AssistantReply):
        code = self._code(reply)
        obs, reward, terminated, truncated, info = self.env.step(code if code is not None else "")
        note = f"[{reply.problem}]\n" if reply.problem else ""
        return [{"role": "user", "content": note + obs["output"]}], reward, terminated, truncated, info

    def _code(self, reply: AssistantReply) -> str | None:
        target = self.core.task.single_shot_path
        for call in reply.calls:  # a model that writes the file with the tool is understood too
            if self._names.get(call.name) == "overwrite_file" and call.arguments and target \
                    and self.core.task.relpath(str(call.arguments.get("path", ""))) == target \
                    and isinstance(call.arguments.get("content"), str):
                return call.arguments["content"]
        if reply.problem:
            return None
        code = extract_code(reply.text)
        return code if code is not None else reply.text

    # ---- agentic: each tool call is one round
    def _agentic(self, reply: AssistantReply):
        new: list[dict[str, Any]] = []
        total, done = 0.0, False
        terminated = truncated = False
        info: dict[str, Any] = {}
        outcomes = []
        if reply.problem or not reply.calls:
            if not reply.problem and self.on_no_tool_call == "submit":
                obs, reward, terminated, truncated, info = self.env.step({"action": "submit"})
                new.append({"role": "user", "content": obs["output"]})
                return new, reward, terminated, truncated, {**info, "tool_calls": []}
            why = reply.problem or "the reply has no tool call; call one of the tools (submit when you are done)"
            obs, reward, terminated, truncated, info = self.env.step(_malformed(why))
            new.append({"role": "user", "content": _explained(why, obs["output"])})
            return new, reward, terminated, truncated, {**info, "tool_calls": []}
        for call in reply.calls:
            if done:
                new.append(_tool_message(call, _NOT_RUN))
                outcomes.append({"id": call.id, "name": call.name, "ok": False, "error": "not run"})
                continue
            if call.error:
                obs, reward, terminated, truncated, info = self.env.step(_malformed(call.error))
                content = _explained(f"invalid tool call {call.name!r}: {call.error}", obs["output"])
            else:
                action = {**call.arguments, "action": self._names.get(call.name, call.name)}
                obs, reward, terminated, truncated, info = self.env.step(action)
                content = obs["output"]
            total += reward
            done = terminated or truncated
            error = call.error or info.get("action_error")
            outcomes.append({"id": call.id, "name": call.name, "ok": not error, "error": error})
            new.append(_tool_message(call, content))
        if reply.dropped_calls and not done:
            new.append({"role": "user", "content": f"[{reply.dropped_calls} more tool calls were not run: at most "
                                                   f"{MAX_CALLS_PER_MESSAGE} a message]"})
        return new, total, terminated, truncated, {**info, "tool_calls": outcomes}


def _malformed(why: str) -> str:
    """What the wrapped env is sent for a call that cannot run: text that is never a JSON action,
    so the env refuses it as one round and its trajectory records what happened."""
    return f"[malformed tool call] {why}"


def _explained(why: str, output: str) -> str:
    """The env's answer to a malformed call, with its generic refusal replaced by *why* (and the
    evaluation kept, when that round was the last)."""
    _, sep, evaluation = output.partition("\n[evaluation]\n")
    return f"[{why}]" + (sep + evaluation if sep else "")


def _tool_message(call: ToolCall, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": content}
