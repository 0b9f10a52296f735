"""Pristine workspaces on the host: content-addressed, read-only lower layers for sandboxes.

:func:`materialize` writes a task's files once per content, owned by the sandbox user, and refuses
any path that would land outside the workspace it builds (:func:`agentenv._paths.path_problem`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading

from ._paths import path_problem
from ._sandbox import SANDBOX_UID

_lock = threading.Lock()


def content_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()[:24]


def materialize(files: dict[str, bytes], cache: str) -> str:
    """A directory holding *files*, made once per content (atomically), owned by the sandbox user.

    Raises ValueError, before writing anything, for a path that is not a safe relative path
    (:func:`path_problem`) or that is both a file and a directory: nothing lands outside the workspace.
    """
    for rel in files:
        problem = path_problem(rel)
        if problem:
            raise ValueError(f"refusing to write {rel!r} outside the workspace: {problem}")
    names = set(files)
    for rel in files:
        parent = rel.rpartition("/")[0]
        while parent:
            if parent in names:
                raise ValueError(f"{parent!r} is both a file and the directory of {rel!r}")
            parent = parent.rpartition("/")[0]
    target = os.path.join(cache, "workspaces", content_hash(files))
    if os.path.isdir(target):
        return target
    with _lock:
        if os.path.isdir(target):
            return target
        tmp = f"{target}.tmp-{os.getpid()}-{threading.get_ident()}"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        for rel, data in files.items():
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with open(fd, "wb") as f:
                f.write(data)
            executable = data.startswith(b"#!")
            os.chmod(path, 0o755 if executable else 0o644)
        if os.geteuid() == 0:
            for root, dirs, names in os.walk(tmp):
                os.chown(root, SANDBOX_UID, SANDBOX_UID)
                os.chmod(root, 0o755)
                for name in names:
                    os.chown(os.path.join(root, name), SANDBOX_UID, SANDBOX_UID)
        try:
            os.rename(tmp, target)
        except OSError:  # another process won the race: same content, use theirs
            shutil.rmtree(tmp, ignore_errors=True)
        return target
