"""Built-in actions: overwrite_file, run_command, read_file, list_files, apply_patch, submit.

Every field is the agent's, so untrusted: a value that cannot be carried out is refused as an
:class:`ActionError` (the agent reads why) before anything in the sandbox changes. The env checks
each action against its ``fields_schema`` first (``ActionType.check_fields``); the checks here
stand on their own too, since the task's own execution steps reach ``execute`` directly.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import posixpath
import re
import shlex
from typing import Any, Mapping

import agentenv
from agentenv import ActionContext, ActionError, ActionOutcome, ActionType, describe_value

MAX_READ_CHARS = 100_000
#: a path's bounds (Linux's PATH_MAX and NAME_MAX, in UTF-8 bytes)
MAX_PATH_BYTES, MAX_NAME_BYTES = 4096, 255
#: apply_patch's bounds: the patch's length, its files and hunks, the size and lines of a file it
#: edits, and the work of finding the hunks (a line comparison is one unit)
MAX_PATCH_CHARS = 2_000_000
MAX_PATCH_FILES = 100
MAX_PATCH_HUNKS = 1000
MAX_PATCH_TARGET_BYTES = 8 << 20
MAX_PATCH_TARGET_LINES = 1_000_000
MAX_PATCH_WORK = 2_000_000


def _encode(value: str, field: str) -> bytes:
    """*value* as UTF-8; a lone surrogate (which JSON text can carry) is refused."""
    try:
        return value.encode()
    except UnicodeEncodeError as exc:
        raise ActionError(f"{field} is not valid Unicode (a lone surrogate at character {exc.start})") from None


def _check_text(value: str, field: str) -> bytes:
    """*value* as UTF-8, refusing what no file name or command can hold (NUL, lone surrogates)."""
    if "\0" in value:
        raise ActionError(f"{field} {describe_value(value)} contains a NUL character")
    return _encode(value, field)


def check_inside(root: str, path: str) -> str:
    """The absolute sandbox path of *path*, refusing anything that leaves *root*."""
    full = posixpath.normpath(posixpath.join(root, path))
    if full != root and not full.startswith(root.rstrip("/") + "/"):
        raise ActionError(f"path {path!r} is outside the workspace {root}; use a path below {root}")
    return full


def clean_path(ctx: ActionContext, value: Any, field: str = "path", *, directory: bool = False) -> str:
    """The absolute sandbox path *value* names inside the workspace, refused unless it is a usable
    path: a non-empty string without NUL, within Linux's length bounds, inside the workspace, and
    (unless *directory*) naming something below the workspace root, not the root itself. *field*
    names the value in messages."""
    if not isinstance(value, str) or not value:
        raise ActionError(f"the action needs {field!r} (a non-empty string), not {describe_value(value)}")
    raw = _check_text(value, field)
    if len(raw) > MAX_PATH_BYTES:
        raise ActionError(f"{field} {describe_value(value)} is {len(raw)} bytes long; a path has at most {MAX_PATH_BYTES}")
    if any(len(part) > MAX_NAME_BYTES for part in raw.split(b"/")):
        raise ActionError(f"{field} {describe_value(value)} has a name longer than {MAX_NAME_BYTES} bytes")
    try:
        full = check_inside(ctx.task.root, value)
    except ActionError:
        root = ctx.task.root
        raise ActionError(f"{field} {describe_value(value)} is outside the workspace {root}; use a path below {root}") from None
    if not directory:
        if full == ctx.task.root or full == ctx.task.root.rstrip("/"):
            raise ActionError(f"{field} {describe_value(value)} names the workspace root {ctx.task.root} itself; name a file below it")
        if value.endswith("/"):
            raise ActionError(f"{field} {describe_value(value)} names a directory (it ends in '/'); name a file")
    return full


def _path(ctx: ActionContext, action: Mapping[str, Any], default: str | None = None) -> str:
    return clean_path(ctx, action.get("path", default), directory=default is not None)


def _max_file_bytes(ctx: ActionContext) -> int:
    mb = ctx.task.limits.max_file_size_mb
    return (mb if mb else 64) << 20


def _refuse_directory(ctx: ActionContext, path: str, field: str = "path") -> None:
    """Refuse to write a file where a directory stands (a sandbox may delete the directory to write)."""
    try:
        listed = ctx.sandbox.list_files(path)
    except OSError:  # absent, a file, or unreadable: no directory to lose
        return
    if not listed:  # an empty directory, or (some backends) a file or nothing: ask once more
        try:
            ctx.sandbox.read_file(path)
            return  # a file
        except IsADirectoryError:
            pass  # an empty directory
        except OSError:
            return
    raise ActionError(f"{field} {ctx.task.relpath(path)!r} is a directory; it is left as it is (to replace it, "
                      "remove it with run_command first)")


def _refuse_file_parent(ctx: ActionContext, path: str, field: str = "path") -> None:
    """Refuse to write below a file (a sandbox may replace the file by a directory to write)."""
    parent = posixpath.dirname(path)
    if parent in (ctx.task.root, ctx.task.root.rstrip("/")):
        return
    try:
        ctx.sandbox.read_file(parent)
    except (IsADirectoryError, FileNotFoundError):
        return
    except NotADirectoryError:
        pass  # a directory above it is a file
    except OSError:
        return  # the write says what is wrong
    raise ActionError(f"{field} {ctx.task.relpath(path)!r} goes below a file, not a directory; that file is left as it is")


def _os_error(what: str, exc: OSError) -> ActionError:
    return ActionError(f"{what}: {exc.strerror or type(exc).__name__}")


class OverwriteFile(ActionType):
    name = "overwrite_file"
    description = "Create or replace a file in the workspace."
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1}, "content": {"type": "string"}},
                     "required": ["path", "content"]}

    def execute(self, ctx, action):
        path = _path(ctx, action)
        content = action.get("content")
        if not isinstance(content, str):
            raise ActionError(f"overwrite_file needs 'content' (a string), not {describe_value(content)}")
        limit = _max_file_bytes(ctx)
        too_big = (f"; the task's limits.max_file_size_mb allows files of at most {limit >> 20} MB ({limit} bytes), "
                   "so nothing was written")
        if len(content) > limit:
            raise ActionError(f"'content' has {len(content)} characters" + too_big)
        data = _encode(content, "content")
        if len(data) > limit:
            raise ActionError(f"'content' is {len(data)} bytes in UTF-8" + too_big)
        rel = ctx.task.relpath(path)
        _refuse_directory(ctx, path)
        _refuse_file_parent(ctx, path)
        try:
            ctx.sandbox.write_file(path, data)
        except OSError as exc:
            raise _os_error(f"cannot write {rel!r}", exc) from None
        return ActionOutcome(f"wrote {rel} ({len(content)} characters)")


def _timeout(ctx: ActionContext, value: Any) -> float | None:
    """``timeout_s`` in seconds, capped at the task's wall-time limit; None: the limit itself."""
    if value is None:
        return None
    wall = ctx.task.limits.wall_time_s
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:
            seconds = math.inf
        if math.isfinite(seconds) and seconds > 0:
            return min(seconds, wall) if wall else seconds
    cap = f" (a longer one is cut to the task's wall_time_s, {wall:g})" if wall else ""
    raise ActionError(f"'timeout_s' must be a finite number of seconds above 0{cap}, not {describe_value(value)}")


class RunCommand(ActionType):
    name = "run_command"
    description = "Run a shell command in the workspace (cwd: a directory of the workspace to run it in)."
    fields_schema = {"properties": {"command": {"type": "string", "minLength": 1},
                                    "timeout_s": {"type": "number", "exclusiveMinimum": 0},
                                    "cwd": {"type": "string"},
                                    "report": {"type": "object", "required": ["format"],
                                               "properties": {"format": {"type": "string"}},
                                               "description": "in a task's execution_steps: the report format that "
                                                              "scores this command and its options (default: the "
                                                              "format that recognises the command, e.g. pytest)"}},
                     "required": ["command"]}
    field_aliases = {"path": "cwd"}  # the name cwd had once

    def execute(self, ctx, action):
        command = action.get("command")
        if not isinstance(command, str) or not command.strip():
            raise ActionError(f"run_command needs 'command' (a non-empty string), not {describe_value(command)}")
        _check_text(command, "command")
        timeout = _timeout(ctx, action.get("timeout_s"))
        cwd = self._cwd(ctx, action)
        run = command if cwd is None else f"cd -- {shlex.quote(cwd)} || exit; {command}"
        result = ctx.sandbox.exec(run, timeout_s=timeout)
        if cwd is not None:
            result = dataclasses.replace(result, command=command)
        return ActionOutcome(result.transcript(), result=result, ok=result.ok)

    @staticmethod
    def _cwd(ctx: ActionContext, action: Mapping[str, Any]) -> str | None:
        """The directory to run in (None: the workspace root), from ``cwd`` or its alias ``path``."""
        given = {k: action[k] for k in ("cwd", "path") if action.get(k) is not None}
        if len(given) == 2 and given["cwd"] != given["path"]:
            raise ActionError("give the directory as 'cwd' only ('path' is its old name, and they differ)")
        if not given:
            return None
        field, value = next(iter(given.items()))
        full = clean_path(ctx, value, field, directory=True)
        return None if full == ctx.task.root else full


class ReadFile(ActionType):
    name = "read_file"
    description = "Show a file of the workspace."
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1}}, "required": ["path"]}

    def execute(self, ctx, action):
        path = _path(ctx, action)
        rel = ctx.task.relpath(path)
        try:
            data = ctx.sandbox.read_file(path)
        except FileNotFoundError:
            raise ActionError(f"no such file: {rel}") from None
        except IsADirectoryError:
            raise ActionError(f"{rel} is a directory; use list_files") from None
        except OSError as exc:
            raise _os_error(f"cannot read {rel}", exc) from None
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
        except OSError as exc:
            raise _os_error(f"cannot list {ctx.task.relpath(path) or '.'}", exc) from None
        return ActionOutcome("\n".join(files) if files else "(no files)")


# --------------------------------------------------------------------------- apply_patch

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclasses.dataclass
class Hunk:
    start: int  # the old side's first line (1-based; the line after which to insert, when it is empty)
    old: list[str]
    new: list[str]


@dataclasses.dataclass
class FilePatch:
    old: str | None  # None: /dev/null (the file is created)
    new: str | None  # None: /dev/null (the file is deleted)
    hunks: list[Hunk]


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _number(text: str | None, header: str) -> int:
    if text is None:
        return 1
    if len(text) > 9:
        raise ActionError(f"the hunk header {describe_value(header)} has a line number past 999999999")
    return int(text)


def parse_unified_diff(patch: str) -> list[FilePatch]:
    """The files and hunks of a unified diff (git diff or diff -u), within the patch bounds.

    Lines are split at "\\n" only (a file's other line separators stay text). A hunk ends at the
    first line that is no hunk line, or at a blank line once its header's counts are met and no
    hunk line follows: lines beyond a wrong count are still taken while they look like hunk lines.
    A hunk-like line outside every hunk is refused rather than left out."""
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files: list[FilePatch] = []
    hunks_seen, i = 0, 0
    while i < len(lines):
        if not _is_file_header(lines, i):
            i += 1
            continue
        if len(files) == MAX_PATCH_FILES:
            raise ActionError(f"the patch changes more than {MAX_PATCH_FILES} files; apply_patch takes at most "
                              f"{MAX_PATCH_FILES} at a time")
        current = FilePatch(_strip_prefix(lines[i][4:]), _strip_prefix(lines[i + 1][4:]), [])
        files.append(current)
        i += 2
        while i < len(lines) and not _is_file_header(lines, i):
            m = _HUNK.match(lines[i])
            if not m:
                if lines[i].startswith("@@"):
                    raise ActionError(f"the hunk header {describe_value(lines[i])} is not '@@ -l,n +l,n @@'")
                if lines[i][:1] in ("+", "-", " "):
                    raise ActionError(f"the patch has a line outside its hunks: {describe_value(lines[i])} (do the "
                                      "line counts of the hunk header before it fit?)")
                i += 1
                continue
            hunks_seen += 1
            if hunks_seen > MAX_PATCH_HUNKS:
                raise ActionError(f"the patch has more than {MAX_PATCH_HUNKS} hunks; apply_patch takes at most "
                                  f"{MAX_PATCH_HUNKS} at a time")
            header = lines[i]
            start, want_old, want_new = _number(m.group(1), header), _number(m.group(2), header), _number(m.group(4), header)
            old: list[str] = []
            new: list[str] = []
            i += 1
            while i < len(lines) and lines[i][:1] in (" ", "+", "-", "\\", "") and not _is_file_header(lines, i):
                line = lines[i]
                if not line and len(old) >= want_old and len(new) >= want_new:
                    j = i  # blank lines after a complete hunk separate, unless hunk lines follow them
                    while j < len(lines) and not lines[j]:
                        j += 1
                    if not (j < len(lines) and lines[j][:1] in (" ", "+", "-") and not _is_file_header(lines, j)):
                        break
                    old += [""] * (j - i)  # a header's counts were short: they are context lines
                    new += [""] * (j - i)
                    i = j
                    continue
                i += 1
                if line.startswith("\\"):  # "\ No newline at end of file"
                    continue
                tag, text = line[:1] or " ", line[1:]
                if tag != "+":
                    old.append(text)
                if tag != "-":
                    new.append(text)
            if not old and not new:
                raise ActionError(f"the hunk {describe_value(header)} has no lines")
            current.hunks.append(Hunk(start, old, new))
    return files


def _strip_prefix(name: str) -> str | None:
    name = name.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    return name[2:] if name[:2] in ("a/", "b/") else name


def _find(lines: list[str], old: list[str], want: int, lo: int, index: Mapping[str, list[int]],
          budget: list[int]) -> int | None:
    """The start of *old* in *lines* at or after *lo*, nearest to *want* (the earlier on a tie).

    Only the places of old's rarest line are tried, nearest first, so a hunk with one distinctive
    line costs a few comparisons whatever the file's size; every comparison is charged to
    *budget*, and a search that spends it is refused."""
    m = len(old)
    hi = len(lines) - m
    if hi < lo:
        return None
    want = min(max(want, lo), hi)
    if not old:
        return want
    k = min(range(m), key=lambda j: len(index.get(old[j], ())))
    places = index.get(old[k], [])
    right = bisect.bisect_left(places, want + k)
    left = right - 1
    first, last = old[0], old[-1]
    while True:
        p_right = places[right] - k if right < len(places) and places[right] - k <= hi else None
        p_left = places[left] - k if left >= 0 and places[left] - k >= lo else None
        if p_right is None and p_left is None:
            return None
        if p_left is None or (p_right is not None and p_right - want < want - p_left):
            p, right = p_right, right + 1
        else:
            p, left = p_left, left - 1
        budget[0] -= 2
        if lines[p] == first and lines[p + m - 1] == last:
            budget[0] -= m
            if budget[0] >= 0 and lines[p:p + m] == old:
                return p
        if budget[0] < 0:
            raise ActionError(f"patch refused: finding its hunks took more than {MAX_PATCH_WORK} line comparisons "
                              "(their lines occur too often in the file); give more distinctive context lines, or "
                              "use overwrite_file")


def apply_hunks(text: str, hunks: list[Hunk], name: str, budget: list[int] | None = None) -> str:
    """*text* with *hunks* applied: each hunk at the place nearest to its line number (shifted as
    far as the hunk before it was), after the hunk before it. All or nothing."""
    budget = budget if budget is not None else [MAX_PATCH_WORK]
    lines = text.split("\n") if text else []
    if text.endswith("\n"):
        lines.pop()
    if len(lines) > MAX_PATCH_TARGET_LINES:
        raise ActionError(f"{name} has {len(lines)} lines; apply_patch edits files of at most {MAX_PATCH_TARGET_LINES} "
                          "lines (use run_command for larger ones)")
    if "\r" not in text:  # a patch that came with CRLF line ends, for a file without them
        hunks = [Hunk(h.start, [l.removesuffix("\r") for l in h.old], [l.removesuffix("\r") for l in h.new])
                 for h in hunks]
    wanted = {line for h in hunks for line in h.old}
    index: dict[str, list[int]] = {}
    if wanted:
        for i, line in enumerate(lines):
            if line in wanted:
                index.setdefault(line, []).append(i)
    out: list[str] = []
    done, drift = 0, 0  # lines[:done] are settled; how far the last hunk was from its line number
    for hunk in hunks:
        base = hunk.start if not hunk.old else max(hunk.start - 1, 0)
        pos = _find(lines, hunk.old, base + drift, done, index, budget)
        if pos is None:
            raise ActionError(f"patch does not apply to {name}: hunk at line {hunk.start} does not match the file"
                              + (" after the hunk before it" if done else ""))
        out += lines[done:pos]
        out += hunk.new
        done, drift = pos + len(hunk.old), pos - base
    out += lines[done:]
    return "\n".join(out) + ("\n" if (text.endswith("\n") or not text) and out else "")


class ApplyPatch(ActionType):
    name = "apply_patch"
    description = ("Apply a unified diff (as made by git diff or diff -u) to the workspace: all of it or, if a hunk "
                   "does not apply, nothing.")
    fields_schema = {"properties": {"patch": {"type": "string", "minLength": 1}}, "required": ["patch"]}

    def execute(self, ctx, action):
        patch = action.get("patch")
        if not isinstance(patch, str) or not patch:
            raise ActionError(f"apply_patch needs 'patch' (a unified diff), not {describe_value(patch)}")
        if len(patch) > MAX_PATCH_CHARS:
            raise ActionError(f"the patch has {len(patch)} characters; apply_patch takes at most {MAX_PATCH_CHARS} "
                              "(split it, or use overwrite_file)")
        _encode(patch, "patch")
        files = parse_unified_diff(patch)
        if not files:
            raise ActionError("no file headers ('--- a/x' / '+++ b/x') found in the patch")
        limit, budget = _max_file_bytes(ctx), [MAX_PATCH_WORK]
        state: dict[str, str | None] = {}  # path -> its content once patched (None: deleted)
        for fp in files:  # everything is checked and applied in memory first: a bad patch changes nothing
            if fp.old is None and fp.new is None:
                raise ActionError("a file of the patch is /dev/null on both sides")
            names = [n for n in (fp.old, fp.new) if n is not None]
            if any(not n for n in names):
                raise ActionError("a file header of the patch names no file ('--- a/x' / '+++ b/x')")
            old, new = (None if n is None else clean_path(ctx, n, "the patch's file") for n in (fp.old, fp.new))
            target = new or old
            rel = ctx.task.relpath(target)
            if new is not None:
                _refuse_directory(ctx, target, "the patch's file")
                _refuse_file_parent(ctx, target, "the patch's file")
            if old is None:
                self._must_be_absent(ctx, target, state)
                current = ""
            else:
                source = old if (old in state or new is None or new == old) else self._existing(ctx, old, new, state)
                current = self._current(ctx, source, state)
            if new is None:
                state[old] = None
                continue
            if not fp.hunks:
                raise ActionError(f"the patch has no hunks ('@@ -l,n +l,n @@' lines) for {rel}")
            result = apply_hunks(current, fp.hunks, rel, budget)
            size = len(result.encode())
            if size > limit:
                raise ActionError(f"{rel} would hold {size} bytes once patched; the task's limits.max_file_size_mb "
                                  f"allows at most {limit >> 20} MB")
            state[target] = result
        for path, content in state.items():
            try:
                if content is None:
                    ctx.sandbox.remove(path)
                else:
                    ctx.sandbox.write_file(path, content.encode())
            except OSError as exc:
                raise _os_error(f"cannot write {ctx.task.relpath(path)!r}", exc) from None
        return ActionOutcome("patched " + ", ".join(ctx.task.relpath(p) for p in state))

    @staticmethod
    def _current(ctx: ActionContext, path: str, state: Mapping[str, str | None]) -> str:
        rel = ctx.task.relpath(path)
        if path in state:
            if state[path] is None:
                raise ActionError(f"patch modifies {rel}, which it deletes before")
            return state[path]
        try:
            data = ctx.sandbox.read_file(path)
        except FileNotFoundError:
            raise ActionError(f"patch modifies {rel}, which does not exist") from None
        except IsADirectoryError:
            raise ActionError(f"{rel} is a directory; a patch edits files") from None
        except OSError as exc:
            raise _os_error(f"cannot patch {rel} (apply_patch edits regular text files)", exc) from None
        if len(data) > MAX_PATCH_TARGET_BYTES:
            raise ActionError(f"{rel} has {len(data)} bytes; apply_patch edits files of at most "
                              f"{MAX_PATCH_TARGET_BYTES} bytes (use run_command for larger ones)")
        try:
            return data.decode()
        except UnicodeDecodeError as exc:
            raise ActionError(f"{rel} is not UTF-8 text (byte {exc.start} is not); apply_patch edits text files "
                              "only") from None

    @staticmethod
    def _existing(ctx: ActionContext, old: str, new: str, state: Mapping[str, str | None]) -> str:
        """Which file a patch from *old* to *new* (two names, as diff -u x.orig x writes) edits:
        *old* if it exists, else *new*."""
        if new in state:
            return new
        try:
            ctx.sandbox.read_file(old)
        except FileNotFoundError:
            return new
        except OSError:
            pass
        return old

    @staticmethod
    def _must_be_absent(ctx: ActionContext, path: str, state: Mapping[str, str | None]) -> None:
        rel = ctx.task.relpath(path)
        if path in state:
            if state[path] is not None:
                raise ActionError(f"patch creates {rel}, which it already wrote")
            return
        try:
            ctx.sandbox.read_file(path)
        except FileNotFoundError:
            return
        except OSError:
            pass
        raise ActionError(f"patch creates {rel}, which already exists (a patch for it starts with '--- a/{rel}')")


class Submit(ActionType):
    name = "submit"
    description = "End the episode; the task's evaluation then scores the workspace."
    fields_schema = {"properties": {}}

    def execute(self, ctx, action):
        return ActionOutcome("submitted", submit=True)


@agentenv.hookimpl
def agentenv_add_actions(registry) -> None:
    for action in (OverwriteFile(), RunCommand(), ReadFile(), ListFiles(), ApplyPatch(), Submit()):
        registry.add_action(action)
