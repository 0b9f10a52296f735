"""Images: a runtime base imported offline, then a dependency layer per dependency list.

``agentenv/base:<runtime>``
    A root filesystem loaded with ``docker import`` (no registry is needed): built by
    :func:`bootstrap` with ``debootstrap`` from Debian's packages, or any directory the user hands
    in (``--rootfs``). Debian bookworm's ``python3`` is 3.11, so one bookworm tree serves the
    runtimes ``python3``, ``python3.11``, ``shell`` and ``bash``.
``agentenv/deps:<hash>``
    The base plus a virtual environment at ``/opt/agentenv/venv`` holding the task's
    dependencies, and the in-container helper. The tag is the content hash of (base image id,
    sorted dependency list, helper source), so the same dependencies reuse the same layer.
    Containers have no network: wheels are downloaded on the host (``pip download``) and
    installed from a local directory with ``--no-index``.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import logging
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Any, Callable, Iterable

from agentenv import BackendUnavailable, RuntimeBuildError

from ._sdk import docker

log = logging.getLogger("agentenv.docker.images")
BASE_REPO = "agentenv/base"
DEPS_REPO = "agentenv/deps"
BOOKWORM_RUNTIMES = ("python3", "python3.11", "shell", "bash")
DEBIAN_PACKAGES = ("python3", "python3-venv")
VENV = "/opt/agentenv/venv"
HELPER = "/opt/agentenv/helper.py"
_HELPER_SRC = os.path.join(os.path.dirname(__file__), "_helper.py")
LABEL = "agentenv"
OWNER_LABEL = "agentenv.owner"
HOST_LABEL = "agentenv.host"


def owner_labels() -> dict[str, str]:
    return {LABEL: "1", OWNER_LABEL: str(os.getpid()), HOST_LABEL: os.uname().nodename}


def connect(timeout: int = 60) -> docker.DockerClient:
    """A client for the daemon named by ``DOCKER_HOST`` (default: the local socket)."""
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except Exception as exc:  # DockerException, requests' ConnectionError, FileNotFoundError...
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        raise BackendUnavailable(
            f"cannot reach the Docker daemon at {where} ({type(exc).__name__}: {exc}); start it "
            "(`dockerd --storage-driver=overlay2 &` or `systemctl start docker`) or point DOCKER_HOST "
            "at a running one") from exc


def base_tag(runtime: str) -> str:
    return f"{BASE_REPO}:{runtime}"


def helper_hash() -> str:
    return hashlib.sha256(open(_HELPER_SRC, "rb").read()).hexdigest()[:12]


# --------------------------------------------------------------------------- base images

def bootstrap(client: docker.DockerClient, runtime: str, *, rootfs: str | None = None,
              mirror: str = "http://deb.debian.org/debian", suite: str = "bookworm",
              progress: Callable[[str], None] = print) -> list[str]:
    """Create ``agentenv/base:<runtime>`` offline; returns the tags made.

    Without *rootfs*, builds a minimal Debian tree with debootstrap (root, ~1-2 minutes) and tags
    it for every runtime that tree serves. With *rootfs*, imports that directory as the base of
    *runtime* (it must hold ``/usr/bin/python3`` and ``/bin/sh``).
    """
    if rootfs is None and runtime not in BOOKWORM_RUNTIMES:
        raise RuntimeBuildError(
            f"runtime {runtime!r}: Debian {suite}'s python3 is 3.11, so a debootstrap tree serves only "
            f"{', '.join(BOOKWORM_RUNTIMES)}; for {runtime} build a root filesystem holding that interpreter "
            f"at /usr/bin/python3 and run `agentenv images bootstrap {runtime} --rootfs DIR`")
    tmp = tempfile.mkdtemp(prefix="agentenv-rootfs-")
    try:
        if rootfs is None:
            if shutil.which("debootstrap") is None:
                raise RuntimeBuildError("debootstrap is not installed: `apt-get install -y debootstrap`, or "
                                        "pass --rootfs DIR with a root filesystem you built")
            tree = os.path.join(tmp, "root")
            progress(f"debootstrap {suite} (minbase + {', '.join(DEBIAN_PACKAGES)}) into {tree} ...")
            started = time.monotonic()
            out = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(DEBIAN_PACKAGES)}",
                                  suite, tree, mirror], capture_output=True, text=True)
            if out.returncode != 0:
                tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-15:])
                raise RuntimeBuildError(f"debootstrap failed (exit {out.returncode}); is {mirror} reachable "
                                        f"and are you root?\n{tail}")
            progress(f"  done in {time.monotonic() - started:.0f} s")
            for junk in ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man",
                         "usr/share/info", "usr/share/locale"):
                path = os.path.join(tree, junk)
                if os.path.isdir(path):
                    for name in os.listdir(path):
                        full = os.path.join(path, name)
                        shutil.rmtree(full) if os.path.isdir(full) and not os.path.islink(full) else os.unlink(full)
            tags = list(BOOKWORM_RUNTIMES)
        else:
            tree = rootfs
            if not os.path.exists(os.path.join(tree, "usr/bin/python3")):
                raise RuntimeBuildError(f"--rootfs {tree}: no usr/bin/python3 in it; the helper that runs "
                                        "commands in the container needs Python 3")
            tags = [runtime]
        archive = os.path.join(tmp, "rootfs.tar")
        progress(f"packing {tree} ...")
        subprocess.run(["tar", "--numeric-owner", "-C", tree, "-cf", archive, "."], check=True)
        progress(f"docker import -> {base_tag(tags[0])}")
        changes = [f"LABEL {LABEL}=1 agentenv.kind=base agentenv.runtimes={','.join(tags)}",
                   "ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8"]
        try:
            client.api.import_image_from_file(archive, repository=BASE_REPO, tag=tags[0], changes=changes)
            for alias in tags[1:]:
                client.api.tag(base_tag(tags[0]), BASE_REPO, alias)
        except docker.errors.DockerException as exc:
            raise RuntimeBuildError(f"docker import of {tree} failed: {exc}") from exc
        made = [base_tag(t) for t in tags]
        progress("made " + ", ".join(made))
        return made
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def base_image(client: docker.DockerClient, runtime: str) -> Any:
    try:
        return client.images.get(base_tag(runtime))
    except docker.errors.ImageNotFound:
        raise BackendUnavailable(
            f"no base image {base_tag(runtime)} for runtime {runtime!r}: no registry is used, so create it "
            f"offline with `agentenv images bootstrap {runtime}`") from None
    except docker.errors.DockerException as exc:
        raise BackendUnavailable(f"cannot inspect {base_tag(runtime)}: {exc}") from exc


# --------------------------------------------------------------------------- dependency layers

def deps_tag(base_id: str, deps: Iterable[str]) -> str:
    key = json.dumps([base_id, sorted(deps), helper_hash()]).encode()
    return f"{DEPS_REPO}:{hashlib.sha256(key).hexdigest()[:16]}"


def deps_image(client: docker.DockerClient, runtime: str, deps: Iterable[str],
               cache: str | None = None) -> Any:
    """The image for *runtime* + *deps*, built once (a file lock keeps concurrent builders apart)."""
    deps = sorted(deps)
    base = base_image(client, runtime)
    tag = deps_tag(base.id, deps)
    try:
        return client.images.get(tag)
    except docker.errors.ImageNotFound:
        pass
    lock_dir = cache or os.path.join(tempfile.gettempdir(), "agentenv-docker")
    os.makedirs(lock_dir, exist_ok=True)
    with open(os.path.join(lock_dir, tag.replace("/", "_").replace(":", "_") + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return client.images.get(tag)
        except docker.errors.ImageNotFound:
            pass
        log.info("building %s: %s + %s (once)", tag, base_tag(runtime), deps or "no dependencies")
        _build_deps(client, base, runtime, deps, tag)
        return client.images.get(tag)


def _probe_python(client: docker.DockerClient, image: str) -> str:
    out = client.containers.run(image, ["python3", "-I", "-c", "import sys; print(sys.version.split()[0])"],
                                network_mode="none", remove=True, labels=owner_labels())
    return out.decode().strip()


def _build_deps(client: docker.DockerClient, base: Any, runtime: str, deps: list[str], tag: str) -> None:
    py = _probe_python(client, base.id)
    with tempfile.TemporaryDirectory(prefix="agentenv-wheels-") as wheels:
        if deps:
            cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "-d", wheels]
            host_py = ".".join(map(str, sys.version_info[:2]))
            if host_py != ".".join(py.split(".")[:2]):  # another interpreter: only wheels fit
                cmd += ["--python-version", ".".join(py.split(".")[:2]), "--only-binary=:all:"]
            out = subprocess.run(cmd + deps, capture_output=True, text=True, timeout=1800)
            if out.returncode != 0:
                tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-15:])
                raise RuntimeBuildError(f"pip download {' '.join(deps)} failed (exit {out.returncode}):\n{tail}")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(wheels, arcname="opt/agentenv-build/wheels")
            tar.add(_HELPER_SRC, arcname="opt/agentenv-build/helper.py")
        listing = ("import json, sys, importlib.metadata as m; print(json.dumps({'python': sys.version.split()[0], "
                   "'packages': dict(sorted({(d.metadata['Name'] or '?').lower(): d.version "
                   "for d in m.distributions()}.items()))}))")
        install = (f"{VENV}/bin/python -m pip install -q --no-index --disable-pip-version-check "
                   f"--find-links /opt/agentenv-build/wheels {' '.join(shlex.quote(d) for d in deps)}") if deps else "true"
        script = (f"set -e; python3 -m venv {VENV}; {install}; cp /opt/agentenv-build/helper.py {HELPER}; "
                  f"{VENV}/bin/python -I -c {shlex.quote(listing)} > /opt/agentenv/packages.json; "
                  "rm -rf /opt/agentenv-build; chmod -R a+rX /opt/agentenv")
        try:
            box = client.containers.create(base.id, ["/bin/sh", "-c", script], network_mode="none",
                                           labels={**owner_labels(), "agentenv.kind": "build"})
        except docker.errors.DockerException as exc:
            raise RuntimeBuildError(f"cannot create the build container for {tag}: {exc}") from exc
        try:
            box.put_archive("/", buf.getvalue())
            box.start()
            status = box.wait(timeout=1800)
            if status.get("StatusCode") != 0:
                logs = box.logs().decode(errors="replace").strip().splitlines()[-15:]
                raise RuntimeBuildError(f"installing {' '.join(deps)} into {tag} failed "
                                        f"(exit {status.get('StatusCode')}):\n" + "\n".join(logs))
            repo, _, name = tag.partition(":")
            changes = [f"ENV PATH={VENV}/bin:/usr/local/bin:/usr/bin:/bin VIRTUAL_ENV={VENV} LANG=C.UTF-8",
                       f"LABEL {LABEL}=1 agentenv.kind=deps agentenv.runtime={runtime} "
                       f"agentenv.dependencies={shlex.quote(json.dumps(deps))} agentenv.python={py}",
                       f'CMD ["python3", "-I", "-S", "{HELPER}"]']
            box.commit(repository=repo, tag=name, changes=changes)
        except docker.errors.DockerException as exc:
            raise RuntimeBuildError(f"building {tag} failed: {exc}") from exc
        finally:
            try:
                box.remove(force=True)
            except docker.errors.DockerException:
                pass


def packages_of(client: docker.DockerClient, image: Any) -> dict[str, Any]:
    """What the dependency layer holds, read from the image itself (a short container run)."""
    out = client.containers.run(image.id, ["cat", "/opt/agentenv/packages.json"], network_mode="none",
                                remove=True, labels=owner_labels())
    return json.loads(out)


# --------------------------------------------------------------------------- list / prune

def list_images(client: docker.DockerClient) -> list[dict[str, Any]]:
    rows = []
    for image in client.images.list(filters={"label": f"{LABEL}=1"}):
        labels = image.labels or {}
        rows.append({"tags": sorted(image.tags), "id": image.id, "kind": labels.get("agentenv.kind", "?"),
                     "runtime": labels.get("agentenv.runtime") or labels.get("agentenv.runtimes", ""),
                     "dependencies": json.loads(labels.get("agentenv.dependencies", "[]")),
                     "size_mb": round(image.attrs.get("Size", 0) / 1e6, 1), "created": image.attrs.get("Created")})
    return sorted(rows, key=lambda r: (r["kind"], r["tags"]))


def prune(client: docker.DockerClient, include_base: bool = False) -> list[str]:
    """Remove the dependency layers (and the base images with *include_base*) that no container uses."""
    used = {c.attrs.get("Image") for c in client.containers.list(all=True)}
    removed = []
    for row in list_images(client):
        if row["kind"] == "base" and not include_base:
            continue
        if row["id"] in used:
            continue
        for tag in row["tags"] or [row["id"]]:
            try:
                client.images.remove(tag, noprune=False)
                removed.append(tag)
            except docker.errors.ImageNotFound:
                pass
            except docker.errors.APIError as exc:
                log.warning("could not remove %s: %s", tag, exc)
    return removed
