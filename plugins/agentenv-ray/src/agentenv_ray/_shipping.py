"""Task data and runtimes, prepared once and shipped to each node through Ray's object store.

The driver packs a task's folder (content-addressed: the sha256 of its files) and each runtime it
needs (the built virtual environment, named by its content hash as in agentenv's runtime cache)
into bytes, ``ray.put`` once. A node unpacks each into its own agentenv cache the first time one of
its workers needs it, under the same file lock agentenv's runtime builder takes, and never again:
the object is fetched only when the node lacks it, so every episode after the first on a node
starts from local files. Nodes are assumed alike (same interpreters at the same paths, as in one
container image); a runtime unpacked under another cache path is relocated (its scripts name
their own path), as the builder itself does after building in a temporary directory.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import shutil
import tarfile
from dataclasses import dataclass
from typing import Any

import agentenv

MAX_TASK_FOLDER_BYTES = 256 << 20
_STAMP = "agentenv-runtime.json"
_SKIP_DIRS = ("__pycache__", ".pytest_cache")
#: one line per thing unpacked on a node ("task <digest>" / "runtime <name>"): proof of once per node
PREPARED_LOG = "agentenv-ray-prepared.log"


class ShippingError(agentenv.InfrastructureError):
    """Task data or a runtime could not be packed, shipped or unpacked."""


def cache_root() -> str:
    """The agentenv cache of this process (``AGENTENV_CACHE``, else ``~/.cache/agentenv``)."""
    return os.environ.get("AGENTENV_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "agentenv")


# --------------------------------------------------------------------------- task folders

@dataclass(frozen=True)
class TaskFolder:
    """A task's folder as bytes: ``files`` maps relative paths to contents; ``task_file`` is the
    task document's path in it."""

    digest: str
    task_file: str
    files: dict[str, bytes]


def pack_task_folder(task: Any) -> TaskFolder:
    """The folder of *task*'s document (regular files only; links and caches are left out)."""
    source = getattr(task, "source", None)
    if not source or source == "<memory>" or not os.path.isfile(source):
        raise ShippingError(f"task {task.task_id} was not loaded from a file, so its folder cannot be shipped; "
                            "load it with agentenv.load_task(PATH)")
    folder = os.path.dirname(os.path.abspath(source))
    files: dict[str, bytes] = {}
    total = 0
    for root, dirs, names in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        for name in sorted(names):
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                data = f.read()
            total += len(data)
            if total > MAX_TASK_FOLDER_BYTES:
                raise ShippingError(f"{folder}: the task folder is larger than {MAX_TASK_FOLDER_BYTES >> 20} MiB; "
                                    "keep large data out of task folders")
            files[os.path.relpath(path, folder)] = data
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + str(len(files[rel])).encode() + b"\0" + files[rel])
    return TaskFolder(digest.hexdigest()[:24], os.path.relpath(os.path.abspath(source), folder), files)


def unpack_task_folder(digest: str, fetch: Any, root: str | None = None) -> str:
    """The local folder of task folder *digest*, unpacked from ``fetch()`` (a TaskFolder) if absent."""
    root = root or cache_root()
    dest = os.path.join(root, "ray-tasks", digest)
    if os.path.isdir(dest):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with _locked(dest + ".lock"):
        if os.path.isdir(dest):
            return dest
        folder: TaskFolder = fetch()
        tmp = f"{dest}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        for rel, data in folder.files.items():
            path = os.path.normpath(os.path.join(tmp, rel))
            if not path.startswith(tmp + os.sep):
                raise ShippingError(f"task folder {digest}: path {rel!r} leaves the folder")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
        os.rename(tmp, dest)
        _log_prepared(root, f"task {digest}")
    return dest


# --------------------------------------------------------------------------- runtimes

@dataclass(frozen=True)
class RuntimeArchive:
    """A built runtime (virtual environment) as a tar: ``name`` is its content-addressed directory
    name in the runtime cache, ``built_at`` the path it was built at (for relocation)."""

    name: str
    built_at: str
    tar: bytes


def runtime_dir_of(task: Any) -> str | None:
    """The built environment directory *task*'s runtime mounts (built now if needed), or None when
    the runtime has nothing built (a bare interpreter)."""
    runtime = agentenv.registry().runtime_for(task.environment.runtime).prepare(task.environment)
    for mount in runtime.mounts:
        if os.path.exists(os.path.join(mount, _STAMP)):
            return mount
    return None


def pack_runtime(env_dir: str) -> RuntimeArchive:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(env_dir, arcname=os.path.basename(env_dir))
    return RuntimeArchive(os.path.basename(env_dir), env_dir, buffer.getvalue())


def install_runtime(name: str, fetch: Any, root: str | None = None) -> str:
    """Make runtime *name* present in this node's cache, unpacked from ``fetch()`` (a
    RuntimeArchive) when it is not; the builder's own lock keeps a concurrent build out."""
    root = root or cache_root()
    dest = os.path.join(root, "runtimes", name)
    if os.path.exists(os.path.join(dest, _STAMP)):
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with _locked(dest + ".lock"):
        if os.path.exists(os.path.join(dest, _STAMP)):
            return dest
        archive: RuntimeArchive = fetch()
        tmp = f"{dest}.tmp-ray-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with tarfile.open(fileobj=io.BytesIO(archive.tar), mode="r") as tar:
            tar.extractall(tmp, filter="tar")
        unpacked = os.path.join(tmp, name)
        _relocate(unpacked, archive.built_at, dest)
        shutil.rmtree(dest, ignore_errors=True)  # a half-built directory without its stamp
        os.rename(unpacked, dest)
        shutil.rmtree(tmp, ignore_errors=True)
        _log_prepared(root, f"runtime {name}")
    return dest


def _relocate(tree: str, old: str, new: str) -> None:
    """Rewrite *old* into *new* inside the scripts and text files of *tree* (shebangs, pyvenv.cfg,
    RECORD files); compiled files do not name their path in a way that matters to run."""
    if old == new:
        return
    before, after = old.encode(), new.encode()
    for root, _, names in os.walk(tree):
        for name in names:
            path = os.path.join(root, name)
            if os.path.islink(path) or name.endswith((".pyc", ".so")):
                continue
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            if before in data:
                mode = os.stat(path).st_mode
                with open(path, "wb") as f:
                    f.write(data.replace(before, after))
                os.chmod(path, mode)
    stamp = os.path.join(tree, _STAMP)
    if os.path.exists(stamp):
        with open(stamp) as f:
            json.load(f)  # still valid JSON after the rewrite


class _locked:
    def __init__(self, path: str):
        self.path = path

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _log_prepared(root: str, line: str) -> None:
    with open(os.path.join(root, PREPARED_LOG), "a") as f:
        f.write(line + "\n")


def prepared_on(root: str) -> list[str]:
    """What was unpacked into the cache at *root*, one line per preparation."""
    path = os.path.join(root, PREPARED_LOG)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line for line in f.read().splitlines() if line]
