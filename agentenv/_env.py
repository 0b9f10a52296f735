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
trained on. The next ``reset()`` starts over with a new sandbox.
"""

from __future__ import annotations

import copy
import dataclasses
import errno
import re
import json
import os
import secrets
import string
import threading
import time
import uuid
from types import MappingProxyType
from typing import Any, Callable, Iterator, Mapping

import gymnasium as gym
import numpy as np

from ._backends import get_backend
from ._errors import ActionError, AgentEnvError, InfrastructureError, SandboxError
from ._extension import ActionContext, EpisodeView, RunContext
from ._plugins import registry
from ._reward import RewardResult, compute_reward
from ._sandbox import Sandbox, SandboxBackend, SandboxRequest
from ._spec import PLACEHOLDER, TaskSpec, load_task, matches_any
from ._workspace import materialize

MODES = ("single_shot", "agentic")
REWARD_MODES = ("terminal", "dense")
MAX_TEXT = 200_000
TRAJECTORY_SCHEMA = "agentenv.trajectory/1"
_READ_ONLY_ACTIONS = ("read_file", "list_files", "submit")
# Observations depend on the program only: the host's speed is in info["measurements"].
_PYTEST_DURATION = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?")


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
    """A coding task as a Gymnasium environment. See the module docstring for the modes."""

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, task: str | os.PathLike[str] | TaskSpec, backend: str | SandboxBackend = "auto",
                 mode: str = "single_shot", reward_mode: str = "terminal", max_rounds: int | None = None,
                 render_mode: str | None = None, trajectory: str | Callable[[dict], None] | None = None,
                 max_observation_chars: int = 20_000):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}, not {reward_mode!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.task = task if isinstance(task, TaskSpec) else load_task(task)
        if mode == "single_shot" and not self.task.supports_single_shot:
            raise ValueError(f"task {self.task.task_id} has no '{PLACEHOLDER}' step, so it runs only in "
                             "mode='agentic'")
        self.mode, self.reward_mode, self.render_mode = mode, reward_mode, render_mode
        self.max_rounds = 1 if mode == "single_shot" else (max_rounds or self.task.max_rounds)
        self.max_observation_chars = max_observation_chars
        self._trajectory = trajectory
        self._registry = registry()
        self._backend = get_backend(backend) if isinstance(backend, str) else backend
        self.backend_name = self._backend.name
        self.runtime = self._registry.runtime_for(self.task.environment.runtime).prepare(self.task.environment)
        from .builtin.runtimes import cache_dir

        self._pristine = self.task.workspace.read()
        self._hidden = self.task.hidden_files.read() if self.task.hidden_files else {}
        self._workspace_dir = materialize(self._pristine, cache_dir())
        self._protected = self.task.protected_paths
        self._changed: dict[str, bytes] = {}  # what the agent changed or added in the evaluated workspace
        self.action_space = CodeText()
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
            if self.mode == "single_shot":
                output, result = self._step_single_shot(action, info)
                reward, terminated = result.total, True
            else:
                output, reward, terminated, truncated = self._step_agentic(action, info)
        except InfrastructureError as exc:
            info.update(infra_error=f"{type(exc).__name__}: {exc}", reward_masked=True)
            output = f"[infrastructure failure, not scored: {exc}]"
            reward, terminated = 0.0, True
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

    # ------------------------------------------------------------------ the two modes
    def _step_single_shot(self, action: Any, info: dict[str, Any]):
        if not isinstance(action, str):
            raise_type = type(action).__name__
            output = f"[the action must be the program text (str), not {raise_type}]"
            result = self._reward([])
            self._fill_info(info, [], result)
            return output, result
        runs, output = self._evaluate(self._sandbox, code=action)
        self._runs = runs
        result = self._reward(runs)
        self._fill_info(info, runs, result)
        return output, result

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
            runs, eval_output = self._evaluate_workspace()
            self._runs = self._runs + runs if self.reward_mode == "dense" else runs
            result = self._reward(self._runs)
            reward = result.total - self._score if self.reward_mode == "dense" else result.total
            self._score = result.total
            self._fill_info(info, runs, result)
            if submit or truncated:
                output += "\n[evaluation]\n" + eval_output
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

    def _evaluate_workspace(self) -> tuple[list[dict[str, Any]], str]:
        """Evaluate the agent's workspace in a fresh sandbox (protected files pristine, hidden files added)."""
        with self._open() as judge:
            try:
                self._copy_changes(self._sandbox, judge)
            except _WorkspaceRefused as exc:  # the agent's own doing: scored 0, never masked
                error = {"type": "WorkspaceRefused", "message": str(exc)}
                return [{"error": error, "workspace_refused": True}], f"[the workspace was not evaluated: {exc}]"
            return self._evaluate(judge, code=None)

    def _copy_limits(self) -> tuple[int, int, int, int]:
        """(files, bytes in all, bytes in one file, directory depth) the evaluation copies at most."""
        limits = self.task.limits
        total = min(MAX_COPY_BYTES, limits.memory_mb << 18)  # a quarter of the judge's memory
        return MAX_COPY_FILES, total, min(total, limits.max_file_size_mb << 20), MAX_COPY_DEPTH

    def _copy_changes(self, agent: Sandbox, judge: Sandbox) -> None:
        """Copy the agent's changes to non-protected files into *judge*, within bounds.

        What the agent wrote decides what is copied, so a workspace past a bound, or one whose
        listing or reading fails while both sandboxes live, is the agent's failure: raised as
        ``_WorkspaceRefused``. A sandbox that dies is the infrastructure's (``SandboxError``)."""
        root = self.task.root
        max_files, max_bytes, max_file, max_depth = self._copy_limits()

        def guarded(what: str, call: Callable[[], Any]) -> Any:
            try:
                return call()
            except SandboxError:
                if agent.alive and judge.alive:
                    raise _WorkspaceRefused(f"{what} failed") from None
                raise
            except OSError as exc:
                if exc.errno in (errno.EFBIG, errno.ENOSPC, errno.EDQUOT, errno.ENAMETOOLONG):
                    raise _WorkspaceRefused(f"{what}: {exc.strerror or exc}") from None
                raise

        current = set(guarded("listing the workspace (too deep or too many files?)", lambda: agent.list_files(root)))
        if len(current) > max_files:
            raise _WorkspaceRefused(f"it holds {len(current)} files; the evaluation copies at most {max_files}")
        copied, self._changed = 0, {}
        for rel in sorted(current):
            if rel.count("/") >= max_depth:
                raise _WorkspaceRefused(f"{rel[:200]!r} is nested more than {max_depth} directories deep")
            if matches_any(rel, self._protected):
                continue
            try:
                data = guarded(f"reading {rel[:200]!r}", lambda: agent.read_file(rel))
            except OSError:
                continue  # a FIFO, a dangling link, a directory link: not part of the solution
            if len(data) > max_file:
                raise _WorkspaceRefused(f"{rel[:200]!r} holds {len(data)} bytes; one file may hold {max_file}")
            copied += len(data)
            if copied > max_bytes:
                raise _WorkspaceRefused(f"the changed files hold more than {max_bytes} bytes, the evaluation's bound")
            if self._pristine.get(rel) != data:
                guarded(f"copying {rel[:200]!r}", lambda: judge.write_file(rel, data))
                if rel not in self._hidden:
                    self._changed[rel] = data
        for rel in self._pristine:
            if rel not in current and not matches_any(rel, self._protected):
                judge.remove(rel)

    def _evaluate(self, sandbox: Sandbox, code: str | None) -> tuple[list[dict[str, Any]], str]:
        for rel, data in self._hidden.items():
            sandbox.write_file(rel, data)
        ctx = ActionContext(sandbox, self.task, self.mode, self._round, code=code)
        runs, outputs = [], []
        if code is not None:
            self._changed = {}
        for step in self.task.execution_steps:
            name = step["action"]
            if PLACEHOLDER in json.dumps(step):
                if code is None:
                    continue  # agentic: the agent already wrote its files
                step = {k: v.replace(PLACEHOLDER, code) if isinstance(v, str) else v for k, v in step.items()}
                rel = self.task.relpath(str(step.get("path", "")))
                if name == "overwrite_file" and not matches_any(rel, self._protected) and rel not in self._hidden:
                    self._changed[rel] = str(step.get("content", "")).encode()
            if name == "run_command":
                if runs:
                    self._restore_trusted(sandbox)
                runs.append(self._scored_run(sandbox, step, outputs))
                continue
            if name == "submit":
                continue
            try:
                outcome = self._registry.action(name).execute(ctx, step)
                outputs.append(outcome.observation)
            except ActionError as exc:  # the task's own step failed: the solution made it impossible
                outputs.append(f"[evaluation step {name} failed: {exc}]")
        return runs, _clip("\n".join(outputs), self.max_observation_chars)

    def _scored_run(self, sandbox: Sandbox, step: Mapping[str, Any], outputs: list[str]) -> dict[str, Any]:
        from .builtin.actions import format_result
        from .builtin.metrics import scored_command

        nonce = secrets.token_hex(8)
        scored = scored_command(step["command"], nonce, root=self.task.root,
                                task_files={**self._pristine, **self._hidden}, trusted_files=self._trusted_paths(),
                                pipe="pipes" in sandbox.capabilities, pythonpath=self.runtime.env.get("PYTHONPATH"))
        for path, data in scored.files.items():
            sandbox.write_file(path, data, mode=0o444)
        timeout = min(float(step.get("timeout_s") or self.task.limits.wall_time_s), self.task.limits.wall_time_s)
        report_path = scored.report_path
        if report_path and "pipes" in sandbox.capabilities:  # the report can only be written once
            result = sandbox.exec(scored.command, timeout_s=timeout, env=scored.env, pipes=[report_path])
        else:
            result = sandbox.exec(scored.command, timeout_s=timeout, env=scored.env or None,
                                  collect=[report_path] if report_path else ())
        report = result.artifacts.get(sandbox.resolve(report_path)) if report_path else None
        run = RunContext(step["command"], result, scored.kind, report, scored.key, MappingProxyType(dict(self._changed)))
        metrics: dict[str, Any] = {}
        for provider in self._registry.metric_providers:
            try:
                values = provider.measure(run)
            except Exception as exc:  # a broken metric plugin is infrastructure, not the model's fault
                raise InfrastructureError(f"metric provider {type(provider).__name__} failed: {exc}") from exc
            for key, value in values.items():
                metrics.setdefault(key, value)
        if scored.kind is not None and isinstance(metrics.get("test_outcomes"), dict) and not metrics.get("integrity"):
            self._check_coverage(step["command"], metrics)
        shown = dataclasses.replace(result, command=step["command"])  # the instrumented command stays hidden
        text = re.sub(r"[^\s'\"]*\.?agentenv[-_](?:judge_)?" + nonce + r"[^\s'\"]*", "<judge>", format_result(shown))
        outputs.append(_PYTEST_DURATION.sub(" in <time>", text))
        return metrics

    def _trusted_paths(self) -> list[str]:
        """Sandbox paths of the files whose content the task, not the agent, decides."""
        root = self.task.root.rstrip("/")
        return [f"{root}/{rel}" for rel in sorted(set(self._hidden) | {r for r in self._pristine
                                                                       if matches_any(r, self._protected)})]

    def _restore_trusted(self, sandbox: Sandbox) -> None:
        """Before a second scored run: stop what the first left running and put the task's own files back.

        Code under test ran in the first run; it may have left a process behind or rewritten a
        protected test for the next run. Protected and hidden files are rewritten from the task, and
        files the agent could not have added (a new conftest.py, a test file) are removed."""
        sandbox.exec("kill -9 -1 2>/dev/null; true", timeout_s=10)
        present = set(sandbox.list_files(self.task.root))
        for rel in present:
            if matches_any(rel, self._protected) and rel not in self._pristine and rel not in self._hidden:
                sandbox.remove(rel)
        for rel, data in self._pristine.items():
            if matches_any(rel, self._protected) and rel not in self._hidden:
                sandbox.write_file(rel, data)
        for rel, data in self._hidden.items():
            sandbox.write_file(rel, data)

    def _check_coverage(self, command: str, metrics: dict[str, Any]) -> None:
        """Refuse a report that lacks tests a trusted collection of the task found.

        Code under test runs inside pytest and could forge the report; a forgery must then also
        name every test function of the task (hidden ones included), which it cannot learn from
        its own workspace. Parameter ids are ignored, since they may depend on the solution."""
        expected = self._expected_tests(command)
        if not expected:
            return
        present = {_base_test_id(n) for n in metrics["test_outcomes"]}
        missing = expected - present
        if missing:
            metrics.update(test_pass_rate=0.0, report="incomplete", error={
                "type": "IncompleteReport",
                "message": f"the test report lacks {len(missing)} of the task's {len(expected)} tests, "
                           f"e.g. {sorted(missing)[0]}"})

    def _expected_tests(self, command: str) -> frozenset[str]:
        from .builtin.metrics import collect_command

        key = (self._workspace_dir, tuple(sorted(self._hidden)), command)
        with _COLLECTED_LOCK:
            if key in _COLLECTED:
                return _COLLECTED[key]
        ids: frozenset[str] = frozenset()
        collect = collect_command(command)
        if collect:
            with self._open() as judge:
                for rel, data in self._hidden.items():
                    judge.write_file(rel, data)
                result = judge.exec(collect, timeout_s=self.task.limits.wall_time_s)
            lines = [l.strip() for l in result.stdout.splitlines() if "::" in l and " " not in l.strip()]
            if result.exit_code == 0 and lines:
                ids = frozenset(_base_test_id(l) for l in lines)
        with _COLLECTED_LOCK:
            _COLLECTED[key] = ids
        return ids

    def _reward(self, runs: list[dict[str, Any]]) -> RewardResult:
        model_scores = {}
        view = None  # the final files are read once, however many rules use a reward model
        for i, rule in enumerate(self.task.reward.rules):
            if rule.reward_model is not None:
                model = self._registry.reward_models[rule.reward_model]
                if view is None:
                    view = EpisodeView(self.task, self._final_files(), self.task.reference_files(), tuple(runs))
                model_scores[i] = model.score(view, rule.options)
        return compute_reward(self.task.reward, runs, self._registry.metrics, model_scores)

    def _final_files(self) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        if self._sandbox is None or not self._sandbox.alive:
            return files
        max_files, max_bytes, max_file, _ = self._copy_limits()
        try:
            names = self._sandbox.list_files(self.task.root)
        except (OSError, SandboxError):
            return files  # what a reward model cannot read scores as absent, within the same bounds as the copy
        total = 0
        for rel in names[:max_files]:
            if not matches_any(rel, self._protected):
                try:
                    data = self._sandbox.read_file(rel)
                except (OSError, SandboxError):
                    continue
                total += len(data)
                if len(data) > max_file or total > max_bytes:
                    break
                files[rel] = data
        return files

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
        if self.mode == "single_shot" and task.single_shot_path is None:
            return f"{task.description}\n\nReply with the code that completes the task."
        if self.mode == "single_shot":
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
        out["scored_runs"] = [_jsonable(r) for r in self._runs] if info.get("runs") else []
        # Present on every record (null: this step did not evaluate), so consumers need no key checks.
        out.setdefault("metrics", None)
        out.setdefault("reward_breakdown", None)
        return out

    def _record(self, record: dict[str, Any]) -> None:
        if self._trajectory is None:
            return
        record = _jsonable(record)
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


#: bounds on what an evaluation copies out of the agent's sandbox (also cut by the task's limits)
MAX_COPY_FILES, MAX_COPY_BYTES, MAX_COPY_DEPTH = 20_000, 256 << 20, 64


class _WorkspaceRefused(Exception):
    """The agent's workspace is past a bound of the evaluation (the agent's failure)."""


_COLLECTED: dict[tuple, frozenset[str]] = {}
_COLLECTED_LOCK = threading.Lock()


def _base_test_id(node: str) -> str:
    return node.split("[", 1)[0]


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
