"""An agentenv plugin: one action, one metric, one reward model and one report format.

Each class shows one extension point with what it receives and what it may raise; the hook
functions at the bottom register them. Rename the registered names (``replace_text``,
``todo_count``, ``docstring_share``, ``tap_file``) before you publish: a name two installed
plugins register is refused (``agentenv plugins`` names both). docs/plugins.md in agentenv's
repository documents every hook and object used here.

The plugin imports only ``agentenv``'s public API (``agentenv.__all__``).
"""

from __future__ import annotations

import ast
import re

import agentenv

# --------------------------------------------------------------------------- an action


class ReplaceText(agentenv.ActionType):
    """Replace one exact occurrence of a text in a workspace file (an editor's "str_replace")."""

    name = "replace_text"
    description = "Replace the one occurrence of `old` in the workspace file `path` with `new`."
    # Checked by the environment before execute() runs: unknown fields get a did-you-mean, wrong
    # types are named, and the task schema (`agentenv schema`) picks the fields up.
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1, "maxLength": 4000},
                                    "old": {"type": "string", "minLength": 1},
                                    "new": {"type": "string"}},
                     "required": ["path", "old", "new"]}

    def execute(self, ctx: agentenv.ActionContext, action) -> agentenv.ActionOutcome:
        # ctx.sandbox: the episode's Sandbox; ctx.task: the TaskSpec; ctx.mode; ctx.round.
        # Every field is the agent's (untrusted): resolve the path inside the sandbox and stay in
        # the workspace. ActionError tells the agent why; the episode goes on.
        path = ctx.sandbox.resolve(action["path"])
        root = ctx.task.root.rstrip("/") + "/"
        if not path.startswith(root):
            raise agentenv.ActionError(f"replace_text: {agentenv.describe_value(action['path'])} is outside the "
                                       f"workspace {ctx.task.root}")
        try:
            text = ctx.sandbox.read_file(path).decode("utf-8")
        except FileNotFoundError:
            raise agentenv.ActionError(f"replace_text: no file {action['path']!r}") from None
        except UnicodeDecodeError:
            raise agentenv.ActionError(f"replace_text: {action['path']!r} is not UTF-8 text") from None
        count = text.count(action["old"])
        if count != 1:
            raise agentenv.ActionError(f"replace_text: `old` occurs {count} times in {action['path']!r}; "
                                       "give a text that occurs exactly once")
        ctx.sandbox.write_file(path, text.replace(action["old"], action["new"]).encode("utf-8"))
        return agentenv.ActionOutcome(observation=f"replaced 1 occurrence in {action['path']}")


# --------------------------------------------------------------------------- a metric

_TODO = re.compile(rb"\b(?:TODO|FIXME|XXX)\b")


class TodoCount(agentenv.MetricProvider):
    """Markers of unfinished work left in the files the agent changed (lower is better).

    Not noisy (the same files give the same count), so a rule can ask for exactly none:
    ``{"metric": "todo_count", "threshold": 0, "scoring": "step", "gate": {...}}``."""

    metrics = (agentenv.MetricInfo("todo_count", "lower", "TODO/FIXME/XXX markers in the files the agent changed"),)

    def measure(self, run: agentenv.RunContext):
        # run.files: what the agent changed or added (relative path -> bytes), protected files left
        # out; run.result: the command's ExecResult; run.report: what its report format read.
        # Never raise for odd input: a value says it.
        return {"todo_count": float(sum(len(_TODO.findall(data)) for data in run.files.values()))}


# --------------------------------------------------------------------------- a reward model


class DocstringShare(agentenv.RewardModel):
    """The share of functions with a docstring in the final workspace's Python files, in [0, 1].

    A shaping signal: gate it in the task (or give it a small weight) so that documenting broken
    code earns little."""

    name = "docstring_share"  # what a rule names: {"reward_model": "docstring_share", "weight": ...}
    description = "share of the functions of the final Python files that have a docstring"

    def score(self, episode: agentenv.EpisodeView, options) -> float:
        # episode.files and episode.reference: relative path -> bytes; episode.metrics: one mapping
        # per scored run; options: the rule's "options" object. Raise agentenv.InfrastructureError
        # only when the scorer itself is unavailable (the episode is then masked, not scored 0).
        documented = total = 0
        for path, data in episode.files.items():
            if not path.endswith(".py") or path.startswith(tuple(options.get("exclude", ("tests/",)))):
                continue
            try:
                tree = ast.parse(data.decode("utf-8", "replace"))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    total += 1
                    documented += ast.get_docstring(node) is not None
        return documented / total if total else 0.0


# --------------------------------------------------------------------------- a report format


class TapFile(agentenv.ReportFormat):
    """Test Anything Protocol lines ("ok 1 - name", "not ok 2 - name") that the task's own check
    writes to ``$TAP_REPORT``: a fresh, unguessable path (a named pipe where the sandbox can make
    one), read after the run. Nothing the command prints counts.

    The check runs as the same user as the code it tests, so the check must be the task's own
    (a protected or hidden file), and it counts only when it exits 0."""

    name = "tap_file"
    description = "TAP lines the task's check writes to $TAP_REPORT"
    options_schema = {"type": "object", "additionalProperties": False}

    def instrument(self, command: str, ctx: agentenv.ScoringContext) -> agentenv.ScoredCommand:
        path = f"/tmp/.tap-{ctx.nonce}"
        return agentenv.ScoredCommand(command, report_path=path, env={"TAP_REPORT": path}, pipe=ctx.pipes)

    def parse(self, scored, result: agentenv.ExecResult, report: bytes | None) -> agentenv.TestReport:
        # Never raise for a bad report: say so with a status other than "ok" (it scores 0).
        if not result.ok:
            return agentenv.TestReport(self.name, status="incomplete",
                                       error={"type": "CheckFailed", "message": f"the check exited {result.exit_code}"})
        outcomes = {}
        for line in (report or b"").decode("utf-8", "replace").splitlines():
            match = re.match(r"(not )?ok \d+ - (.+)", line.strip())
            if match:
                outcomes[match.group(2)] = "failed" if match.group(1) else "passed"
        if not outcomes:
            return agentenv.TestReport(self.name, status="missing",
                                       error={"type": "NoReport", "message": "the check wrote no TAP line"})
        failed = next((name for name, outcome in outcomes.items() if outcome == "failed"), None)
        error = {"type": "TestFailed", "message": f"not ok: {failed}", "test": failed} if failed else None
        return agentenv.TestReport(self.name, outcomes, error)


# --------------------------------------------------------------------------- the hooks


@agentenv.hookimpl
def agentenv_add_actions(registry):
    registry.add_action(ReplaceText())


@agentenv.hookimpl
def agentenv_add_report_formats(registry):
    registry.add_report_format(TapFile())


@agentenv.hookimpl
def agentenv_add_metrics(registry):
    registry.add_metrics(TodoCount())


@agentenv.hookimpl
def agentenv_add_reward_models(registry):
    registry.add_reward_model(DocstringShare())
