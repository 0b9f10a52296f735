"""The Gymnasium environment: one task, one sandbox per episode, rewards from the task's own evaluation.

Modes:

* ``single_shot``: the action is the model's code (a string). It fills the task's
  ``<model_generated_code>`` placeholders, the ``execution_steps`` run, the episode ends.
* ``agentic``: each action is one action object (a dict, or its JSON text), e.g.
  ``{"action": "run_command", "command": "pytest -q"}``; the observation shows its result. The
  episode ends on ``submit`` (terminated), on success if the task says ``terminate_on_success``,
  or at ``max_rounds`` (truncated).

The reward comes only from the task's evaluation: the ``execution_steps`` (minus the placeholder
writes in agentic mode) run in a *separate* sandbox that starts from the pristine workspace and
receives the agent's changes to non-protected files plus the hidden files. Edited or deleted tests,
an added ``conftest.py``, a fake report: none of it reaches the evaluation. With
``reward_mode="dense"`` the evaluation runs after every step that can change files and the reward
is the change of the composite score; the rewards of an episode sum to its final score.

An infrastructure failure (sandbox died, runtime build failed) ends the episode with
``info["reward_masked"] = True`` and ``info["infra_error"]``; its reward is 0 and must not be
trained on. A sandbox that the agent's own code killed (its memory, files in /tmp included, took
the sandbox's server) is no infrastructure failure: the episode ends scored 0, not masked, with
``info["sandbox_lost"]`` saying why. The next ``reset()`` starts over with a new sandbox.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import os
import string
import time
import uuid
from typing import Any, Callable, Iterable, Iterator, Mapping

import gymnasium as gym
import numpy as np

from ._backends import get_backend
from ._errors import ActionError, AgentEnvError, InfrastructureError, did_you_mean
from ._extension import ActionContext
from ._paths import cache_dir
from ._plugins import registry
from ._reward import RewardResult
from ._sandbox import Sandbox, SandboxBackend, SandboxRequest
from ._schema import load_task
from ._scoring import Evaluation
from ._spec import AGENTIC, MODES, PLACEHOLDER, REWARD_MODES, SINGLE_SHOT, Mode, RewardMode, TaskSpec
from ._trajectory import TRAJECTORY_SCHEMA, jsonable
from ._workspace import materialize

MAX_TEXT = 200_000
_READ_ONLY_ACTIONS = ("read_file", "list_files", "submit")


class CodeText(gym.spaces.Text):
    """A Text space that holds real code: any Unicode string up to ``max_length``.

    Gymnasium's ``Text`` only admits the characters of its charset; programs and test output
    contain any character, so ``contains`` checks type and length only. ``sample`` draws from
    printable ASCII.
    """

    def __init__(self, max_length: int = MAX_TEXT, min_length: int = 0, seed: int | None = None):
        super().__init__(max_length=max_length, min_length=min_length, charset=string.printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"CodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CodeText) and other.min_length == self.min_length and other.max_length == self.max_length


class ActionText(CodeText):
    """The action space: the model's text, and in agentic mode also the action object itself.

    Single-shot, an action is the program (a string). Agentic, it is one action object, given as a
    dict (``{"action": "submit"}``, what the README shows) or as its JSON text, so ``contains``
    accepts both there. ``sample`` draws text only (a random string is an action the environment
    answers with an error message, never an exception), so Gymnasium's and SB3's checkers see the
    same space as before.
    """

    def __init__(self, max_length: int = MAX_TEXT, objects: bool = False, seed: int | None = None):
        super().__init__(max_length=max_length, seed=seed)
        self.objects = objects

    def contains(self, x: Any) -> bool:
        if isinstance(x, Mapping):
            return self.objects and isinstance(x.get("action"), str)
        return super().contains(x)

    def __repr__(self) -> str:
        return f"ActionText({self.max_length}{', objects' if self.objects else ''})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ActionText) and other.objects == self.objects and other.max_length == self.max_length


def make_env(**kwargs: Any) -> "CodingEnv":
    """What ``gym.make`` calls: a :class:`CodingEnv`, after a misspelt keyword (``mdoe=``) is
    refused with the closest names (Python's own TypeError names none)."""
    params = [n for n in inspect.signature(CodingEnv.__init__).parameters if n != "self"]
    unknown = [k for k in kwargs if k not in params]
    if unknown:
        hints = [f"{k!r} (did you mean {hint}?)" if (hint := did_you_mean(k, params)) else repr(k) for k in unknown]
        raise TypeError(f"CodingEnv got unexpected keyword argument(s) {', '.join(hints)} (its arguments: "
                        f"{', '.join(params)})")
    return CodingEnv(**kwargs)


def _metrics_asked(metrics: Any, reg: Any) -> str | frozenset[str]:
    """``CodingEnv(metrics=...)``: ``"reward"`` (what the task's reward reads, and every metric that
    is not on demand), ``"all"``, or metric names to measure besides."""
    if isinstance(metrics, str):
        if metrics in ("reward", "all"):
            return metrics
        raise ValueError(f"metrics must be 'reward', 'all' or a list of metric names, not {metrics!r}")
    try:
        names = frozenset(metrics)
    except TypeError:
        raise TypeError(f"metrics must be 'reward', 'all' or a list of metric names, not "
                        f"{type(metrics).__name__}") from None
    for name in sorted(names, key=repr):
        if name not in reg.metrics:
            hint = did_you_mean(name, list(reg.metrics)) if isinstance(name, str) else None
            raise ValueError(f"metrics names {name!r}, which no installed plugin measures"
                             + (f" (did you mean {hint}?)" if hint else f"; known: {', '.join(sorted(reg.metrics))}"))
    return names


class Measurements(Mapping[str, Any]):
    """Host measurements (times, memory) of the last evaluation. Read-only.

    They vary between identical runs, so two ``Measurements`` always compare equal: determinism
    checks (``check_env``) compare the environment's transition, not the host's timing noise.
    """

    def __init__(self, values: Mapping[str, Any] | None = None):
        self._values = dict(values or {})

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Measurements)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Measurements({self._values!r})"


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2 - 40
    return text[:half] + f"\n...[{len(text) - 2 * half} characters cut]...\n" + text[-half:]


class CodingEnv(gym.Env):
    """A coding task as a Gymnasium environment. See the module docstring for the modes.

    ``mode=None`` (the default) plays the task the way it is meant: single-shot where a step takes
    the model's code (``<model_generated_code>``), else agentic.

    ``metrics="reward"`` (the default) measures what the task's reward reads plus every metric
    that costs next to nothing (pass rates, times, memory); a metric its plugin marks as on
    demand (agentenv-quality's lint and complexity) is measured only where the reward reads it.
    ``metrics="all"`` measures everything installed, and a list of names adds those
    (``metrics=["lint_findings"]``), for ``info["metrics"]`` to log.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(self, task: str | os.PathLike[str] | TaskSpec, backend: str | SandboxBackend = "auto",
                 mode: Mode | None = None, reward_mode: RewardMode = "terminal", max_rounds: int | None = None,
                 render_mode: str | None = None, trajectory: str | Callable[[dict], None] | None = None,
                 max_observation_chars: int = 20_000, metrics: str | Iterable[str] = "reward"):
        self.task = task if isinstance(task, TaskSpec) else load_task(task)
        if mode is None:
            mode = SINGLE_SHOT if self.task.supports_single_shot else AGENTIC
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, not {reward_mode!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        if mode == SINGLE_SHOT and not self.task.supports_single_shot:
            raise ValueError(f"task {self.task.task_id} has no '{PLACEHOLDER}' step, so it runs only in "
                             "mode='agentic' (leave mode out to get the task's own mode)")
        self.mode, self.reward_mode, self.render_mode = mode, reward_mode, render_mode
        self.max_rounds = 1 if mode == SINGLE_SHOT else (max_rounds or self.task.max_rounds)
        self.max_observation_chars = max_observation_chars
        self._trajectory = trajectory
        self._registry = registry()
        self._backend = get_backend(backend) if isinstance(backend, str) else backend
        self.backend_name = self._backend.name
        self.runtime = self._registry.runtime_for(self.task.environment.runtime).prepare(self.task.environment,
                                                                                         cache_dir())
        self._pristine = self.task.workspace.read()
        self._hidden = self.task.hidden_files.read() if self.task.hidden_files else {}
        self._workspace_dir = materialize(self._pristine, cache_dir())
        self._evaluation = Evaluation(self.task, self._registry, self.runtime, self._pristine, self._hidden,
                                      self._open, self._workspace_dir, _metrics_asked(metrics, self._registry))
        self.action_space = ActionText(objects=mode == AGENTIC)
        self.observation_space = gym.spaces.Dict({
            "prompt": CodeText(), "output": CodeText(), "round": gym.spaces.Discrete(self.max_rounds + 2)})
        self._sandbox: Sandbox | None = None
        self._round = 0
        self._done = True
        self._runs: list[dict[str, Any]] = []
        self._score = 0.0
        self._last_obs: dict[str, Any] | None = None
        self._episode = ""
        self._closed = False

    @property
    def spec(self) -> gym.envs.registration.EnvSpec | None:
        """The spec ``gym.make`` gave, with ``max_episode_steps`` the episode's round limit
        (``max_rounds``; 1 single-shot). The environment truncates itself at that round, after the
        evaluation, so no TimeLimit wrapper is registered: one would cut an episode before its last
        evaluation whenever ``max_rounds`` is raised."""
        given = self.__dict__.get("_given_spec")
        if given is None:
            return None
        return dataclasses.replace(given, max_episode_steps=self.max_rounds)

    @spec.setter
    def spec(self, value: gym.envs.registration.EnvSpec | None) -> None:
        self.__dict__["_given_spec"] = value

    @property
    def scored_runs(self) -> list[dict[str, Any]]:
        """The metrics of every scored command of the episode's latest evaluation."""
        return list(self._runs)

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._close_sandbox()
        self._round, self._done, self._runs, self._score = 0, False, [], 0.0
        self._episode = uuid.uuid4().hex[:12]
        info = self._base_info()
        try:
            self._sandbox = self._open()
        except InfrastructureError as exc:
            info.update(infra_error=str(exc), reward_masked=True)
            self._done = True
        obs = self._obs(self._prompt(), "")
        if self._sandbox is not None:
            info["isolation"] = self._sandbox.isolation.to_json()
            info["runtime"] = self._base_info()["runtime"]
        self._record({"type": "reset", **self._json_info(info), "observation": obs})
        return obs, info

    def step(self, action: Any):
        if self._done:
            raise gym.error.ResetNeeded("the episode is over: call reset() before step()")
        self._round += 1
        info = self._base_info()
        reward, terminated, truncated, output = 0.0, False, False, ""
        try:
            if self.mode == SINGLE_SHOT:
                output, result = self._step_single_shot(action, info)
                reward, terminated = result.total, True
            else:
                output, reward, terminated, truncated = self._step_agentic(action, info)
        except InfrastructureError as exc:
            if getattr(exc, "agents_doing", None):  # the agent's code killed the sandbox: its 0, not masked
                info["sandbox_lost"] = exc.agents_doing
                output = f"[the episode ends: {exc.agents_doing}; scored 0]"
                reward = -self._score if self.reward_mode == "dense" else 0.0
                self._score = 0.0
            else:
                info.update(infra_error=f"{type(exc).__name__}: {exc}", reward_masked=True)
                output = f"[infrastructure failure, not scored: {exc}]"
                reward = 0.0
            terminated = True
            self._close_sandbox()
        self._done = terminated or truncated
        obs = self._obs(self._prompt(), output)
        self._record({"type": "step", **self._json_info(info), "action": action if isinstance(action, (str, dict)) else repr(action),
                      "observation": obs, "reward": reward, "terminated": terminated, "truncated": truncated})
        if self._done:
            self._close_sandbox()
        return obs, float(reward), terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._last_obs is None:
            return None
        return f"--- round {self._last_obs['round']} ---\n{self._last_obs['output']}"

    def close(self) -> None:
        self._close_sandbox()
        self._closed = True

    def fork(self) -> "CodingEnv":
        """A new environment whose episode continues from this one's current state (GRPO from a
        mid-episode state, tree search, best-of-N repair): same task, round, scored runs and score,
        and a sandbox branched from this one's (``Sandbox.fork``: the workspace's changes are copied,
        running processes and /tmp are not). The two episodes then go on independently; close both."""
        if self._done or self._sandbox is None:
            raise gym.error.ResetNeeded("fork() branches an episode in progress: call reset() first")
        child = copy.copy(self)
        child._sandbox = self._sandbox.fork()
        child._runs = copy.deepcopy(self._runs)
        child._np_random = copy.deepcopy(self._np_random)
        child._episode = uuid.uuid4().hex[:12]
        return child

    # ------------------------------------------------------------------ the two modes
    def _step_single_shot(self, action: Any, info: dict[str, Any]):
        why = None
        if not isinstance(action, str):
            why = f"the action must be the program text (str), not {type(action).__name__}"
        else:
            try:  # a lone surrogate (JSON text carries one: half an emoji) raised out of step (red team, stop 37)
                action.encode()
            except UnicodeEncodeError as exc:
                why = f"the program text is not valid Unicode (a lone surrogate at character {exc.start})"
        if why is not None:
            result = self._evaluation.reward([], {})
            self._fill_info(info, [], result)
            return f"[{why}]", result
        runs, output, files = self._evaluation.run(self._sandbox, action, self._round)
        self._runs = runs
        result = self._evaluation.reward(runs, files)
        self._fill_info(info, runs, result)
        return _clip(output, self.max_observation_chars), result

    def _step_agentic(self, action: Any, info: dict[str, Any]):
        outcome, error = None, None
        try:
            parsed = self._parse_action(action)
            kind = self._registry.action(parsed["action"])
            kind.check_fields(parsed)  # unknown fields and wrong types are refused before any action runs
            ctx = ActionContext(self._sandbox, self.task, self.mode, self._round)
            try:
                outcome = kind.execute(ctx, parsed)
            except AgentEnvError:
                raise
            except OSError as exc:  # a file operation on what the agent named failed: the agent's to hear
                raise ActionError(f"{parsed['action']} failed: {exc.strerror or type(exc).__name__}") from None
            except Exception as exc:  # an action's own bug is the machinery's failure, never the caller's exception
                raise InfrastructureError(f"action {parsed['action']!r} raised {type(exc).__name__}: {str(exc)[:300]}") from exc
        except ActionError as exc:
            error = str(exc)
        except AgentEnvError as exc:
            if isinstance(exc, InfrastructureError):
                raise
            error = str(exc)
        output = f"[invalid action: {error}]" if error else outcome.observation
        if error:
            info["action_error"] = error
        submit = bool(outcome and outcome.submit)
        truncated = not submit and self._round >= self.max_rounds
        evaluate = submit or truncated or (self.reward_mode == "dense" and outcome is not None
                                          and parsed["action"] not in _READ_ONLY_ACTIONS)
        reward, terminated = 0.0, submit
        if evaluate:
            runs, eval_output, files = self._evaluation.workspace(self._sandbox, self._round, final=submit or truncated)
            # each evaluation is scored on its own runs: the workspace as it is now (dense mode's score
            # is what terminal mode would give for this workspace, whatever a rule aggregates)
            self._runs = runs
            result = self._evaluation.reward(self._runs, files)
            reward = result.total - self._score if self.reward_mode == "dense" else result.total
            self._score = result.total
            self._fill_info(info, runs, result)
            if submit or truncated:
                output += "\n[evaluation]\n" + _clip(eval_output, self.max_observation_chars)
            if result.success and self.task.terminate_on_success:
                terminated = True
            if not (submit or truncated or terminated):
                self._hide_hidden_tests(info)
        return output, reward, terminated, truncated and not terminated

    def _parse_action(self, action: Any) -> dict[str, Any]:
        if isinstance(action, (bytes, bytearray)):
            action = action.decode("utf-8", "replace")
        if isinstance(action, str):
            try:
                action = json.loads(action)
            except (ValueError, RecursionError) as exc:  # also: nested too deeply, a number too long
                why = f"{exc.msg} at position {exc.pos}" if isinstance(exc, json.JSONDecodeError) else (
                    "nested too deeply" if isinstance(exc, RecursionError) else "a number too long")
                raise ActionError(f"not a JSON action object ({why}); send e.g. "
                                  '{"action": "run_command", "command": "python -m pytest -q"}') from None
        if not isinstance(action, dict) or not isinstance(action.get("action"), str):
            raise ActionError('an action is an object with an "action" field, e.g. {"action": "submit"}; '
                              f"known actions: {', '.join(sorted(self._registry.actions))}")
        if len(action["action"]) > 100 and action["action"] not in self._registry.actions:
            raise ActionError(f"unknown action (a name of {len(action['action'])} characters); "
                              f"known actions: {', '.join(sorted(self._registry.actions))}")
        return action

    # ------------------------------------------------------------------ evaluation
    def _open(self) -> Sandbox:
        request = SandboxRequest(self.runtime, self._workspace_dir, self.task.root, self.task.limits,
                                 {"agentenv.task": self.task.task_id})
        return self._backend.open(request)

    # ------------------------------------------------------------------ info, observations, records
    def _base_info(self) -> dict[str, Any]:
        runtime = copy.deepcopy(dict(self.runtime.fingerprint))
        if self._sandbox is not None:  # backends that run images (docker) name the image that ran
            features = self._sandbox.isolation.features
            runtime.update({k: features[k] for k in ("image", "image_id") if k in features})
        return {"task_id": self.task.task_id, "mode": self.mode, "round": self._round,
                "backend": self.backend_name, "runtime": runtime, "reward_masked": False, "infra_error": None}

    def _hide_hidden_tests(self, info: dict[str, Any]) -> None:
        """While the episode goes on (dense rewards), per-step info names no hidden test and quotes
        no failure of one: the agent's policy may read info, and hidden tests must stay hidden."""
        hidden = tuple(self._hidden)
        if not hidden:
            return
        metrics = info.get("metrics") or {}

        def is_hidden(node: str) -> bool:
            return node.split("::", 1)[0] in hidden
        if isinstance(metrics.get("test_outcomes"), dict):
            metrics["test_outcomes"] = {n: o for n, o in metrics["test_outcomes"].items() if not is_hidden(n)}
        error = metrics.get("error")
        if isinstance(error, dict) and (is_hidden(str(error.get("test", ""))) or any(h in str(error) for h in hidden)):
            metrics["error"] = {"type": "HiddenTestFailed", "message": "a hidden test failed (named when the episode ends)"}
        elif isinstance(error, dict) and "test" in error:
            # a visible test's failure says what the solution's code raised, and that code ran beside
            # the hidden tests: it read one and raised its text, 300 bytes a step (red team, stop 33)
            metrics["error"] = {**error, "message": "(shown when the episode ends: the evaluation's code ran "
                                                    "beside the hidden tests)"}

    def _fill_info(self, info: dict[str, Any], runs: list[dict[str, Any]], result: RewardResult) -> None:
        noisy = {n for n, m in self._registry.metrics.items() if m.noisy}
        last = runs[-1] if runs else {}
        # None values are left out so that a key keeps one type across envs (gymnasium's vector
        # envs stack infos key by key).
        info["metrics"] = {k: v for k, v in last.items() if k not in noisy and k != "integrity" and v is not None}
        info["measurements"] = Measurements({k: v for k, v in last.items() if k in noisy})
        info["runs"] = len(runs)
        # Tampering with the judge scores 0 and is said here, never masked: training can penalise it.
        findings = [f for run in runs for f in run.get("integrity") or ()]
        info["integrity"] = {"ok": not findings, "findings": findings}
        info["score"] = result.total
        info["success"] = result.success
        info["reward_breakdown"] = result.breakdown()

    def _prompt(self) -> str:
        task = self.task
        if self.mode == SINGLE_SHOT and task.single_shot_path is None:
            return f"{task.description}\n\nReply with the code that completes the task."
        if self.mode == SINGLE_SHOT:
            path = task.single_shot_path
            start = self._pristine.get(path, b"").decode("utf-8", "replace")
            return (f"{task.description}\n\nReply with the complete new content of `{path}`.\n"
                    f"Its current content:\n```\n{start}\n```")
        files = "\n".join(sorted(self._pristine)) or "(empty)"
        actions = ", ".join(sorted(self._registry.actions))
        return (f"{task.description}\n\nThe workspace is {task.root}. Files:\n{files}\n\n"
                f"Send one JSON action per step ({actions}), for example "
                '{"action": "run_command", "command": "python -m pytest -q"} or {"action": "submit"}. '
                f"You have {self.max_rounds} rounds.")

    def _obs(self, prompt: str, output: str) -> dict[str, Any]:
        obs = {"prompt": _clip(prompt, MAX_TEXT), "output": _clip(output, self.max_observation_chars),
               "round": np.int64(min(self._round, self.max_rounds + 1))}
        self._last_obs = obs
        return obs

    def _json_info(self, info: dict[str, Any]) -> dict[str, Any]:
        out = {"schema": TRAJECTORY_SCHEMA, "episode_id": self._episode, "env_id": self.task.env_id,
               "reward_mode": self.reward_mode, "time": time.time()}
        for key, value in info.items():
            out[key] = dict(value) if isinstance(value, Measurements) else value
        out["scored_runs"] = [jsonable(r) for r in self._runs] if info.get("runs") else []
        # Present on every record (null: this step did not evaluate), so consumers need no key checks.
        out.setdefault("metrics", None)
        out.setdefault("reward_breakdown", None)
        return out

    def _record(self, record: dict[str, Any]) -> None:
        if self._trajectory is None:
            return
        record = jsonable(record)
        if callable(self._trajectory):
            self._trajectory(record)
        else:
            with open(self._trajectory, "a") as f:
                f.write(json.dumps(record) + "\n")

    def _close_sandbox(self) -> None:
        if self._sandbox is not None:
            try:
                self._sandbox.close()
            finally:
                self._sandbox = None
