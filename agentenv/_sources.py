"""Workspace files that come from a package registry: a source distribution pinned by version and hash.

A task may say ``"workspace": {"sdist": {"package": "inflection", "version": "0.5.1", "sha256": "..."}}``:
the first time its workspace is built, the sdist is fetched with pip (``pip download --no-deps
--no-binary NAME``), its sha256 checked against the pin, and it is unpacked (refusing absolute
paths, ``..``, links and device files) into ``<cache>/sdists/``. Later builds, in any process, use
the cache; concurrent first builds wait on one file lock. Task files stay small (only the files a
task changes are committed) and the package's own code and tests are exactly the released ones.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import posixpath
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from typing import Any

from ._errors import SourceError
from ._paths import SAFE_RELATIVE_PATTERN, cache_dir, matches_any

log = logging.getLogger("agentenv.sources")
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip", ".tar")


@dataclass(frozen=True)
class Sdist:
    """A source distribution from the package registry, pinned by version and sha256."""

    package: str
    version: str
    sha256: str
    strip: str | None = None  # the archive's top directory; default "<package>-<version>"
    include: tuple[str, ...] = ()  # globs relative to the stripped root; empty: every file

    @property
    def top(self) -> str:
        return self.strip if self.strip is not None else f"{self.package}-{self.version}"

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> "Sdist":
        return cls(doc["package"], str(doc["version"]), doc["sha256"].lower(), doc.get("strip"),
                   tuple(doc.get("include", ())))

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"package": self.package, "version": self.version, "sha256": self.sha256}
        if self.strip is not None:
            doc["strip"] = self.strip
        if self.include:
            doc["include"] = list(self.include)
        return doc


#: a release version as PEP 440 spells one (epochs, local labels): no '/', so never a path
VERSION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+!-]*$"

SDIST_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["package", "version", "sha256"],
    "description": "files of a source distribution from the package registry, fetched once and cached; "
                   "'files' and 'directory' of the same section override them",
    "properties": {
        "package": {"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._-]*$"},
        "version": {"type": "string", "pattern": VERSION_PATTERN,
                    "description": "the pinned release (a version, never a path: it names a cache directory)"},
        "sha256": {"type": "string", "pattern": "^[0-9a-fA-F]{64}$",
                   "description": "sha256 of the sdist archive (pip hash FILE prints it)"},
        "strip": {"type": "string", "pattern": SAFE_RELATIVE_PATTERN,
                  "description": "the archive's top directory (default NAME-VERSION), relative, without '..'"},
        "include": {"type": "array", "items": {"type": "string", "minLength": 1},
                    "description": "globs (relative to the top directory) of the files to take; default all"},
    },
}


def sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def _safe_member(name: str) -> str | None:
    """The member's normalized relative path, or None when it would land outside the target."""
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    norm = posixpath.normpath(name)
    if norm == "." or norm.startswith("../") or norm == "..":
        return None
    return norm


def unpack(archive: str, target: str) -> int:
    """Unpack regular files and directories of *archive* below *target*; links and devices are skipped.

    Raises :class:`SourceError` for a member that would escape *target* (absolute path or ``..``).
    Returns the number of files written.
    """
    count = 0
    if archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                rel = _safe_member(info.filename)
                if rel is None:
                    raise SourceError(f"{archive}: member {info.filename!r} points outside the archive root; refused")
                if info.is_dir():
                    continue
                dest = os.path.join(target, rel)
                os.makedirs(os.path.dirname(dest), exist_ok=True)
                with zf.open(info) as src, open(dest, "wb") as out:
                    shutil.copyfileobj(src, out)
                count += 1
        return count
    try:
        tf = tarfile.open(archive)
    except tarfile.TarError as exc:
        raise SourceError(f"{archive}: not a readable archive: {exc}") from exc
    with tf:
        for member in tf.getmembers():
            rel = _safe_member(member.name)
            if rel is None:
                raise SourceError(f"{archive}: member {member.name!r} points outside the archive root; refused")
            if member.isdir() or not member.isfile():
                continue  # links, devices, FIFOs: a source tree needs none, and a link could point anywhere
            dest = os.path.join(target, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            src = tf.extractfile(member)
            if src is None:
                continue
            with src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out)
            os.chmod(dest, 0o755 if member.mode & 0o111 else 0o644)
            count += 1
    return count


def _download(sdist: Sdist, dest: str) -> str:
    """pip-download the pinned sdist into *dest*; the archive's path."""
    # --no-binary for this package only: its build requirements may come as wheels (much faster)
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", sdist.package, "--no-input",
            "--disable-pip-version-check", "-q", "-d", dest, f"{sdist.package}=={sdist.version}"]
    log.info("fetching %s==%s from the package registry (once; cached)", sdist.package, sdist.version)
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceError(f"could not fetch {sdist.package}=={sdist.version}: {exc}") from exc
    archives = [n for n in os.listdir(dest) if n.endswith(ARCHIVE_SUFFIXES)]
    if out.returncode != 0 or not archives:
        tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-8:])
        raise SourceError(f"could not fetch the source distribution {sdist.package}=={sdist.version} with pip "
                          f"(exit {out.returncode}); is the package registry reachable?\n{tail}")
    return os.path.join(dest, archives[0])


def fetch_sdist(sdist: Sdist, cache: str | None = None, source: str = "<task>") -> str:
    """The unpacked, verified tree of *sdist* (its top directory), fetched on first use and cached.

    *source* names the task file in error messages. A hash mismatch is an error naming the pinned
    and the found digest: the registry served other bytes than the task was made from.
    """
    root = _cache_root(cache)
    final = os.path.join(root, f"{sdist.package}-{sdist.version}-{sdist.sha256[:16]}")
    top = os.path.join(final, "tree", sdist.top)
    if (os.path.dirname(final) != root or _safe_member(sdist.top) != sdist.top
            or not os.path.normpath(top).startswith(os.path.join(final, "tree") + os.sep)):
        raise SourceError(f"{source}: /workspace/sdist: package, version and strip name a release and a directory "
                          f"inside its archive, not a path: {sdist.package!r} {sdist.version!r} {sdist.top!r}")
    stamp = os.path.join(final, ".agentenv-verified")
    if not os.path.exists(stamp):
        with open(final + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one fetcher; the others wait, then find the stamp
            if not os.path.exists(stamp):
                _fetch_into(sdist, final, source)
    if not os.path.isdir(top):
        found = sorted(os.listdir(os.path.join(final, "tree")))
        raise SourceError(f"{source}: /workspace/sdist/strip: the archive of {sdist.package}=={sdist.version} has "
                          f"no top directory {sdist.top!r}; found {found}; set 'strip' to one of them")
    return top


def _cache_root(cache: str | None) -> str:
    if cache is None:
        cache = cache_dir()
    root = os.path.join(cache, "sdists")
    os.makedirs(root, exist_ok=True)
    return root


def pin_sdist(package: str, version: str, cache: str | None = None) -> Sdist:
    """Fetch *package*==*version* once and pin what the registry served (its sha256), caching it.

    For authoring tasks (``agentenv synthesize``): the returned pin goes into the task files, and
    every later build verifies against it.
    """
    root = _cache_root(cache)
    for name in sorted(os.listdir(root)):  # pinned before on this machine: trust the verified cache
        stamp = os.path.join(root, name, ".agentenv-verified")
        if name.startswith(f"{package}-{version}-") and os.path.exists(stamp):
            digest = open(stamp).read().strip()
            tops = os.listdir(os.path.join(root, name, "tree"))
            top = tops[0] if len(tops) == 1 else f"{package}-{version}"
            return Sdist(package, version, digest, None if top == f"{package}-{version}" else top)
    with tempfile.TemporaryDirectory(dir=root, prefix=".pin-") as tmp:
        archive = _download(Sdist(package, version, "0" * 64), tmp)
        digest = sha256_file(archive)
        name = os.path.basename(archive)
        top = name[: -len(next(s for s in ARCHIVE_SUFFIXES if name.endswith(s)))]
        pinned = Sdist(package, version, digest, None if top == f"{package}-{version}" else top)
        final = os.path.join(root, f"{package}-{version}-{digest[:16]}")
        with open(final + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(os.path.join(final, ".agentenv-verified")):
                _fetch_into(pinned, final, f"{package}=={version}", archive=archive)
    fetch_sdist(pinned, cache)  # checks the top directory
    return pinned


def _fetch_into(sdist: Sdist, final: str, source: str, archive: str | None = None) -> None:
    shutil.rmtree(final, ignore_errors=True)
    with tempfile.TemporaryDirectory(dir=os.path.dirname(final), prefix=".fetch-") as tmp:
        if archive is None:
            os.makedirs(os.path.join(tmp, "download"))
            archive = _download(sdist, os.path.join(tmp, "download"))
        digest = sha256_file(archive)
        if digest != sdist.sha256:
            raise SourceError(f"{source}: /workspace/sdist/sha256: {os.path.basename(archive)} has sha256 {digest}, "
                              f"but the task pins {sdist.sha256}; the registry served different bytes. Check the "
                              f"version, or re-pin after reviewing the new archive")
        staging = os.path.join(tmp, "staging")
        unpack(archive, os.path.join(staging, "tree"))
        shutil.copy2(archive, os.path.join(staging, os.path.basename(archive)))
        with open(os.path.join(staging, ".agentenv-verified"), "w") as f:
            f.write(digest + "\n")
        os.rename(staging, final)


def sdist_files(sdist: Sdist, source: str = "<task>", cache: str | None = None) -> dict[str, bytes]:
    """Relative path -> content of the sdist's files that ``include`` selects (every file if empty)."""
    top = fetch_sdist(sdist, cache, source)
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in ("__pycache__", ".pytest_cache"))
        for name in sorted(filenames):
            if name.endswith(".pyc"):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, top).replace(os.sep, "/")
            if sdist.include and not matches_any(rel, sdist.include):
                continue
            with open(full, "rb") as f:
                out[rel] = f.read()
    return out
