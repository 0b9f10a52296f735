"""Paths: where agentenv keeps its cache and bundled data, and what a path named by a task may be.

The bottom of the house (beside ``_errors``): every other module may import this one, it imports
none of them. Task documents and task folders are untrusted input: :func:`path_problem` says why a
relative path named by a task could leave the directory it is meant for, and
:func:`read_directory` reads a task's directory without following links out of the task folder.
Protected-path globs (:func:`matches_any`) are matched here too, the same way everywhere.
"""

from __future__ import annotations

import errno
import functools
import os
import posixpath
import re
import stat
from typing import Iterable, Iterator

MAX_NAME_BYTES = 255  # one path component (NAME_MAX on Linux)
MAX_PATH_BYTES = 4000  # below PATH_MAX, leaving room for the cache directory it is joined to
SKIP_DIRS = ("__pycache__", ".pytest_cache")

# JSON Schema patterns (the same in ECMA-262 and Python's re) for the paths a task document names.
_SEGMENT = r"(?!\.\.?(?:/|$))[^/\x00]+"  # a component: not empty, '.' or '..'; no '/' or NUL
#: a relative path strictly inside a directory: inline file keys, an sdist's top directory
SAFE_RELATIVE_PATTERN = rf"^{_SEGMENT}(?:/{_SEGMENT})*$"
#: an absolute sandbox path without '.', '..' or empty components (one trailing '/' allowed)
SAFE_ROOT_PATTERN = rf"^(?:/{_SEGMENT})+/?$"
#: not absolute, no '..' component, no NUL: a task's directories, protected globs
NO_PARENT_PATTERN = r"^(?!/)(?!(?:[^/]*/)*\.\.(?:/|$))[^\x00]*$"


# --------------------------------------------------------------------------- where things live

def cache_dir() -> str:
    """agentenv's cache (runtimes, workspaces, sdists): ``$AGENTENV_CACHE`` or ``~/.cache/agentenv``."""
    return os.environ.get("AGENTENV_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "agentenv")


def bundled_dir(kind: str) -> str:
    """``tasks`` or ``schemas``: the repository's folder when running from a checkout, else the wheel's copy."""
    package = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.join(os.path.dirname(package), kind)
    if os.path.isdir(checkout) and os.path.exists(os.path.join(os.path.dirname(package), "pyproject.toml")):
        return checkout
    return os.path.join(package, "_bundled", kind)


# --------------------------------------------------------------------------- globs

@functools.lru_cache(maxsize=4096)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A regex for a path glob: ``**/`` spans any number of directories (zero too), ``*`` one name."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")



def matches_any(path: str, patterns: Iterable[str]) -> bool:
    """Whether *path* (relative to the workspace root) matches one of the globs *patterns*."""
    return any(glob_to_regex(p).match(path) for p in patterns)


# --------------------------------------------------------------------------- paths a task names

def path_problem(rel: object) -> str | None:
    """Why *rel* is not a safe relative file path (``None`` when it is).

    Safe: a non-empty string of ``/``-separated components, none of them empty, ``.`` or ``..``, with
    no NUL byte, not absolute, UTF-8 encodable, each component at most 255 bytes. Such a path joined
    below any directory names a file strictly inside it.
    """
    if not isinstance(rel, str):
        return "a path is a string"
    if not rel:
        return "the path is empty"
    if "\0" in rel:
        return "the path contains a NUL byte"
    if rel.startswith("/"):
        return "the path is absolute"
    try:
        size = len(rel.encode("utf-8"))
    except UnicodeEncodeError:
        return "the path is not valid UTF-8 (it holds a lone surrogate)"
    if size > MAX_PATH_BYTES:
        return f"the path is longer than {MAX_PATH_BYTES} bytes"
    for part in rel.split("/"):
        if part == "..":
            return "the path has a '..' component (it would leave the directory)"
        if part == ".":
            return "the path has a '.' component"
        if not part:
            return "the path has an empty component ('//' or a trailing '/')"
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            return f"a component of the path is longer than {MAX_NAME_BYTES} bytes"
    return None


def safe_suggestion(rel: str, root: str | None = None) -> str:
    """The safe relative path closest to *rel* (for "did you mean" fixes); may be ''."""
    text = rel.replace("\0", "")
    if root and (text + "/").startswith(root.rstrip("/") + "/"):
        text = text[len(root.rstrip("/")):]
    return "/".join(p for p in text.split("/") if p not in ("", ".", ".."))


def _open_below(anchor: int, parts: list[str], final_dir: bool) -> int:
    """Open *parts* below the directory fd *anchor* without following any link (OSError ELOOP on one)."""
    fd = os.dup(anchor)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
            if not last or final_dir:
                flags |= os.O_DIRECTORY
            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                raise OSError(errno.ELOOP, "a symbolic link", part)
            if last and not final_dir and not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL, "not a regular file", part)
            nxt = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _read_fd(fd: int) -> bytes:
    chunks = []
    while True:
        block = os.read(fd, 1 << 20)
        if not block:
            return b"".join(chunks)
        chunks.append(block)


def read_directory(task_dir: str, directory: str, contents: bool = True) -> tuple[dict[str, bytes], list[str]]:
    """The files below *directory* (relative to the task folder *task_dir*) and what was refused.

    Returns ``(files, problems)``: relative path -> content (``b""`` for each when *contents* is
    false, for validation), and one message per entry refused, each naming it relative to the task
    folder. Nothing is read through a link out of the task folder:

    * the directory itself and every directory below it are opened component by component without
      following links; a directory that is a symbolic link (wherever it points) is refused, not walked;
    * a symbolic link to a regular file *inside the task folder* is read as the file it points to
      (resolved once, without following further links); a link out of the task folder, a dangling
      link, a link to a link or to a directory is refused;
    * FIFOs, sockets and devices are refused, and never opened.

    ``__pycache__``, ``.pytest_cache`` and ``*.pyc`` are skipped, as before.
    """
    files: dict[str, bytes] = {}
    problems: list[str] = []
    norm = posixpath.normpath(directory.replace(os.sep, "/")) if directory else "."
    if os.path.isabs(norm) or norm == ".." or norm.startswith("../"):
        return files, [f"{directory} is outside the task folder; name a directory inside it, relative to the task file"]
    parts = [] if norm == "." else norm.split("/")
    try:
        anchor = os.open(task_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return files, [f"the task folder {task_dir} cannot be opened: {exc.strerror}"]
    try:
        try:
            top = _open_below(anchor, parts, final_dir=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                where = "/".join(parts[: parts.index(exc.filename) + 1]) if exc.filename in parts else norm
                return files, [f"{where} is a symbolic link; a task's directories are read without following "
                               "links: make it a real directory inside the task folder"]
            return files, [f"{norm} cannot be opened: {exc.strerror}"]
        try:
            for problem in _walk(anchor, top, "" if norm == "." else norm, files, contents, task_dir):
                problems.append(problem)
        finally:
            os.close(top)
    finally:
        os.close(anchor)
    return files, problems


def _walk(anchor: int, top: int, prefix: str, files: dict[str, bytes], contents: bool,
          task_dir: str) -> Iterator[str]:
    errors: list[OSError] = []
    for dirpath, dirnames, filenames, dirfd in os.fwalk(".", follow_symlinks=False, dir_fd=top,
                                                         onerror=errors.append):
        here = posixpath.normpath(dirpath)
        rel_dir = "" if here == "." else here  # relative to the walked directory
        keep = []
        for name in sorted(dirnames):
            if name in SKIP_DIRS:
                continue
            shown = posixpath.join(prefix, rel_dir, name)
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError as exc:
                yield f"{shown} cannot be read: {exc.strerror}"
                continue
            if stat.S_ISLNK(st.st_mode):
                yield (f"{shown} is a symbolic link to a directory ({_target(name, dirfd)!r}); directory links are "
                       "not followed: copy the directory into the task folder instead")
                continue
            keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            if name.endswith(".pyc"):
                continue
            rel = posixpath.join(rel_dir, name)
            shown = posixpath.join(prefix, rel)
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError as exc:
                yield f"{shown} cannot be read: {exc.strerror}"
                continue
            if stat.S_ISLNK(st.st_mode):
                problem, data = _read_link(anchor, task_dir, shown, name, dirfd, contents)
                if problem:
                    yield problem
                else:
                    files[rel] = data
                continue
            if not stat.S_ISREG(st.st_mode):
                yield f"{shown} is not a regular file (a FIFO, socket or device); remove it from the task folder"
                continue
            if not contents:
                files[rel] = b""
                continue
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
            except OSError as exc:
                yield f"{shown} cannot be read: {exc.strerror}"
                continue
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since the stat above
                    yield f"{shown} is not a regular file; remove it from the task folder"
                    continue
                files[rel] = _read_fd(fd)
            finally:
                os.close(fd)
    for exc in errors:
        yield f"{posixpath.join(prefix, str(exc.filename or ''))} cannot be read: {exc.strerror}"


def _target(name: str, dirfd: int) -> str:
    try:
        return os.readlink(name, dir_fd=dirfd)
    except OSError:
        return "?"


def _read_link(anchor: int, task_dir: str, shown: str, name: str, dirfd: int,
               contents: bool) -> tuple[str | None, bytes]:
    """Read the file link *name* points to, when that is a regular file inside the task folder."""
    target = _target(name, dirfd)
    if target.startswith("/"):
        resolved = None
        for base in dict.fromkeys((os.path.realpath(task_dir), os.path.abspath(task_dir))):
            rel = posixpath.relpath(posixpath.normpath(target), base)
            if rel != ".." and not rel.startswith("../"):
                resolved = rel
                break
    else:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(shown), target))
    if resolved is None or resolved == ".." or resolved.startswith("../"):
        return (f"{shown} is a symbolic link to {target!r}, outside the task folder; links are not followed out "
                "of the task folder (the host's file would land in the sandbox): put a copy of the file there "
                "instead"), b""
    try:
        fd = _open_below(anchor, [] if resolved == "." else resolved.split("/"), final_dir=False)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            why = "which does not exist"
        elif exc.errno == errno.ELOOP:
            why = "through another link; only one link is followed"
        elif exc.errno == errno.EISDIR or resolved == ".":
            why = "a directory; directory links are not followed"
        elif exc.errno == errno.EINVAL:
            why = "not a regular file"
        else:
            why = f"which cannot be read: {exc.strerror}"
        return f"{shown} is a symbolic link to {target!r}, {why}: put the file itself there instead", b""
    try:
        return None, _read_fd(fd) if contents else b""
    finally:
        os.close(fd)

