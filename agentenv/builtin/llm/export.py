"""``agentenv export RUN --format chat``: trajectories as chat-format JSONL for SFT and rejection sampling.

Each line is one finished episode, in the shape :class:`agentenv.wrappers.ChatEnv` shows a model:

``messages``
    system, user (the task), then per step the assistant's turn and the environment's answer:
    agentic steps are ``tool_calls`` (``arguments`` as JSON text, as OpenAI sends them) answered by
    ``tool`` messages with their ``tool_call_id``; single-shot, the program in a fenced block
    answered by the evaluation's output.
``tools``
    the tool definitions as JSON text (``[]`` single-shot); TRL's ``SFTTrainer`` reads a ``tools``
    string as it is.
``reward``, ``score``, ``success``, ``reward_masked``, ``task_id``, ``env_id``, ``mode``, ``runtime``
    what rejection sampling filters on, and proof of which environment scored it (``runtime``:
    interpreter, dependencies, installed packages as ``name==version``, content hash).

Every line has the same keys and types (fields whose keys vary, ``tools`` and ``metrics``, are
JSON text), so ``datasets.load_dataset("json", data_files=...)`` loads any export with one schema.
Masked episodes (infrastructure failures) are left out unless ``--include-masked``.
"""

from __future__ import annotations

import json
import os
import posixpath
import sys
from typing import Any, TextIO

import agentenv
from agentenv.wrappers import chat_prompt, fence, tool_name

from ._records import Episode, episodes

_LANGUAGES = {".py": "python", ".sh": "bash", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust",
              ".c": "c", ".cpp": "cpp", ".java": "java", ".rb": "ruby", ".sql": "sql"}


def _task(episode: Episode, cache: dict[str, Any]) -> agentenv.TaskSpec | None:
    """The episode's task as installed now (None when it is not: the recorded prompt is used)."""
    key = episode.env_id
    if key not in cache:
        try:
            cache[key] = agentenv.resolve_task(key)
        except agentenv.AgentEnvError:
            cache[key] = None
    return cache[key]


def _opening(episode: Episode, task: agentenv.TaskSpec | None) -> list[dict[str, Any]]:
    prompt = str((episode.reset.get("observation") or {}).get("prompt", ""))
    if task is None:
        from agentenv.wrappers import SYSTEM_AGENTIC, SYSTEM_SINGLE_SHOT

        system = SYSTEM_SINGLE_SHOT if episode.mode == agentenv.SINGLE_SHOT else SYSTEM_AGENTIC
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    return chat_prompt(task, episode.mode, episode.rounds(task.max_rounds), prompt)


def _message(role: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, **extra}


def chat_record(episode: Episode, cache: dict[str, Any]) -> dict[str, Any]:
    """One episode as an export line (see the module docstring)."""
    task = _task(episode, cache)
    messages = _opening(episode, task)
    malformed = 0
    language = ""
    if task is not None and task.single_shot_path:
        language = _LANGUAGES.get(posixpath.splitext(task.single_shot_path)[1], "")
    for number, step in enumerate(episode.steps, 1):
        action = step.get("action")
        output = str((step.get("observation") or {}).get("output", ""))
        if episode.mode == agentenv.SINGLE_SHOT:
            messages.append(_message("assistant", fence(str(action), language)))
            messages.append(_message("user", output))
        elif isinstance(action, dict) and isinstance(action.get("action"), str):
            args = {k: v for k, v in action.items() if k != "action"}
            call_id = f"call_{number}"
            call = {"id": call_id, "type": "function",
                    "function": {"name": tool_name(action["action"]), "arguments": json.dumps(args, ensure_ascii=False)}}
            messages.append(_message("assistant", "", tool_calls=[call]))
            messages.append(_message("tool", output, tool_call_id=call_id, name=tool_name(action["action"])))
            malformed += bool(step.get("action_error"))
        else:  # not an action object: the model's text as it was, the refusal as the answer
            malformed += 1
            messages.append(_message("assistant", str(action)))
            messages.append(_message("user", output))
    final = episode.final
    runtime = episode.reset.get("runtime") or {}
    packages = runtime.get("packages") or {}
    tools = agentenv.tools(task) if (task is not None and episode.mode == agentenv.AGENTIC) else []
    summary = episode.summary or {}
    return {
        "messages": messages,
        "tools": json.dumps(tools),
        "reward": episode.reward,
        "score": float(final.get("score", 0.0) or 0.0),
        "success": bool(summary.get("success", final.get("success", False))) and not episode.masked,
        "reward_masked": episode.masked,
        "task_id": episode.task_id,
        "env_id": episode.env_id,
        "mode": episode.mode,
        "episode_id": episode.episode_id,
        "run_id": str(episode.reset.get("run_id") or ""),
        "sample": int(episode.reset.get("sample") or 0),
        "seed": episode.seed if episode.seed is not None else -1,
        "rounds": len(episode.steps),
        "malformed_turns": malformed,
        "integrity_ok": bool((final.get("integrity") or {}).get("ok", True)),
        "metrics": json.dumps(final.get("metrics") or {}),
        "runtime": {"hash": str(runtime.get("hash", "")), "runtime": str(runtime.get("runtime", "")),
                    "kind": str(runtime.get("kind", "")),
                    "dependencies": [str(d) for d in runtime.get("dependencies") or ()],
                    "packages": sorted(f"{name}=={version}" for name, version in packages.items())},
    }


def export_chat(run: str, out: TextIO, *, include_masked: bool = False, min_reward: float | None = None,
                successful_only: bool = False) -> dict[str, int]:
    """Write *run*'s episodes to *out* as chat JSONL; returns counts of written and skipped episodes."""
    found, counts = episodes(run)
    counts = {"written": 0, "masked": 0, "below_min_reward": 0, "unsuccessful": 0, **counts}
    cache: dict[str, Any] = {}
    for episode in found:
        if episode.masked and not include_masked:
            counts["masked"] += 1
            continue
        record = chat_record(episode, cache)
        if min_reward is not None and record["reward"] < min_reward:
            counts["below_min_reward"] += 1
            continue
        if successful_only and not record["success"]:
            counts["unsuccessful"] += 1
            continue
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        counts["written"] += 1
    return counts


def configure(parser) -> None:
    """Options of ``agentenv export RUN --format chat [--out FILE]`` (RUN: an eval folder or a trajectory
    JSONL file; FILE: the JSONL to write, stdout by default)."""
    parser.add_argument("--include-masked", action="store_true",
                        help="also export episodes masked by an infrastructure failure (never train on them)")
    parser.add_argument("--min-reward", type=float, default=None, help="only episodes with at least this reward")
    parser.add_argument("--successful-only", action="store_true", help="only episodes that succeeded (info['success'])")


def run(args) -> int:
    if args.out in (None, "-"):
        counts = export_chat(args.source, sys.stdout, include_masked=args.include_masked, min_reward=args.min_reward,
                             successful_only=args.successful_only)
    else:
        tmp = args.out + ".part"
        with open(tmp, "w", encoding="utf-8") as f:
            counts = export_chat(args.source, f, include_masked=args.include_masked, min_reward=args.min_reward,
                                 successful_only=args.successful_only)
        os.replace(tmp, args.out)
    left = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in counts.items() if k != "written" and v)
    print(f"[export] {counts['written']} episodes written" + (f"; left out: {left}" if left else ""), file=sys.stderr)
    return 0
