"""The scored evaluation: a task's ``execution_steps`` run in a sandbox, read by report formats,
turned into metrics and a composite reward.

This is the one place that judges a solution; the environment (``_env.py``) decides *when*.
In agentic mode the agent's sandbox is never evaluated in place: :meth:`Evaluation.workspace`
opens a fresh sandbox from the pristine workspace, copies in the agent's changes to non-protected
files (within bounds: past them the workspace is refused and scored 0, never masked), then the
hidden files, then runs the steps. Each ``run_command`` step is instrumented by its report format
(``agentenv_add_report_formats``; pytest's trusted judge for pytest commands), and a report that
lacks a test the format's trusted collection of the task found scores 0. Before a second scored
command every process of the sandbox is killed and the task's own files are put back.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import re
import secrets
import threading
from typing import Any, Callable, Mapping

from ._errors import ActionError, InfrastructureError, SandboxError
from ._extension import (ActionContext, EpisodeView, MetricProvider, ReportFormat, RunContext, ScoredCommand,
                         ScoringContext, TestReport)
from ._paths import matches_any
from ._plugins import Registry
from ._reward import RewardResult, compute_reward
from ._sandbox import RuntimeEnv, Sandbox
from ._spec import AGENTIC, PLACEHOLDER, SINGLE_SHOT, TaskSpec

#: bounds on what an evaluation copies out of the agent's sandbox (also cut by the task's limits)
MAX_COPY_FILES, MAX_COPY_BYTES, MAX_COPY_DEPTH = 20_000, 256 << 20, 64

Runs = list[dict[str, Any]]


class WorkspaceRefused(Exception):
    """The agent's workspace is past a bound of the evaluation (the agent's failure, scored 0)."""


_FULL = (errno.EFBIG, errno.ENOSPC, errno.EDQUOT)


def _refused(exc: WorkspaceRefused) -> tuple[Runs, str, dict[str, bytes]]:
    """The agent's own doing: scored 0, never masked (and nothing judged for reward models to see)."""
    error = {"type": "WorkspaceRefused", "message": str(exc)}
    return [{"error": error, "workspace_refused": True}], f"[the workspace was not evaluated: {exc}]", {}


def _write_trusted(sandbox: Sandbox, rel: str, data: bytes, *, agents_doing: bool, mode: int = 0o644) -> None:
    """Write one of the task's own files. Where the agent's files, or code a scored run ran, filled
    the workspace first, no room left for it is the agent's doing (:class:`WorkspaceRefused`), not
    an infrastructure failure: else a full workspace would crash the step (or mask the episode)."""
    try:
        sandbox.write_file(rel, data, mode=mode)
    except OSError as exc:
        if agents_doing and exc.errno in _FULL:
            raise WorkspaceRefused(f"the task's file {rel[:200]!r} does not fit beside what the solution wrote "
                                   f"({exc.strerror or exc})") from None
        raise


def measured_providers(task: TaskSpec, registry: Registry, metrics: str | frozenset[str]) -> list[MetricProvider]:
    """The metric providers an evaluation of *task* runs: every provider that is not
    :attr:`~MetricProvider.on_demand`, and those that are where *metrics* is ``"all"``, where it
    names one of their metrics, or where the task's reward reads one (a rule or a gate names it, or
    a rule names a reward model, which sees every metric)."""
    if metrics == "all" or _names_reward_model(task):
        return list(registry.metric_providers)
    asked = set() if isinstance(metrics, str) else set(metrics)
    for rule in task.reward.rules:
        asked.update(name for name in (rule.metric, rule.gate.metric if rule.gate else None) if name)
    return [p for p in registry.metric_providers if not p.on_demand or any(m.name in asked for m in p.metrics)]


def _names_reward_model(task: TaskSpec) -> bool:
    return any(rule.reward_model is not None for rule in task.reward.rules)


class Evaluation:
    """Judges solutions of one task. One per environment; sandboxes come from *open_sandbox*."""

    def __init__(self, task: TaskSpec, registry: Registry, runtime: RuntimeEnv, pristine: Mapping[str, bytes],
                 hidden: Mapping[str, bytes], open_sandbox: Callable[[], Sandbox], cache_key: str,
                 metrics: str | frozenset[str] = "reward"):
        self.task, self.registry, self.runtime = task, registry, runtime
        self.pristine, self.hidden = pristine, hidden
        self.protected = task.protected_paths
        self.open_sandbox = open_sandbox
        self._cache_key = cache_key  # names the pristine workspace: trusted collections are cached by it
        self.providers = measured_providers(task, registry, metrics)

    # ------------------------------------------------------------------ entry points
    def workspace(self, agent: Sandbox, round_: int, final: bool = False) -> tuple[Runs, str, dict[str, bytes]]:
        """Evaluate the agent's workspace in a fresh sandbox (protected files pristine, hidden files added).
        *final*: the episode ends with it, so what the agent left running is stopped first (it could
        change files while they are copied, or starve the sandbox's server of the CPU the copy needs)."""
        if final:
            agent.kill_processes()
        with self.open_sandbox() as judge:
            try:
                files = self._copy_changes(agent, judge)
            except WorkspaceRefused as exc:
                return _refused(exc)
            return self.run(judge, None, round_, files)

    def run(self, sandbox: Sandbox, code: str | None, round_: int,
            files: Mapping[str, bytes] | None = None) -> tuple[Runs, str, dict[str, bytes]]:
        """Run the task's steps in *sandbox*: with *code* filling the placeholders (single-shot), or
        on the files already there (agentic; *files* are the agent's non-protected files, as copied).

        Returns the runs, the output and the solution as judged, where a reward model will score it:
        the non-protected files as the first scored command found them, after every step before it
        (placeholders in any action, the task's own steps), read before any code of the solution
        ran (never a re-read after the run, which the solution's code, or a process the agent
        left, could change); hidden files are never part of it."""
        try:
            return self._run(sandbox, code, round_, files)
        except WorkspaceRefused as exc:
            return _refused(exc)

    def _run(self, sandbox: Sandbox, code: str | None, round_: int,
             files: Mapping[str, bytes] | None) -> tuple[Runs, str, dict[str, bytes]]:
        changed = {rel: data for rel, data in (files or {}).items() if self.pristine.get(rel) != data}
        judged: dict[str, bytes] | None = None
        wanted = _names_reward_model(self.task)  # (a reward model reads the solution's files)
        for rel, data in self.hidden.items():  # beside the agent's files, when it changed any
            _write_trusted(sandbox, rel, data, agents_doing=bool(changed))
        ctx = ActionContext(sandbox, self.task, AGENTIC if code is None else SINGLE_SHOT, round_, code=code)
        runs: Runs = []
        outputs: list[str] = []
        for step in self.task.execution_steps:
            name = step["action"]
            if PLACEHOLDER in json.dumps(step):
                if code is None:
                    continue  # agentic: the agent already wrote its files
                step = {k: v.replace(PLACEHOLDER, code) if isinstance(v, str) else v for k, v in step.items()}
                if name == "overwrite_file" and isinstance(step.get("path"), str):
                    changed[self.task.relpath(step["path"])] = str(step.get("content", "")).encode()
            if name == "run_command":
                if judged is None:
                    judged = self._solution_files(sandbox) if wanted else {}
                if runs:
                    self._restore_trusted(sandbox)
                runs.append(self._scored_run(sandbox, step, outputs, changed))
                continue
            if name == "submit":
                continue
            try:
                outcome = self.registry.action(name).execute(ctx, step)
                outputs.append(outcome.observation)
            except ActionError as exc:  # the task's own step failed: the solution made it impossible
                outputs.append(f"[evaluation step {name} failed: {exc}]")
        if judged is None:
            judged = self._solution_files(sandbox) if wanted else {}
        return runs, "\n".join(outputs), judged

    def _solution_files(self, sandbox: Sandbox) -> dict[str, bytes]:
        """The non-protected files of *sandbox* but the hidden ones, within the same bounds as the
        copy: the solution as a reward model scores it (read before any of its code ran)."""
        files: dict[str, bytes] = {}
        max_files, max_bytes, max_file, _ = self.copy_limits()
        try:
            names = sandbox.list_files(self.task.root)
        except (OSError, SandboxError):
            return files  # what a reward model cannot read scores as absent
        total = 0
        for rel in names[:max_files]:
            if matches_any(rel, self.protected) or rel in self.hidden:
                continue
            try:
                data = sandbox.read_file(rel)
            except (OSError, SandboxError):
                continue
            total += len(data)
            if len(data) > max_file or total > max_bytes:
                break
            files[rel] = data
        return files

    def reward(self, runs: Runs, files: Mapping[str, bytes]) -> RewardResult:
        """The composite reward of *runs*; reward models see *files* (the solution as judged)."""
        model_scores = {}
        view = None
        for i, rule in enumerate(self.task.reward.rules):
            if rule.reward_model is not None:
                model = self.registry.reward_models[rule.reward_model]
                if view is None:
                    reference = self.task.reference_solution.read() if self.task.reference_solution else {}
                    view = EpisodeView(self.task, files, reference, tuple(runs))
                model_scores[i] = model.score(view, rule.options)
        return compute_reward(self.task.reward, runs, self.registry.metrics, model_scores)

    # ------------------------------------------------------------------ the agent's changes
    def copy_limits(self) -> tuple[int, int, int, int]:
        """(files, bytes in all, bytes in one file, directory depth) the evaluation copies at most."""
        limits = self.task.limits
        total = min(MAX_COPY_BYTES, limits.memory_mb << 18)  # a quarter of the judge's memory
        return MAX_COPY_FILES, total, min(total, limits.max_file_size_mb << 20), MAX_COPY_DEPTH

    def _copy_changes(self, agent: Sandbox, judge: Sandbox) -> dict[str, bytes]:
        """Copy the agent's changes to non-protected files into *judge*, within bounds; return every
        non-protected file as read (the solution as judged).

        What the agent wrote decides what is copied, so a workspace past a bound, or one whose
        listing or reading fails while both sandboxes live, is the agent's failure: raised as
        :class:`WorkspaceRefused`. A sandbox that dies is the infrastructure's (``SandboxError``)."""
        root = self.task.root
        max_files, max_bytes, max_file, max_depth = self.copy_limits()

        def guarded(what: str, call: Callable[[], Any]) -> Any:
            try:
                return call()
            except SandboxError:
                if agent.alive and judge.alive:
                    raise WorkspaceRefused(f"{what} failed") from None
                raise
            except OSError as exc:
                if exc.errno in _FULL + (errno.ENAMETOOLONG,):
                    raise WorkspaceRefused(f"{what}: {exc.strerror or exc}") from None
                raise

        current = set(guarded("listing the workspace (too deep or too many files?)", lambda: agent.list_files(root)))
        if len(current) > max_files:
            raise WorkspaceRefused(f"it holds {len(current)} files; the evaluation copies at most {max_files}")
        copied = 0
        files: dict[str, bytes] = {}
        for rel in sorted(current):
            if rel.count("/") >= max_depth:
                raise WorkspaceRefused(f"{rel[:200]!r} is nested more than {max_depth} directories deep")
            if matches_any(rel, self.protected):
                continue
            try:
                data = guarded(f"reading {rel[:200]!r}", lambda: agent.read_file(rel))
            except OSError:
                continue  # a FIFO, a dangling link, a directory link: not part of the solution
            if len(data) > max_file:
                raise WorkspaceRefused(f"{rel[:200]!r} holds {len(data)} bytes; one file may hold {max_file}")
            copied += len(data)
            if copied > max_bytes:
                raise WorkspaceRefused(f"the changed files hold more than {max_bytes} bytes, the evaluation's bound")
            if self.pristine.get(rel) != data:
                guarded(f"copying {rel[:200]!r}", lambda: judge.write_file(rel, data))
            files[rel] = data
        for rel in self.pristine:
            if rel not in current and not matches_any(rel, self.protected):
                try:  # (gone already where the agent put a file in place of its folder)
                    guarded(f"removing {rel[:200]!r}", lambda: judge.remove(rel))
                except (FileNotFoundError, NotADirectoryError):
                    pass
        return files

    # ------------------------------------------------------------------ one scored command
    def _format(self, step: Mapping[str, Any]) -> tuple[ReportFormat | None, Mapping[str, Any]]:
        report = step.get("report")
        if isinstance(report, Mapping):
            return self.registry.report_format(str(report.get("format"))), {k: v for k, v in report.items() if k != "format"}
        return self.registry.report_format_for(step["command"]), {}

    def _scored_run(self, sandbox: Sandbox, step: Mapping[str, Any], outputs: list[str],
                    changed: Mapping[str, bytes]) -> dict[str, Any]:
        fmt, options = self._format(step)
        nonce = secrets.token_hex(8)
        scored = ScoredCommand(step["command"])
        if fmt is not None:
            ctx = ScoringContext(nonce, self.task.root, {**self.pristine, **self.hidden}, self._trusted_paths(),
                                 "pipes" in sandbox.capabilities, self.runtime, options)
            scored = fmt.instrument(step["command"], ctx)
        for path, data in scored.files.items():  # (after the solution's files: their room is theirs)
            _write_trusted(sandbox, path, data, agents_doing=True, mode=0o444)
        for provider in self.providers:  # work on the files alone overlaps the run
            self._guard_metric(provider, provider.prepare, changed)
        limit = self.task.limits.wall_time_s
        timeout = min(float(step.get("timeout_s") or limit), limit)
        path = scored.report_path
        if path and scored.pipe and "pipes" in sandbox.capabilities:  # the report can only be written once
            result = sandbox.exec(scored.command, timeout_s=timeout, env=scored.env or None, pipes=[path])
        else:
            if path:
                sandbox.remove(path)  # a file planted before the run is not the run's report
            result = sandbox.exec(scored.command, timeout_s=timeout, env=scored.env or None,
                                  collect=[path] if path else ())
        report: TestReport | None = None
        if fmt is not None:
            report = fmt.parse(scored, result, result.artifacts.get(sandbox.resolve(path)) if path else None)
            if report.trusted and report.outcomes:
                report = self._check_coverage(fmt, step["command"], report)
        run = RunContext(step["command"], result, report, dict(changed))
        metrics: dict[str, Any] = {}
        for provider in self.providers:
            values = self._guard_metric(provider, provider.measure, run)
            for key, value in values.items():
                metrics.setdefault(key, value)
        shown = dataclasses.replace(result, command=step["command"])  # the instrumented command stays hidden
        text = _hide_words_with(nonce, shown.transcript())
        outputs.append(fmt.mask_output(text) if fmt is not None else text)
        return metrics

    @staticmethod
    def _guard_metric(provider: Any, call: Callable[[Any], Any], arg: Any) -> Any:
        try:
            return call(arg)
        except Exception as exc:  # a broken metric plugin is infrastructure, not the model's fault
            raise InfrastructureError(f"metric provider {type(provider).__name__} failed: {exc}") from exc

    def _trusted_paths(self) -> list[str]:
        """Sandbox paths of the files whose content the task, not the agent, decides."""
        root = self.task.root.rstrip("/")
        return [f"{root}/{rel}" for rel in sorted(set(self.hidden) | {r for r in self.pristine
                                                                      if matches_any(r, self.protected)})]

    def _restore_trusted(self, sandbox: Sandbox) -> None:
        """Before a second scored run: stop what the first left running and put the task's own files back.

        Code under test ran in the first run; it may have left a process behind or rewritten a
        protected test for the next run. Protected and hidden files are rewritten from the task, and
        files the agent could not have added (a new conftest.py, a test file) are removed. Where the
        first run's code took the permission to do so away (a task folder left read-only), the
        workspace is refused: the agent's doing, scored 0 (before, the error came out of ``env.step``)."""
        sandbox.kill_processes()
        try:
            self._put_back_trusted(sandbox)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                raise WorkspaceRefused(f"the task's files could not be put back where the solution's run left "
                                       f"the workspace ({exc.strerror or exc}: {exc.filename or ''})") from None
            raise

    def _put_back_trusted(self, sandbox: Sandbox) -> None:
        present = set(sandbox.list_files(self.task.root))
        for rel in present:
            if matches_any(rel, self.protected) and rel not in self.pristine and rel not in self.hidden:
                sandbox.remove(rel)
        for rel, data in self.pristine.items():
            if matches_any(rel, self.protected) and rel not in self.hidden:
                _write_trusted(sandbox, rel, data, agents_doing=True)
        for rel, data in self.hidden.items():
            _write_trusted(sandbox, rel, data, agents_doing=True)

    # ------------------------------------------------------------------ coverage of the task's tests
    def _check_coverage(self, fmt: ReportFormat, command: str, report: TestReport) -> TestReport:
        """Refuse a report that lacks tests a trusted collection of the task found, and leave out of
        it the tests of the task's own files that the collection did not find.

        Code under test runs inside the test process and could forge the report; a forgery must then
        also name every test of the task (hidden ones included), which it cannot learn from its own
        workspace. Every test must be there by its very id (``test_x[0]`` does not stand in for
        ``test_x``, and a parametrized test keeps all its cases: code under test that rewrote a
        test's ``parametrize`` mark, keeping the cases it passes, scored full marks). A test the
        task's files do not have (a function that code under test added to a test module) does not
        count: passing ones would raise the pass rate. Where the task's tests do not collect without a
        solution and it has none of reference, the tests the run itself collected must be covered
        (code under test that took the tests it fails out of pytest's items scored full marks)."""
        expected = self._expected_tests(fmt, command) or report.collected
        if not expected:
            return self._check_xfails(fmt, command, report)
        missing = sorted(expected - set(report.outcomes))
        if missing:
            return dataclasses.replace(report, status="incomplete", error={
                "type": "IncompleteReport",
                "message": f"the test report lacks {len(missing)} of the task's {len(expected)} tests, e.g. {missing[0]}"})
        known = {_base_test_id(n) for n in expected}  # (a case the listing and the report spell apart stays)
        extra = [n for n in report.outcomes if _base_test_id(n) not in known and self._task_owned(n.partition("::")[0])]
        if extra:
            report = dataclasses.replace(
                report, outcomes={n: o for n, o in report.outcomes.items() if n not in extra},
                xfailed=report.xfailed - set(extra), error=report.error or {
                    "type": "UnknownTests", "test": sorted(extra)[0],
                    "message": f"{len(extra)} test(s) of the task's files that the task does not have were "
                               f"left out, e.g. {sorted(extra)[0]} (added by code under test)"})
        return self._check_xfails(fmt, command, report)

    def _task_owned(self, rel: str) -> bool:
        """Whether *rel* is a file whose content the task decides (a protected or hidden file)."""
        return rel in self.hidden or (rel in self.pristine and matches_any(rel, self.protected))

    def _check_xfails(self, fmt: ReportFormat, command: str, report: TestReport) -> TestReport:
        """An expected failure counts as passed only where the task marked the test xfail: code under
        test that calls ``pytest.xfail()``, or marks the tests itself (a ``pytestmark`` put into a test
        module, ``add_marker``), would otherwise turn every failure into a pass."""
        if not report.xfailed:
            return report
        marked = {_base_test_id(n) for n in self._expected_tests(fmt, command, marker="xfail")}
        unmarked = sorted(n for n in report.xfailed if _base_test_id(n) not in marked)
        if not unmarked:
            return report
        why = ("that the task does not mark" if self._expected_tests(fmt, command) else
               "whose mark could not be checked (the task's tests do not collect in its pristine workspace)")
        return dataclasses.replace(
            report, outcomes={**report.outcomes, **dict.fromkeys(unmarked, "failed")},
            xfailed=report.xfailed - set(unmarked), error={
                "type": "UnmarkedXfail", "test": unmarked[0],
                "message": f"{len(unmarked)} test(s) reported an expected failure (xfail) {why}, "
                           f"e.g. {unmarked[0]}: counted as failed"})

    def _expected_tests(self, fmt: ReportFormat, command: str, marker: str | None = None) -> frozenset[str]:
        """The ids of the tests *command* runs, as a trusted collection of the task lists them."""
        key = (self._cache_key, tuple(sorted(self.hidden)), fmt.name, command, marker)
        with _COLLECTED_LOCK:
            if key in _COLLECTED:
                return _COLLECTED[key]
        ids: frozenset[str] = frozenset()
        collect = fmt.collect_command(command, marker) if marker else fmt.collect_command(command)
        # the pristine workspace, or where its tests do not collect there (they import a module the
        # agent is to write), the task's reference solution in it
        reference = self.task.reference_solution.read() if self.task.reference_solution else {}
        finished = True
        for solution in ({}, reference) if collect else ():
            with self.open_sandbox() as judge:
                for rel, data in [*solution.items(), *self.hidden.items()]:
                    judge.write_file(rel, data)
                listing = judge.exec(collect, timeout_s=self.task.limits.wall_time_s)
                ids = fmt.collected_tests(listing)
            finished = not listing.timed_out and listing.exit_code >= 0
            if ids or not reference:
                break
        if finished:  # (a listing cut short, by a loaded machine say, is asked for again next time)
            with _COLLECTED_LOCK:
                _COLLECTED[key] = ids
        return ids


_COLLECTED: dict[tuple, frozenset[str]] = {}
_COLLECTED_LOCK = threading.Lock()


def _base_test_id(node: str) -> str:
    return node.split("[", 1)[0]


_WORD_END = re.compile(r"[^\s'\"]*")


def _hide_words_with(nonce: str, text: str) -> str:
    """*text* with every word (a run of characters other than whitespace and quotes) that holds
    *nonce* (the judge's files' and modules' names) shown as ``<judge>``. In linear time: a regular
    expression that began with ``[^\\s'"]*`` tried every start of a long word, and a test that printed
    60,000 characters without a space held ``env.step()`` on the host for minutes (red team, stop 36)."""
    out, done, at = [], 0, text.find(nonce)
    while at >= 0:
        start = at
        while start > done and not (text[start - 1].isspace() or text[start - 1] in "'\""):
            start -= 1
        end = _WORD_END.match(text, at).end()
        out += [text[done:start], "<judge>"]
        done, at = end, text.find(nonce, end)
    return "".join(out) + text[done:]
