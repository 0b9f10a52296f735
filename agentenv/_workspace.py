"""Pristine workspaces on the host: content-addressed, read-only lower layers for sandboxes."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading

from ._sandbox import SANDBOX_UID

_lock = threading.Lock()


def content_hash(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()[:24]


def materialize(files: dict[str, bytes], cache: str) -> str:
    """A directory holding *files*, made once per content (atomically), owned by the sandbox user."""
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
            with open(path, "wb") as f:
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
