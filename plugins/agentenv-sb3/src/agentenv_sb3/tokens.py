"""The token-level synthesis wrapper: write a one-line program token by token, run it at the end.

The action is ``Discrete(V)``: one token of a small vocabulary (``a``, ``b``, ``+``, ``len(``,
``[::-1]``, ... and ``<eos>``). The observation is ``MultiDiscrete``: the tokens written so far
(``V`` marks an empty slot) and the index of the episode's task among the env's tasks. At
``<eos>`` or after ``max_tokens`` tokens the body is put into the task's template (from
``metadata.synthesis.template``, default ``def f(a, b):\\n    return {body}\\n``), the program runs
in the task's single-shot environment (a real sandbox), and the reward is the task's composite
score; every other step's reward is 0.

The program is the longest prefix of the tokens that compiles (``valid_prefix=True``, the
default): a dangling ``+`` at the end is dropped rather than zeroing the episode, as a
grammar-guided decoder would; ``valid_prefix=False`` runs the tokens exactly as written.

Options: ``cache`` reuses the score of a program text already run in this process;
``precheck_syntax`` scores a program that does not compile 0 without a sandbox run (it would
fail at import, which scores 0 on the bundled synthesis suite: both rules need it to import).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from agentenv import CodingEnv, TaskSpec

from ._common import CACHE, TrainingError, content_key, resolve_tasks

VOCAB = ("<eos>", "a", "b", "+", "-", "*", "%", "==", "(", ")", "0", "1", "2", "len(", "[::-1]")
DEFAULT_TEMPLATE = "def f(a, b):\n    return {body}\n"


def program_body(tokens: list[int]) -> str:
    return " ".join(VOCAB[t] for t in tokens)


def task_template(task: TaskSpec) -> str:
    template = (task.metadata.get("synthesis") or {}).get("template", DEFAULT_TEMPLATE)
    if "{body}" not in template:
        raise TrainingError(f"{task.source}: metadata.synthesis.template must contain '{{body}}' (where the "
                            f"generated expression goes), found {template!r}")
    return template


class TokenSynthesisEnv(gym.Env):
    """Token-by-token program synthesis over real sandbox runs. See the module docstring."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, tasks: Any = None, suite: str | None = None, max_tokens: int = 6, cache: bool = True,
                 precheck_syntax: bool = True, valid_prefix: bool = True, backend: str = "auto", execute: bool = True,
                 render_mode: str | None = None):
        if max_tokens < 1:
            raise TrainingError(f"max_tokens must be >= 1, not {max_tokens}")
        self.tasks = resolve_tasks(tasks, suite)
        for task in self.tasks:
            if task.single_shot_path is None:
                raise TrainingError(f"{task.source}: task {task.task_id} has no '<model_generated_code>' step, "
                                    "so the token wrapper has nowhere to put the program")
        self.templates = {t.task_id: task_template(t) for t in self.tasks}
        self.max_tokens, self.cache, self.precheck_syntax = max_tokens, cache, precheck_syntax
        self.valid_prefix = valid_prefix
        self.backend, self.execute, self.render_mode = backend, execute, render_mode
        self.vocab = VOCAB
        self.action_space = gym.spaces.Discrete(len(VOCAB))
        self.observation_space = gym.spaces.MultiDiscrete([len(VOCAB) + 1] * max_tokens + [len(self.tasks)])
        self._inner: dict[str, CodingEnv] = {}
        self._index = 0
        self.task = self.tasks[0]
        self._tokens: list[int] = []
        self._done = False
        self.last_program = ""
        self.last_cache_hit = False

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
        self._tokens, self._done, self.last_program = [], False, ""
        return self._obs(), {"task_id": self.task.task_id}

    def step(self, action: Any):
        a = int(action)
        if not 0 <= a < len(VOCAB):
            raise TrainingError(f"action {action!r} is outside Discrete({len(VOCAB)})")
        if a != 0:
            self._tokens.append(a)
        if a != 0 and len(self._tokens) < self.max_tokens:
            return self._obs(), 0.0, False, False, {"task_id": self.task.task_id}
        program = self._program()
        self.last_program = program
        score, success, hit, masked = self._run(program)
        info = {"task_id": self.task.task_id, "program": program, "score": score, "success": success,
                "is_success": success, "reward_masked": masked}
        # not in info: whether the cache answered must not make two identical steps differ (check_env)
        self.last_cache_hit = hit
        return self._obs(), float(score), True, False, info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return f"{self.task.task_id}: return {program_body(self._tokens)}"

    def close(self) -> None:
        for env in self._inner.values():
            env.close()
        self._inner.clear()

    def _program(self) -> str:
        template = self.templates[self.task.task_id]
        if not self.valid_prefix:
            return template.format(body=program_body(self._tokens))
        for end in range(len(self._tokens), -1, -1):  # the longest prefix that compiles
            program = template.format(body=program_body(self._tokens[:end]))
            try:
                compile(program, "<program>", "exec")  # compiles only: nothing of it runs here
                return program
            except (SyntaxError, ValueError):
                continue
        return template.format(body=program_body(self._tokens))

    def _obs(self) -> np.ndarray:
        slots = self._tokens + [len(VOCAB)] * (self.max_tokens - len(self._tokens))
        return np.array(slots + [self._index], dtype=np.int64)

    def _run(self, program: str) -> tuple[float, bool, bool, bool]:
        if not self.execute:
            return 0.0, False, False, False
        if self.precheck_syntax:
            try:
                compile(program, "<program>", "exec")  # compiles only: nothing of it runs here
            except (SyntaxError, ValueError):
                return 0.0, False, True, False
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
