"""Built-in actions: overwrite_file, run_command, read_file, list_files, apply_patch, submit."""

from __future__ import annotations

import re
from typing import Any, Mapping

from .. import hookimpl
from .._errors import ActionError
from .._extension import ActionContext, ActionOutcome, ActionType
from .._sandbox import check_inside

MAX_READ_CHARS = 100_000


def _path(ctx: ActionContext, action: Mapping[str, Any], default: str | None = None) -> str:
    path = action.get("path", default)
    if not isinstance(path, str) or not path:
        raise ActionError("the action needs a 'path' (a string)")
    return check_inside(ctx.task.root, path)


def format_result(result) -> str:
    parts = [f"$ {result.command}", f"[exit code {result.exit_code}"
             + (", timed out" if result.timed_out else "") + (", out of memory" if result.oom_killed else "")
             + (", output truncated" if result.output_truncated else "") + "]"]
    if result.stdout:
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr:
        parts.append("[stderr]\n" + result.stderr.rstrip("\n"))
    return "\n".join(parts)


class OverwriteFile(ActionType):
    name = "overwrite_file"
    description = "Create or replace a file in the workspace."
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1}, "content": {"type": "string"}},
                     "required": ["path", "content"]}

    def execute(self, ctx, action):
        path = _path(ctx, action)
        content = action.get("content")
        if not isinstance(content, str):
            raise ActionError("overwrite_file needs 'content' (a string)")
        ctx.sandbox.write_file(path, content.encode())
        return ActionOutcome(f"wrote {ctx.task.relpath(path)} ({len(content)} characters)")


class RunCommand(ActionType):
    name = "run_command"
    description = "Run a shell command in the workspace."
    fields_schema = {"properties": {"command": {"type": "string", "minLength": 1},
                                    "timeout_s": {"type": "number", "exclusiveMinimum": 0},
                                    "cwd": {"type": "string"}},
                     "required": ["command"]}

    def execute(self, ctx, action):
        command = action.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ActionError("run_command needs 'command' (a non-empty string)")
        timeout = action.get("timeout_s")
        if timeout is not None:
            timeout = min(float(timeout), ctx.task.limits.wall_time_s)
        cwd = _path(ctx, action, default=ctx.task.root) if action.get("cwd") else None
        result = ctx.sandbox.exec(command, timeout_s=timeout, cwd=cwd)
        return ActionOutcome(format_result(result), result=result, ok=result.ok)


class ReadFile(ActionType):
    name = "read_file"
    description = "Show a file of the workspace."
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1}}, "required": ["path"]}

    def execute(self, ctx, action):
        path = _path(ctx, action)
        try:
            data = ctx.sandbox.read_file(path)
        except FileNotFoundError:
            raise ActionError(f"no such file: {ctx.task.relpath(path)}") from None
        except IsADirectoryError:
            raise ActionError(f"{ctx.task.relpath(path)} is a directory; use list_files") from None
        except OSError as exc:
            raise ActionError(f"cannot read {ctx.task.relpath(path)}: {exc.strerror or exc}") from None
        text = data.decode("utf-8", "replace")
        if len(text) > MAX_READ_CHARS:
            text = text[:MAX_READ_CHARS] + f"\n...[{len(text) - MAX_READ_CHARS} more characters]"
        return ActionOutcome(text)


class ListFiles(ActionType):
    name = "list_files"
    description = "List the files below a directory of the workspace (default: the root)."
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1}}}

    def execute(self, ctx, action):
        path = _path(ctx, action, default=ctx.task.root)
        try:
            files = ctx.sandbox.list_files(path)
        except (FileNotFoundError, NotADirectoryError):
            raise ActionError(f"no such directory: {ctx.task.relpath(path) or '.'}") from None
        return ActionOutcome("\n".join(files) if files else "(no files)")


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_unified_diff(patch: str) -> list[tuple[str | None, str | None, list[tuple[int, list[str]]]]]:
    """[(old path, new path, [(old start, hunk lines)])] from a unified diff (git or diff -u)."""
    files, lines, i = [], patch.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = _strip_prefix(lines[i][4:])
            new = _strip_prefix(lines[i + 1][4:])
            hunks: list[tuple[int, list[str]]] = []
            i += 2
            while i < len(lines) and not lines[i].startswith("--- "):
                m = _HUNK.match(lines[i])
                if not m:
                    i += 1
                    continue
                start, body = int(m.group(1)), []
                i += 1
                while i < len(lines) and lines[i][:1] in (" ", "+", "-", "\\", ""):
                    if lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
                        break
                    if not lines[i].startswith("\\"):
                        body.append(lines[i] if lines[i] else " ")
                    i += 1
                hunks.append((start, body))
            files.append((old, new, hunks))
        else:
            i += 1
    return files


def _strip_prefix(name: str) -> str | None:
    name = name.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def apply_hunks(text: str, hunks: list[tuple[int, list[str]]], name: str) -> str:
    lines = text.splitlines()
    trailing_newline = text.endswith("\n") or not text
    offset = 0
    for start, body in hunks:
        old = [l[1:] for l in body if l[0] in (" ", "-")]
        new = [l[1:] for l in body if l[0] in (" ", "+")]
        want = max(start - 1 + offset, 0)
        pos = None
        for delta in sorted(range(-len(lines) - 1, len(lines) + 1), key=abs):  # nearest match first
            p = want + delta
            if 0 <= p <= len(lines) - len(old) and lines[p:p + len(old)] == old:
                pos = p
                break
        if pos is None:
            raise ActionError(f"patch does not apply to {name}: hunk at line {start} does not match the file")
        lines[pos:pos + len(old)] = new
        offset += len(new) - len(old) + (pos - want)
    return "\n".join(lines) + ("\n" if trailing_newline and lines else "")


class ApplyPatch(ActionType):
    name = "apply_patch"
    description = "Apply a unified diff (as made by git diff or diff -u) to the workspace."
    fields_schema = {"properties": {"patch": {"type": "string", "minLength": 1}}, "required": ["patch"]}

    def execute(self, ctx, action):
        patch = action.get("patch")
        if not isinstance(patch, str):
            raise ActionError("apply_patch needs 'patch' (a unified diff)")
        files = parse_unified_diff(patch)
        if not files:
            raise ActionError("no file headers ('--- a/x' / '+++ b/x') found in the patch")
        changes: list[tuple[str, str | None]] = []
        for old, new, hunks in files:
            target = new or old
            path = check_inside(ctx.task.root, target)
            if old is None:
                current = ""
            else:
                try:
                    current = ctx.sandbox.read_file(check_inside(ctx.task.root, old)).decode()
                except FileNotFoundError:
                    raise ActionError(f"patch modifies {old}, which does not exist") from None
            changes.append((path, None if new is None else apply_hunks(current, hunks, target)))
        for path, content in changes:  # all hunks applied in memory first: a bad patch changes nothing
            if content is None:
                ctx.sandbox.remove(path)
            else:
                ctx.sandbox.write_file(path, content.encode())
        return ActionOutcome("patched " + ", ".join(ctx.task.relpath(p) for p, _ in changes))


class Submit(ActionType):
    name = "submit"
    description = "End the episode; the task's evaluation then scores the workspace."
    fields_schema = {"properties": {}}

    def execute(self, ctx, action):
        return ActionOutcome("submitted", submit=True)


@hookimpl
def agentenv_add_actions(registry) -> None:
    for action in (OverwriteFile(), RunCommand(), ReadFile(), ListFiles(), ApplyPatch(), Submit()):
        registry.add_action(action)
