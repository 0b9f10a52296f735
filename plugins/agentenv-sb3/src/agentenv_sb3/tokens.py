"""The token-level synthesis wrapper: write an expression token by token, run it at the end.

The action is ``Discrete(V)``: one token of a small vocabulary of operands (``a``, ``b``, ``0``,
``1``, ``2``), binary operators (``+ - * % ==``) and unary ones (``len``, ``rev`` for ``[::-1]``).
Tokens are read in prefix (Polish) order, as a tree grows from its root: ``+ * a a b`` is
``a * a + b``. The episode ends by itself the moment the expression is complete (no end token, and
no sequence of tokens is ever a syntax error); if ``max_tokens`` is reached first, the open operand
slots are filled with ``a``. The observation is ``MultiDiscrete``: the tokens written so far (``V``
marks an empty slot) and the index of the episode's task among the env's tasks.

The finished expression goes into the task's template (``metadata.synthesis.template``, default
``def f(a, b):\\n    return {body}\\n``), the program runs in the task's single-shot environment
(a real sandbox), and the reward is the task's composite score; every other step's reward is 0.
With ``cache`` on, a program text already run in this process reuses its score. ``found`` maps
each task this env has solved to the first program that did, and ``tried`` each task to the set of
distinct programs it ran, for search-style comparisons at an equal number of executions.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agentenv import CodingEnv, TaskSpec

from ._common import CACHE, TrainingError, content_key, resolve_tasks
from ._defaults import DEFAULT_MAX_TOKENS

# token -> arity
ARITY = {"a": 0, "b": 0, "0": 0, "1": 0, "2": 0, "+": 2, "-": 2, "*": 2, "%": 2, "==": 2, "len": 1, "rev": 1}
VOCAB = tuple(ARITY)
TOKEN_ID = {tok: i for i, tok in enumerate(VOCAB)}
FILL = "a"  # what fills the open slots when max_tokens runs out
DEFAULT_TEMPLATE = "def f(a, b):\n    return {body}\n"


def open_slots(tokens: list[str]) -> int:
    """How many operands the prefix expression *tokens* still needs (0: complete)."""
    need = 1
    for tok in tokens:
        need += ARITY[tok] - 1
    return need


def expression(tokens: list[str]) -> str:
    """Python source of the prefix expression *tokens*, its open slots filled with ``a``."""
    tokens = list(tokens) + [FILL] * max(open_slots(tokens), 0)
    pos = 0

    def node(top: bool) -> str:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        arity = ARITY[tok]
        if arity == 0:
            return tok
        if arity == 1:
            inner = node(top=tok == "len")
            return f"len({inner})" if tok == "len" else f"{inner}[::-1]"
        left, right = node(False), node(False)
        return f"{left} {tok} {right}" if top else f"({left} {tok} {right})"

    text = node(top=True)
    if pos != len(tokens):
        raise TrainingError(f"tokens {' '.join(tokens)!r} hold more than one expression")
    return text


def parse_tokens(text: str) -> list[int]:
    """Token ids of a space-separated prefix expression such as ``"+ * a a b"``."""
    try:
        return [TOKEN_ID[tok] for tok in text.split()]
    except KeyError as exc:
        raise TrainingError(f"{text!r}: every token must be one of {' '.join(VOCAB)}") from exc


def task_template(task: TaskSpec) -> str:
    template = (task.metadata.get("synthesis") or {}).get("template", DEFAULT_TEMPLATE)
    if "{body}" not in template:
        raise TrainingError(f"{task.source}: metadata.synthesis.template must contain '{{body}}' (where the "
                            f"generated expression goes), found {template!r}")
    return template


class TokenSynthesisEnv(gym.Env):
    """Token-by-token program synthesis over real sandbox runs. See the module docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, tasks: Any = None, suite: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS, cache: bool = True,
                 backend: str = "auto", execute: bool = True, render_mode: str | None = None):
        if max_tokens < 1:
            raise TrainingError(f"max_tokens must be >= 1, not {max_tokens}")
        self.tasks = resolve_tasks(tasks, suite)
        for task in self.tasks:
            if task.single_shot_path is None:
                raise TrainingError(f"{task.source}: task {task.task_id} has no '<model_generated_code>' step, "
                                    "so the token wrapper has nowhere to put the program")
        self.templates = {t.task_id: task_template(t) for t in self.tasks}
        self.max_tokens, self.cache = max_tokens, cache
        self.backend, self.execute, self.render_mode = backend, execute, render_mode
        self.vocab = VOCAB
        self.action_space = gym.spaces.Discrete(len(VOCAB))
        self.observation_space = gym.spaces.MultiDiscrete([len(VOCAB) + 1] * max_tokens + [len(self.tasks)])
        self._inner: dict[str, CodingEnv] = {}
        self._index = 0
        self.task = self.tasks[0]
        self._tokens: list[str] = []
        self.last_program = ""
        self.last_cache_hit = False
        self.found: dict[str, str] = {}  # task id -> the first program that solved it in this env
        self.tried: dict[str, set[str]] = {}  # task id -> the distinct programs this env has run

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "task_id" in options:
            ids = [t.task_id for t in self.tasks]
            if options["task_id"] not in ids:
                raise TrainingError(f"task {options['task_id']!r} is not one of this env's tasks: {', '.join(ids)}")
            self._index = ids.index(options["task_id"])
        else:
            self._index = int(self.np_random.integers(len(self.tasks)))
        self.task = self.tasks[self._index]
        self._tokens, self.last_program = [], ""
        return self._obs(), {"task_id": self.task.task_id}

    def step(self, action: Any):
        a = int(action)
        if not 0 <= a < len(VOCAB):
            raise TrainingError(f"action {action!r} is outside Discrete({len(VOCAB)})")
        self._tokens.append(VOCAB[a])
        if open_slots(self._tokens) > 0 and len(self._tokens) < self.max_tokens:
            return self._obs(), 0.0, False, False, {"task_id": self.task.task_id}
        program = self.templates[self.task.task_id].format(body=expression(self._tokens))
        self.last_program = program
        self.tried.setdefault(self.task.task_id, set()).add(program)
        score, success, hit, masked = self._run(program)
        if success:
            self.found.setdefault(self.task.task_id, program)
        info = {"task_id": self.task.task_id, "program": program, "score": score, "success": success,
                "is_success": success, "reward_masked": masked}
        # not in info: whether the cache answered must not make two identical steps differ (check_env)
        self.last_cache_hit = hit
        return self._obs(), float(score), True, False, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return f"{self.task.task_id}: {' '.join(self._tokens)}"

    def close(self) -> None:
        for env in self._inner.values():
            env.close()
        self._inner.clear()

    def _obs(self) -> np.ndarray:
        slots = [TOKEN_ID[t] for t in self._tokens] + [len(VOCAB)] * (self.max_tokens - len(self._tokens))
        return np.array(slots + [self._index], dtype=np.int64)

    def _run(self, program: str) -> tuple[float, bool, bool, bool]:
        if not self.execute:
            return 0.0, False, False, False
        key = content_key(self.task, {self.task.single_shot_path: program})
        if self.cache:
            cached = CACHE.get(key)
            if cached is not None:
                return cached[0], cached[1], True, False
        env = self._inner.get(self.task.task_id)
        if env is None:
            env = self._inner[self.task.task_id] = CodingEnv(self.task, backend=self.backend, mode="single_shot")
        env.reset()
        _, reward, _, _, info = env.step(program)
        if info.get("reward_masked"):
            return 0.0, False, False, True
        result = (float(info.get("score", reward)), bool(info.get("success")))
        if self.cache:
            CACHE.put(key, result)
        return result[0], result[1], False, False
