"""The edit-choice wrapper: pick one of K candidate edits per round, learn from execution feedback.

Each episode draws one task (of a suite or a list). The observation is a fixed-size ``Box`` of
features of the last real execution of the task's evaluation: pass rate, exit-code bucket,
error-type one-hot, round, which tests fail (test ids hashed into buckets), which candidates
were tried, the last action. The action is ``Discrete(K)``: apply candidate *k* (an
``overwrite_file`` of its files in the task's agentic environment), after which the task's own
evaluation runs (``reward_mode="dense"``) and is featurized. The reward is the change of the
task's composite score (the rewards of an episode sum to its final score); the episode
terminates on success and is truncated after ``rounds`` edits.

Candidates come from the task's ``metadata.candidates`` (a list of ``{"name", "files": {path:
content}}``); a task without them gets generated ones (its reference, a no-op, and mutations of
the reference), so the wrapper works on any agentenv task that has a reference solution.
Indices past a task's own list are no-ops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

import gymnasium as gym
import numpy as np

from agentenv import CodingEnv, TaskSpec, TaskSpecError, Violation

from ._common import CACHE, TrainingError, content_key, resolve_tasks, stable_bucket

EXIT_BUCKETS = ("0", "1", "2", "5", "other")
ERROR_TYPES = ("none", "AssertionError", "TypeError", "NameError", "AttributeError", "ValueError",
               "ZeroDivisionError", "SyntaxError", "ImportError", "LookupError", "other")
_ERROR_ALIASES = {"IndentationError": "SyntaxError", "ModuleNotFoundError": "ImportError",
                  "KeyError": "LookupError", "IndexError": "LookupError"}


@dataclass(frozen=True)
class Candidate:
    name: str
    files: Mapping[str, str]


@dataclass(frozen=True)
class Outcome:
    """One featurizable execution of a workspace state."""

    pass_rate: float
    exit_code: int | None
    error_type: str
    failing: tuple[str, ...]
    score: float
    success: bool


# ---------------------------------------------------------------------------- candidates

def task_candidates(task: TaskSpec, k: int) -> list[Candidate]:
    """The task's candidates from ``metadata.candidates``, or generated ones; at most *k*."""
    raw = task.metadata.get("candidates")
    if raw is None:
        return generate_candidates(task, k)
    problems = []
    out = []
    if not isinstance(raw, list) or not raw:
        raise TaskSpecError(task.source, [Violation("/metadata/candidates", "must be a non-empty list of "
                                                    '{"name": ..., "files": {path: content}}', "a list", raw)])
    for i, item in enumerate(raw):
        files = item.get("files") if isinstance(item, dict) else None
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            problems.append(Violation(f"/metadata/candidates/{i}/files", "each candidate needs 'files': an "
                                      "object of path -> new content (strings)", "an object", files))
            continue
        out.append(Candidate(str(item.get("name", f"candidate{i}")), {task.relpath(p): v for p, v in files.items()}))
    if len(raw) > k:
        problems.append(Violation("/metadata/candidates", f"lists {len(raw)} candidates but the wrapper offers "
                                  f"k={k} actions; raise k or shorten the list", f"at most {k}", len(raw)))
    if problems:
        raise TaskSpecError(task.source, problems)
    return out


_MUTATIONS = ((r"<=", "<"), (r"(?<![<>=!])<(?!=)", "<="), (r">=", ">"), (r"==", "!="), (r" \+ 1\b", ""),
              (r"\b1\b", "0"), (r"\+", "-"), (r"\bTrue\b", "False"), (r"\band\b", "or"), (r"\[-1\]", "[0]"))


def generate_candidates(task: TaskSpec, k: int) -> list[Candidate]:
    """Reference, a no-op and single-operator mutations of the reference, in a task-specific order."""
    reference = task.reference_files()
    if not reference:
        raise TaskSpecError(task.source, [Violation("/metadata/candidates", "the edit-choice wrapper needs "
                                                    "candidate edits: list them in metadata.candidates or give "
                                                    "the task a reference_solution to generate them from",
                                                    "metadata.candidates or reference_solution", None)])
    cands = [Candidate("reference", dict(reference)), Candidate("noop", {})]
    seen = {tuple(sorted(reference.items()))}
    for path, text in sorted(reference.items()):
        for pattern, repl in _MUTATIONS:
            if len(cands) >= k:
                break
            mutated = re.sub(pattern, repl, text, count=1)
            key = tuple(sorted({**reference, path: mutated}.items()))
            if mutated != text and key not in seen:
                seen.add(key)
                cands.append(Candidate(f"mutant:{pattern}", {**reference, path: mutated}))
    # a fixed per-task order, so that "always pick 0" is not a policy
    order = sorted(range(len(cands)), key=lambda i: stable_bucket(f"{task.task_id}/{i}", 1 << 30))
    return [cands[i] for i in order]


# ---------------------------------------------------------------------------- features

def outcome_from_info(info: Mapping[str, Any]) -> Outcome:
    metrics = info.get("metrics") or {}
    error = metrics.get("error") or {}
    etype = str(error.get("type") or "none") if metrics.get("test_pass_rate", 0.0) < 1.0 or error else "none"
    etype = _ERROR_ALIASES.get(etype, etype)
    failing = tuple(sorted(n for n, o in (metrics.get("test_outcomes") or {}).items() if o != "passed"))
    code = metrics.get("exit_code")
    return Outcome(float(metrics.get("test_pass_rate", 0.0)), None if code is None else int(code),
                   etype if etype in ERROR_TYPES else "other", failing, float(info.get("score", 0.0)),
                   bool(info.get("success")))


class Featurizer:
    def __init__(self, k: int, rounds: int, test_buckets: int = 32):
        self.k, self.rounds, self.test_buckets = k, rounds, test_buckets
        self.size = 1 + len(EXIT_BUCKETS) + len(ERROR_TYPES) + 1 + test_buckets + 2 * k

    def __call__(self, outcome: Outcome, round_: int, tried: np.ndarray, last: int | None) -> np.ndarray:
        v = np.zeros(self.size, dtype=np.float32)
        v[0] = outcome.pass_rate
        i = 1
        code = "other" if outcome.exit_code is None else str(outcome.exit_code)
        v[i + (EXIT_BUCKETS.index(code) if code in EXIT_BUCKETS else len(EXIT_BUCKETS) - 1)] = 1
        i += len(EXIT_BUCKETS)
        v[i + ERROR_TYPES.index(outcome.error_type)] = 1
        i += len(ERROR_TYPES)
        v[i] = round_ / self.rounds
        i += 1
        for node in outcome.failing:
            v[i + stable_bucket(node, self.test_buckets)] = 1
        i += self.test_buckets
        v[i:i + self.k] = tried
        i += self.k
        if last is not None:
            v[i + last] = 1
        return v


# ---------------------------------------------------------------------------- the env

class EditChoiceEnv(gym.Env):
    """Discrete(K) edit choice over real sandbox executions. See the module docstring.

    ``tasks``: task files, env ids, TaskSpecs or CodingEnvs (or ``suite=NAME``); ``k`` actions;
    ``rounds`` edits per episode; ``cache``: reuse the outcome of a workspace state seen before in
    this process (outcomes of the training suites are deterministic); ``backend``: the sandbox
    backend of the inner environments.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, tasks: Any = None, suite: str | None = None, k: int = 8, rounds: int = 3,
                 cache: bool = True, backend: str = "auto", test_buckets: int = 32, render_mode: str | None = None):
        if k < 2 or rounds < 1:
            raise TrainingError(f"EditChoiceEnv needs k >= 2 and rounds >= 1, not k={k}, rounds={rounds}")
        self.tasks = resolve_tasks(tasks, suite)
        self.k, self.rounds, self.cache, self.backend = k, rounds, cache, backend
        self.render_mode = render_mode
        self.candidates = {t.task_id: task_candidates(t, k) for t in self.tasks}
        self.featurizer = Featurizer(k, rounds, test_buckets)
        self.action_space = gym.spaces.Discrete(k)
        self.observation_space = gym.spaces.Box(0.0, 1.0, (self.featurizer.size,), dtype=np.float32)
        self._inner: dict[str, CodingEnv] = {}
        self._inner_files: dict[str, dict[str, str] | None] = {}  # what the inner sandbox holds; None = needs reset
        self.task: TaskSpec = self.tasks[0]
        self._overlay: dict[str, str] = {}
        self._round = 0
        self._tried = np.zeros(k, dtype=np.float32)
        self._outcome: Outcome | None = None
        self._history: list[str] = []
        self.last_cache_hit = False

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = options or {}
        if "task_id" in options:
            matches = [t for t in self.tasks if t.task_id == options["task_id"]]
            if not matches:
                raise TrainingError(f"task {options['task_id']!r} is not one of this env's tasks: "
                                    f"{', '.join(t.task_id for t in self.tasks)}")
            self.task = matches[0]
        else:
            self.task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        self._inner_files[self.task.task_id] = None
        self._overlay, self._round, self._history = {}, 0, []
        self._tried = np.zeros(self.k, dtype=np.float32)
        self._outcome, hit, masked = self._execute(self._overlay)
        info = self._info(hit, masked)
        return self.featurizer(self._outcome, 0, self._tried, None), info

    def step(self, action: Any):
        a = int(action)
        if not 0 <= a < self.k:
            raise TrainingError(f"action {action!r} is outside Discrete({self.k})")
        self._round += 1
        cands = self.candidates[self.task.task_id]
        cand = cands[a] if a < len(cands) else Candidate("noop", {})
        self._history.append(cand.name)
        self._tried[a] = 1.0
        before = self._outcome.score if self._outcome else 0.0
        overlay = {**self._overlay, **cand.files}
        outcome, hit, masked = self._execute(overlay)
        self._overlay, self._outcome = overlay, outcome
        reward = 0.0 if masked else outcome.score - before
        terminated = outcome.success and not masked
        truncated = (not terminated) and (masked or self._round >= self.rounds)
        obs = self.featurizer(outcome, self._round, self._tried, a)
        return obs, float(reward), terminated, truncated, self._info(hit, masked, cand.name)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._outcome is None:
            return None
        o = self._outcome
        return (f"{self.task.task_id} round {self._round}: {' -> '.join(self._history) or '(start)'}; "
                f"pass rate {o.pass_rate:.2f}, error {o.error_type}, failing {list(o.failing)}")

    def close(self) -> None:
        for env in self._inner.values():
            env.close()
        self._inner.clear()

    # ------------------------------------------------------------------ execution
    def _execute(self, overlay: dict[str, str]) -> tuple[Outcome, bool, bool]:
        key = content_key(self.task, overlay)
        if self.cache:
            cached = CACHE.get(key)
            if cached is not None:
                return cached, True, False
        env = self._inner_env(self.task)
        held = self._inner_files.get(self.task.task_id)
        if held is None:
            _, info = env.reset()
            if info.get("reward_masked"):
                return self._masked(), False, True
            held = {}
        info = None
        for path, content in sorted(overlay.items()):
            if held.get(path) != content:
                _, _, term, trunc, info = env.step({"action": "overwrite_file", "path": path, "content": content})
                held[path] = content
                if info.get("reward_masked") or term or trunc:
                    break
        if info is None:  # the state is the one the sandbox holds: evaluate it as it is
            _, _, term, trunc, info = env.step({"action": "run_command", "command": "true"})
        if info.get("reward_masked"):
            self._inner_files[self.task.task_id] = None
            return self._masked(), False, True
        # an inner episode that ended (success + terminate_on_success) must restart before the next write
        self._inner_files[self.task.task_id] = None if (term or trunc) else held
        outcome = outcome_from_info(info)
        if self.cache:
            CACHE.put(key, outcome)
        return outcome, False, False

    def _inner_env(self, task: TaskSpec) -> CodingEnv:
        env = self._inner.get(task.task_id)
        if env is None:
            env = CodingEnv(task, backend=self.backend, mode="agentic", reward_mode="dense", max_rounds=100_000)
            self._inner[task.task_id] = env
        return env

    @staticmethod
    def _masked() -> Outcome:
        return Outcome(0.0, None, "other", (), 0.0, False)

    def _info(self, hit: bool, masked: bool, candidate: str | None = None) -> dict[str, Any]:
        # whether the cache answered is an attribute, not info: identical steps must give identical info
        self.last_cache_hit = hit
        o = self._outcome
        return {"task_id": self.task.task_id, "round": self._round, "candidate": candidate,
                "history": list(self._history), "score": o.score, "success": o.success, "is_success": o.success,
                "pass_rate": o.pass_rate, "error_type": o.error_type, "failing_tests": list(o.failing),
                "reward_masked": masked, "files": dict(self._overlay)}

    # ------------------------------------------------------------------ for the sb3 agent
    def solution_files(self) -> dict[str, str]:
        """The files changed so far in this episode (what an agent replays in the scored env)."""
        return dict(self._overlay)
