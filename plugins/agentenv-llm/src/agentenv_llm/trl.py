"""TRL adapters: a ``GRPOTrainer`` reward function that scores completions in sandboxes, and an
environment for TRL's multi-turn ``environment_factory`` whose tools are agentenv's actions.

Single-shot GRPO (each completion is a program)::

    from trl import GRPOConfig, GRPOTrainer
    from agentenv_llm.trl import SandboxReward, make_dataset

    dataset = make_dataset(["examples.fizzbuzz", "examples.word_count"])   # columns: prompt, task
    trainer = GRPOTrainer(model="Qwen/Qwen2.5-0.5B-Instruct", reward_funcs=SandboxReward(),
                          args=GRPOConfig(num_generations=8), train_dataset=dataset)
    trainer.train()

Multi-turn (the model calls ``run_command``, ``overwrite_file``... as tools; the episode's reward is
the task's own evaluation)::

    trainer = GRPOTrainer(model=..., environment_factory=environment_factory(),
                          train_dataset=make_dataset(["examples.bank_transfer"], mode="agentic"), ...)

The completions of one batch are scored concurrently (:class:`agentenv.RolloutPool`). TRL has no
per-sample mask: a completion whose scoring hit an infrastructure failure (after ``retries``) is
answered ``None``, which TRL leaves out of that reward (and logs); ``history`` keeps every result.
"""

from __future__ import annotations

import inspect
import keyword
from typing import Any, Callable, Sequence

import agentenv
from agentenv.wrappers import opening_messages, task_reference, tool_name

_PY_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool, "array": list,
                              "object": dict}


class SandboxReward:
    """A ``GRPOTrainer`` reward function: ``reward(prompts, completions, task=[...]) -> [float | None]``.

    *task_column* names the dataset column that holds each row's task (an env id, task id or task
    file); other keyword arguments go to :class:`agentenv.RolloutPool` (``concurrency``,
    ``retries``, ``backend``, ``trajectory``...)."""

    def __init__(self, task_column: str = "task", **pool_kwargs: Any):
        self.__name__ = "agentenv"
        self.task_column = task_column
        self.pool = agentenv.RolloutPool(**pool_kwargs)
        self.history: list[list[agentenv.BatchRollout]] = []

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any) -> list[float | None]:
        if self.task_column not in columns:
            raise KeyError(f"the dataset has no {self.task_column!r} column naming each row's task (columns: "
                           f"{', '.join(sorted(k for k in columns if k not in ('trainer_state', 'completion_ids')))}); "
                           "build it with agentenv_llm.trl.make_dataset or pass SandboxReward(task_column=...)")
        replies = [c[-1] if isinstance(c, list) and c else c for c in completions]
        results = self.pool.score_sync(list(columns[self.task_column]), replies)
        self.history.append(results)
        return [None if r.reward_masked else r.reward for r in results]

    def close(self) -> None:
        self.pool.close()


def make_dataset(tasks: Sequence[Any], *, mode: str = "single_shot", repeat: int = 1):
    """A ``datasets.Dataset`` with ``prompt`` (chat messages) and ``task`` (the env id, or the task
    file for a task no installed suite registers) per row."""
    from datasets import Dataset

    rows = []
    for ref in tasks:
        task = agentenv.resolve_task(ref)
        rows.append({"prompt": opening_messages(task, mode), "task": task_reference(task)})
    return Dataset.from_list(rows * repeat)


# --------------------------------------------------------------------------- multi-turn

class _EnvironmentBase:
    """What TRL's ``environment_factory`` wants: ``reset(**row)``, ``get_reward()``, and a public
    method per tool (added per action by :func:`environment_class`). Everything else is private,
    because TRL exposes every public method as a tool."""

    def __init__(self, *, task_column: str = "task", **env_kwargs: Any):
        self._task_column = task_column
        self._env_kwargs = {**env_kwargs, "mode": "agentic"}
        self._env: agentenv.CodingEnv | None = None
        self._key: str | None = None
        self._total, self._done, self._masked = 0.0, True, False
        self._last_info: dict[str, Any] = {}
        self._calls: list[dict[str, Any]] = []
        self._episodes: list[list[dict[str, Any]]] = []  # every episode's tool calls (inspection, tests)

    def reset(self, **row: Any) -> str | None:
        ref = row.get(self._task_column)
        if ref is None:
            raise KeyError(f"the dataset row has no {self._task_column!r} column naming its task "
                           f"(columns: {', '.join(sorted(row))})")
        key = str(ref)
        if key != self._key:
            self._close()
            self._env = agentenv.CodingEnv(agentenv.resolve_task(ref), **self._env_kwargs)
            self._key = key
        _, info = self._env.reset(seed=row.get("seed"))
        self._total, self._masked = 0.0, bool(info.get("reward_masked"))
        self._done, self._last_info, self._calls = self._masked, info, []
        self._episodes.append(self._calls)
        return None  # the dataset's prompt already holds the task (make_dataset(mode="agentic"))

    def _act(self, action: str, arguments: dict[str, Any]) -> str:
        self._calls.append({"action": action, **arguments})
        if self._env is None or self._done:
            return "[the episode is over; nothing was done]"
        obs, reward, terminated, truncated, info = self._env.step({**arguments, "action": action})
        self._total += reward
        self._done = terminated or truncated
        self._masked = self._masked or bool(info.get("reward_masked"))
        self._last_info = info
        return obs["output"]

    def get_reward(self) -> float | None:
        """The episode's return; an episode the model left open is submitted (scored as it stands)."""
        if self._env is not None and not self._done:
            self._act("submit", {})
        return None if self._masked else self._total

    def _close(self) -> None:
        if self._env is not None:
            self._env.close()
        self._env, self._key = None, None


def _tool_method(action: str) -> Callable[..., str] | None:
    spec = agentenv.tools(actions=[action])[0]["function"]
    params = spec["parameters"]
    required = set(params.get("required", ()))
    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    args_doc = []
    for name, sub in (params.get("properties") or {}).items():
        if not name.isidentifier() or keyword.iskeyword(name):
            continue  # not a Python parameter name: the field stays reachable through agentenv.tools()
        kind = sub.get("type") if isinstance(sub, dict) else None
        kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
        py = _PY_TYPES.get(kind, str)
        if name in required:
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=py))
            annotations[name] = py
        else:
            parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=py | None))
            annotations[name] = py | None
        description = " ".join(str(sub.get("description", name)).split()) if isinstance(sub, dict) else name
        args_doc.append(f"    {name}: {description}")

    def method(self: _EnvironmentBase, **arguments: Any) -> str:
        return self._act(action, {k: v for k, v in arguments.items() if v is not None or k in required})

    method.__name__ = method.__qualname__ = tool_name(action)
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    method.__annotations__ = {**annotations, "return": str}
    description = " ".join(spec["description"].split())
    method.__doc__ = (f"{description}\n\n" + ("Args:\n" + "\n".join(args_doc) + "\n\n" if args_doc else "")
                      + "Returns:\n    What the environment answered.")
    return method


def environment_class(actions: Sequence[str] | None = None) -> type:
    """A class with one tool method per action type (every registered one by default: a plugin's
    new action is a new tool), for TRL's ``environment_factory``."""
    names = list(actions) if actions is not None else sorted(agentenv.registry().actions)
    methods = {tool_name(a): _tool_method(a) for a in names}
    return type("AgentenvEnvironment", (_EnvironmentBase,), {**methods, "__doc__": _EnvironmentBase.__doc__})


class EnvironmentFactory:
    """``GRPOTrainer(environment_factory=EnvironmentFactory())``: each call makes one environment
    (TRL keeps one per concurrent rollout and resets it per row); ``instances`` lists them all."""

    def __init__(self, actions: Sequence[str] | None = None, **env_kwargs: Any):
        self.cls = environment_class(actions)
        self.env_kwargs = env_kwargs
        self.instances: list[Any] = []

    def __call__(self) -> Any:
        env = self.cls(**self.env_kwargs)
        self.instances.append(env)
        return env

    def close(self) -> None:
        for env in self.instances:
            env._close()


def environment_factory(actions: Sequence[str] | None = None, **env_kwargs: Any) -> EnvironmentFactory:
    """An :class:`EnvironmentFactory` for TRL's ``environment_factory``."""
    return EnvironmentFactory(actions, **env_kwargs)


def tool_schemas(actions: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The tool definitions TRL renders for :func:`environment_class` (through transformers'
    ``get_json_schema``): for prompts outside the trainer that must look the same."""
    from transformers.utils import get_json_schema

    cls = environment_class(actions)
    return [get_json_schema(getattr(cls, name))
            for name, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
            if not name.startswith("_") and name not in ("reset", "get_reward")]
