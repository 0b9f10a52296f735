"""The ``docker`` sandbox backend: one container per sandbox, taken from a warm pool.

Each container runs the helper (``_helper.py``, a bootstrap that runs agentenv's in-sandbox request
server, ``agentenv.sandbox_server_source()``) as pid 1 from the task's dependency image, as
user 65534, with no network, a read-only root, tmpfs at the task's root and at /tmp, the task's
memory / pids / CPU limits, ``no-new-privileges`` and every capability dropped. The backend talks
to the helper over the container's attached stdin/stdout, so an exec or a file operation costs a
round trip through the daemon's stream, not a ``docker exec`` (~100 ms).

Warm pool: for each recently used configuration (image, workspace, root, limits) a background
thread keeps ``pool_size`` containers started, attached and holding the pristine workspace;
``open`` takes one (a ping proves it is alive) and ``close`` recycles it (removed, never reused,
so nothing leaks between episodes). Wall time is enforced twice: the helper kills every process
of the container at the deadline, and the backend kills the whole container if the helper has not
answered a few seconds later.

Every container carries the labels ``agentenv=1``, ``agentenv.owner=<pid>`` and
``agentenv.host``; :func:`reap_orphans` (run when a backend starts, and by ``agentenv sandbox gc``)
removes those whose owner process is gone.
"""

from __future__ import annotations

import collections
import io
import json
import logging
import os
import resource
import socket
import struct
import tarfile
import threading
import time
from typing import Any, Mapping, Sequence

from agentenv import (
    AgentSandbox,
    Availability,
    BackendUnavailable,
    ExecResult,
    InfrastructureError,
    Isolation,
    SandboxBackend,
    SandboxError,
    SandboxRequest,
    sandbox_server_source,
)
from agentenv._sandbox_server import CONTAINER_UID, OOM_FILES, CpuUse, MemoryGrowth, oom_kills

from . import images
from ._sdk import docker

log = logging.getLogger("agentenv.sandbox.docker")
SANDBOX_UID = CONTAINER_UID  # what commands run as; the helper keeps root as its real uid
HEADER = struct.Struct("!II")
_GRACE_S = 5.0  # past a command's deadline before the container itself is killed
_OP_TIMEOUT_S = 60.0
POOL_ENV = "AGENTENV_DOCKER_POOL"
_SERVER_SOURCE = sandbox_server_source().encode()
CPUS_ENV = "AGENTENV_DOCKER_CPUS"


def reap_orphans(client: docker.DockerClient, everything: bool = False) -> list[str]:
    """Remove agentenv containers whose owner process (on this host) is dead; with *everything*,
    every agentenv container of other owners too. Returns the names removed."""
    host = os.uname().nodename
    removed = []
    # (the listing's own fields: inspecting each container raised NotFound for one removed meanwhile)
    for c in client.api.containers(all=True, filters={"label": f"{images.LABEL}=1"}):
        labels = c.get("Labels") or {}
        name = ((c.get("Names") or [""])[0] or c["Id"][:12]).lstrip("/")
        owner = labels.get(images.OWNER_LABEL, "")
        if owner == str(os.getpid()):
            continue
        orphan = labels.get(images.HOST_LABEL) == host and owner.isdigit() and not os.path.exists(f"/proc/{owner}")
        if orphan or everything:
            try:
                client.api.remove_container(c["Id"], force=True)
                removed.append(name)
            except docker.errors.NotFound:
                pass
            except docker.errors.APIError as exc:
                log.warning("could not remove %s: %s", name, exc)
    return removed


class _Stream:
    """Length-prefixed messages over a hijacked attach connection (stdout comes multiplexed)."""

    def __init__(self, raw: Any) -> None:
        self._raw = raw  # keep the SocketIO (and the HTTP response it holds) alive
        self.sock: socket.socket = getattr(raw, "_sock", raw)
        self._buf = bytearray()

    def send(self, header: dict, body: bytes = b"") -> None:
        data = json.dumps(header).encode()
        self.sock.sendall(HEADER.pack(len(data), len(body)) + data + body)

    def _payload(self, n: int) -> bytes:
        while len(self._buf) < n:
            frame = self._exact(8)
            size = struct.unpack(">I", frame[4:])[0]
            chunk = self._exact(size)
            if frame[0] == 1:  # stdout; stderr is not attached
                self._buf += chunk
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def _exact(self, n: int) -> bytes:
        parts, left = [], n
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise EOFError("the container's stream closed")
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)

    def recv(self) -> tuple[dict, bytes]:
        hlen, blen = HEADER.unpack(self._payload(HEADER.size))
        header = json.loads(self._payload(hlen))
        return header, self._payload(blen) if blen else b""

    def close(self) -> None:
        for thing in (self.sock, self._raw):
            try:
                thing.close()
            except OSError:
                pass


class _Box:
    """A started container with its helper attached, not yet handed out."""

    def __init__(self, cid: str, name: str, stream: _Stream, key: tuple, cgroups: _Cgroups | None = None) -> None:
        self.cid, self.name, self.stream, self.key = cid, name, stream, key
        # its memory and CPU cgroups, as this host sees them (the container's own are read-only)
        self.cgroups = cgroups or _Cgroups()

    def close(self) -> None:
        self.stream.close()
        self.cgroups.close()


class _Cgroups:
    """A container's cgroup files, opened from this host while it runs: its memory's rise
    (MemoryGrowth), its CPU (CpuUse) and its count of OOM kills (still read as its helper dies)."""

    def __init__(self, memory: str | None = None, cpu: str | None = None) -> None:
        self.memory = MemoryGrowth.open(memory) if memory else None
        self.cpu = CpuUse.open(cpu) if cpu else None
        self.oom_fd = None
        for name in OOM_FILES if memory else ():
            try:
                self.oom_fd = os.open(os.path.join(memory, name), os.O_RDONLY | os.O_CLOEXEC)
                break
            except OSError:
                continue

    def oom_kills(self) -> int | None:
        """The OOM kills its memory cgroup has counted; None once the engine has removed it."""
        try:
            return oom_kills(os.pread(self.oom_fd, 4096, 0)) if self.oom_fd is not None else None
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        for counter in (self.memory, self.cpu):
            if counter is not None:
                counter.close()
        if self.oom_fd is not None:
            os.close(self.oom_fd)
            self.oom_fd = None


def _cgroup_folder(paths: dict[str, str], controller: str, cid: str) -> str | None:
    """The folder of *controller* (v1) or of the unified hierarchy (v2) among *paths* (a process's
    ``/proc/<pid>/cgroup``), if it is named for the container *cid*."""
    path = next((p for controllers, p in paths.items() if controller in controllers.split(",")), None)
    folder = (os.path.join("/sys/fs/cgroup", controller, path.lstrip("/")) if path is not None
              else os.path.join("/sys/fs/cgroup", paths.get("", "").lstrip("/")) if "" in paths else None)
    return folder if folder is not None and cid in folder else None


def _cgroups(api: Any, cid: str, memory_mb: int) -> _Cgroups:
    """The container's memory and CPU cgroups seen from this host (root, the engine's own host):
    from its first process's ``/proc/<pid>/cgroup``, and only folders named for this container (an
    engine elsewhere gives a pid of its own host). On v1 the memory cgroup also gets the socket
    buffer limit that makes the kernel count them (see MemoryGrowth; Docker does not set it)."""
    try:
        pid = int(api.inspect_container(cid)["State"]["Pid"])
        with open(f"/proc/{pid}/cgroup") as f:
            lines = f.read().splitlines()
    except (docker.errors.DockerException, OSError, KeyError, TypeError, ValueError):
        return _Cgroups()
    paths = dict(line.split(":", 2)[1:] for line in lines if line.count(":") >= 2)
    memory, cpu = _cgroup_folder(paths, "memory", cid), _cgroup_folder(paths, "cpuacct", cid)
    if memory is not None and os.path.exists(os.path.join(memory, "memory.kmem.tcp.limit_in_bytes")):
        try:
            with open(os.path.join(memory, "memory.kmem.tcp.limit_in_bytes"), "w") as f:
                f.write(str(memory_mb << 20))
        except OSError as exc:
            log.debug("container %s: no socket buffer limit: %s", cid[:12], exc)
    return _Cgroups(memory, cpu)


class DockerBackend(SandboxBackend):
    """Sandboxes as Docker containers, built from the task's runtime and dependencies."""

    name = "docker"
    priority = 50  # below namespace: ``auto`` picks Docker only where namespaces are refused
    _availability: Availability | None = None

    @classmethod
    def availability(cls) -> Availability:
        if cls._availability is None:
            try:
                images.connect(timeout=10).close()
                cls._availability = Availability(True, "")
            except BackendUnavailable as exc:
                cls._availability = Availability(False, str(exc))
        return cls._availability

    def __init__(self, pool_size: int | None = None, max_pools: int = 4, cpus: float | None = None) -> None:
        """*pool_size*: containers kept started per configuration (default 2, or
        ``AGENTENV_DOCKER_POOL``; 0 disables the pool). *max_pools*: configurations kept warm at
        once (the least recently used is drained). *cpus*: CPUs per container (default 1, or
        ``AGENTENV_DOCKER_CPUS``)."""
        self.client = images.connect()
        self.pool_size = int(os.environ.get(POOL_ENV, "2")) if pool_size is None else pool_size
        self.max_pools = max_pools
        self.cpus = float(os.environ.get(CPUS_ENV, "1")) if cpus is None else cpus
        reaped = reap_orphans(self.client)
        if reaped:
            log.info("removed %d container(s) left by dead agentenv processes", len(reaped))
        self._lock = threading.Condition()
        self._pools: "collections.OrderedDict[tuple, collections.deque[_Box]]" = collections.OrderedDict()
        self._configs: dict[tuple, tuple[SandboxRequest, Any]] = {}
        self._starting: collections.Counter = collections.Counter()
        self._doomed: list[str] = []
        self._open: dict[str, DockerSandbox] = {}
        self._images: dict[tuple, Any] = {}
        self._tars: dict[str, bytes] = {}
        self._closed = False
        self._seq = 0
        self._worker = threading.Thread(target=self._work, name="agentenv-docker-pool", daemon=True)
        self._worker.start()

    # ------------------------------------------------------------------ images
    def image_for(self, request: SandboxRequest) -> Any:
        fp = request.runtime.fingerprint
        runtime = str(fp.get("runtime") or request.runtime.name)
        deps = tuple(sorted(fp.get("dependencies") or ()))
        key = (runtime, deps)
        with self._lock:
            if key in self._images:
                return self._images[key]
        image = images.deps_image(self.client, runtime, deps)
        with self._lock:
            self._images[key] = image
        return image

    # ------------------------------------------------------------------ containers
    def _tar(self, workspace_dir: str | None) -> bytes:
        if not workspace_dir:
            return b""
        with self._lock:
            if workspace_dir in self._tars:
                return self._tars[workspace_dir]
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            for name in sorted(os.listdir(workspace_dir)):
                tar.add(os.path.join(workspace_dir, name), arcname=name)
        with self._lock:
            self._tars[workspace_dir] = buf.getvalue()
        return buf.getvalue()

    def _start(self, key: tuple, request: SandboxRequest, image: Any) -> _Box:
        limits = request.limits
        size_mb = max(limits.max_file_size_mb * 4, 64)
        fsize = limits.max_file_size_mb << 20
        ulimits = [docker.types.Ulimit(name="fsize", soft=fsize, hard=fsize)]
        # The CPU time limit is each command's, set by the helper in the command after fork, as on the
        # namespace backend: a container-wide ulimit bound the helper too, and a command that kept it
        # reading a flood of output got it killed by that limit (masked, red team, stop 36)
        rlimits = [[resource.RLIMIT_CPU, int(limits.cpu_time_s) + 1]] if limits.cpu_time_s else []
        with self._lock:
            self._seq += 1
            name = f"agentenv-{os.getpid()}-{self._seq}-{os.urandom(3).hex()}"
        api = self.client.api
        host_config = api.create_host_config(
            # root as the helper's real uid, with CAP_SETUID/CAP_SETGID only, so that its commands
            # (the sandbox user in every slot) cannot signal, limit or reschedule it (see serve_stdio)
            network_mode="none", read_only=True, cap_drop=["ALL"], cap_add=["SETUID", "SETGID"],
            security_opt=["no-new-privileges"],
            tmpfs={request.root: f"rw,exec,nosuid,nodev,size={size_mb}m,uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0755",
                   "/tmp": f"rw,exec,nosuid,nodev,size={size_mb}m,mode=1777"},
            mem_limit=f"{limits.memory_mb}m", memswap_limit=f"{limits.memory_mb}m",
            pids_limit=limits.max_processes + 4, nano_cpus=int(self.cpus * 1e9), ulimits=ulimits,
            log_config={"type": "none"}, ipc_mode="private")
        labels = {**images.owner_labels(), **{k: str(v) for k, v in request.labels.items()},
                  "agentenv.kind": "sandbox"}
        try:
            cid = api.create_container(image.id, command=["python3", "-I", "-S", images.HELPER], name=name,
                                       user="0:0", stdin_open=True, hostname="sandbox",
                                       working_dir=request.root, labels=labels, host_config=host_config)["Id"]
        except docker.errors.DockerException as exc:
            raise SandboxError(f"cannot create a container from {image.tags or image.id}: {exc}") from exc
        try:
            raw = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stream": 1})
            stream = _Stream(raw)
            api.start(cid)
            stream.sock.settimeout(_OP_TIMEOUT_S)
            # the container's bootstrap runs agentenv's in-sandbox request server from its source
            stream.send({"op": "load", "root": request.root, "rlimits": rlimits}, _SERVER_SOURCE)
            reply, _ = stream.recv()
            if "error" in reply:
                raise SandboxError(f"the request server in {name} did not start: {reply.get('message')}")
            stream.send({"op": "ping"})
            reply, _ = stream.recv()
            if "error" in reply:
                raise SandboxError(f"the helper in {name} failed: {reply}")
            tar = self._tar(request.workspace_dir)
            if tar:
                stream.send({"op": "untar", "path": request.root}, tar)
                reply, _ = stream.recv()
                if "error" in reply:
                    raise SandboxError(f"laying out the workspace in {name} failed: {reply.get('message')}")
        except (docker.errors.DockerException, OSError, EOFError, SandboxError) as exc:
            self._remove(cid)
            if isinstance(exc, SandboxError):
                raise
            raise SandboxError(f"container {name} did not start: {type(exc).__name__}: {exc}") from exc
        return _Box(cid, name, stream, key, _cgroups(api, cid, request.limits.memory_mb))

    def _remove(self, cid: str, wait: bool = True) -> None:
        if not wait:
            with self._lock:
                self._doomed.append(cid)
                self._lock.notify_all()
            return
        try:
            self.client.api.remove_container(cid, force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.DockerException as exc:
            log.warning("could not remove container %s: %s", cid[:12], exc)

    def oom_killed(self, cid: str, patience_s: float = 3.0) -> bool:
        """Whether a container that stopped answering was stopped by its memory cgroup's OOM killer
        (once it has stopped: the engine learns of the OOM event and of the exit apart)."""
        deadline = time.monotonic() + patience_s
        while True:
            try:
                state = self.client.api.inspect_container(cid)["State"]
            except docker.errors.DockerException:
                return False
            if not state.get("Running") or time.monotonic() > deadline:
                return bool(state.get("OOMKilled")) and not state.get("Running")
            time.sleep(0.05)

    def oom_since(self, cid: str, since: float, patience_s: float = 3.0) -> bool | None:
        """Whether container *cid* died of an OOM kill after *since* (a ``time.time()`` of this host),
        read from the engine's events once it has stopped; None where its events cannot be read. (The
        OOMKilled flag covers the container's whole life: a command OOM-killed earlier made any later
        death of its helper look like one.) The engine stamps an event as it hears of it, so the OOM
        event of a command OOM-killed before *since* can carry a later time: a kill through the engine
        in the window says the container was killed from outside, whatever OOM events it holds."""
        deadline = time.monotonic() + patience_s
        stopped = None
        while True:
            try:
                running = self.client.api.inspect_container(cid)["State"].get("Running")
                now = time.monotonic()
                if not running:
                    stopped = stopped or now
                # (the engine learns of the OOM, the kill and the exit apart: give them a moment after the exit)
                if (stopped is not None and now - stopped > 0.5) or now > deadline:
                    events = self.client.api.events(since=f"{since:.9f}", until=f"{time.time():.9f}", decode=True,
                                                    filters={"container": cid, "event": ["oom", "kill"]})
                    seen = {event.get("Action") or event.get("status") for event in events}
                    return "oom" in seen and "kill" not in seen
            except docker.errors.DockerException:
                return None
            time.sleep(0.05)

    def kill(self, cid: str) -> None:
        """Kill the whole container now (wall time exceeded, or a stuck helper)."""
        try:
            self.client.api.kill(cid)
        except docker.errors.DockerException:
            pass

    # ------------------------------------------------------------------ the pool
    def _key(self, request: SandboxRequest, image: Any) -> tuple:
        return (image.id, request.workspace_dir, request.root, json.dumps(request.limits.to_json(), sort_keys=True),
                json.dumps(dict(request.labels), sort_keys=True))

    def _take(self, key: tuple) -> _Box | None:
        while True:
            with self._lock:
                pool = self._pools.get(key)
                box = pool.popleft() if pool else None
                self._lock.notify_all()  # the worker refills
            if box is None:
                return None
            try:  # a pooled container may have been killed from outside
                box.stream.sock.settimeout(5)
                box.stream.send({"op": "ping"})
                box.stream.recv()
                return box
            except (OSError, EOFError, ValueError):
                box.close()
                self._remove(box.cid, wait=False)

    def _work(self) -> None:
        while True:
            with self._lock:
                job = None
                while job is None:
                    if self._doomed:
                        job = ("remove", self._doomed.pop())
                        break
                    if self._closed:
                        return
                    for key, pool in reversed(self._pools.items()):  # most recently used first
                        if len(pool) + self._starting[key] < self.pool_size:
                            self._starting[key] += 1
                            job = ("start", key)
                            break
                    if job is None:
                        self._lock.wait(1.0)
            if job[0] == "remove":
                self._remove(job[1])
                continue
            key = job[1]
            request, image = self._configs[key]
            try:
                box = self._start(key, request, image)
            except InfrastructureError as exc:
                log.warning("warm pool: could not start a container: %s", exc)
                box = None
                time.sleep(1.0)
            with self._lock:
                self._starting[key] -= 1
                pool = self._pools.get(key)
                if box is not None and (pool is None or self._closed):
                    self._doomed.append(box.cid)
                    box.close()
                elif box is not None:
                    pool.append(box)
                self._lock.notify_all()

    def open(self, request: SandboxRequest) -> "DockerSandbox":
        with self._lock:
            if self._closed:
                raise SandboxError("this docker backend is closed")
        image = self.image_for(request)
        key = self._key(request, image)
        with self._lock:
            if key not in self._pools:
                self._pools[key] = collections.deque()
                self._configs[key] = (request, image)
                while len(self._pools) > self.max_pools:  # drain the least recently used configuration
                    old_key, old = self._pools.popitem(last=False)
                    self._configs.pop(old_key, None)
                    for box in old:
                        box.close()
                        self._doomed.append(box.cid)
            self._pools.move_to_end(key)
            self._lock.notify_all()
        started = time.monotonic()
        box = self._take(key) if self.pool_size > 0 else None
        warm = box is not None
        if box is None:
            box = self._start(key, request, image)
        tag = next((t for t in image.tags if t.startswith(images.DEPS_REPO)), image.id)
        peak = ("the largest process, or the memory cgroup's rise if larger" if box.cgroups.memory is not None
                else "the largest process (the container's memory cgroup cannot be read from this host)")
        cpu_time = ("the command's processes, or the CPU cgroup's use if more" if box.cgroups.cpu is not None
                    else "the command's processes (the container's CPU cgroup cannot be read from this host)")
        features = {"image": tag, "image_id": image.id, "network": "none", "root": "read-only", "peak_memory": peak,
                    "cpu_time": cpu_time,
                    "workspace": "tmpfs", "memory": "cgroup (docker)", "processes": "cgroup pids (docker)",
                    "cpu": f"{self.cpus:g} CPU (docker)", "user": str(SANDBOX_UID),
                    "capabilities": "none (the helper keeps CAP_SETUID/CAP_SETGID permitted, root as its real uid)",
                    "no_new_privileges": "yes", "pid": "namespace (docker)", "pool": "warm" if warm else "cold",
                    "acquire_ms": f"{(time.monotonic() - started) * 1000:.1f}"}
        warnings = ()
        if request.limits.network:
            warnings = ("network access was asked for, but docker sandboxes run with --network none",)
        box_ = DockerSandbox(self, box, request, Isolation("docker", features, warnings))
        with self._lock:
            self._open[box.cid] = box_
        return box_

    def _release(self, sandbox: "DockerSandbox") -> None:
        with self._lock:
            self._open.pop(sandbox.container_id, None)
        self._remove(sandbox.container_id, wait=False)

    def pooled(self) -> int:
        """Containers ready in the pools now."""
        with self._lock:
            return sum(len(p) for p in self._pools.values())

    def wait_warm(self, timeout_s: float = 60.0) -> bool:
        """Block until every pool is full (benchmarks, tests)."""
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while time.monotonic() < deadline:
                if all(len(p) >= self.pool_size for p in self._pools.values()):
                    return True
                self._lock.wait(0.05)
        return False

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            boxes = [b for p in self._pools.values() for b in p]
            self._pools.clear()
            opened = list(self._open.values())
            self._lock.notify_all()
        for sandbox in opened:
            sandbox.close()
        for box in boxes:
            box.close()
            self._remove(box.cid, wait=False)
        self._worker.join(timeout=120)
        with self._lock:  # anything a start finished after the worker left
            doomed, self._doomed = self._doomed, []
        for cid in doomed:
            self._remove(cid)
        try:
            self.client.close()
        except Exception:
            pass


class DockerSandbox(AgentSandbox):
    def __init__(self, backend: DockerBackend, box: _Box, request: SandboxRequest, isolation: Isolation) -> None:
        self._backend, self._box, self._request = backend, box, request
        self.container_id, self.container_name = box.cid, box.name
        self.root = request.root
        self.isolation = isolation
        self._lock = threading.Lock()
        self._dead: str | None = None
        self._lost: str | None = None  # what the agent did that killed it, for every later call
        self._ooms = 0  # the OOM kills its memory cgroup had counted when the last command ended
        self._answered = time.time()  # when its helper last answered (it was alive then)

    @property
    def alive(self) -> bool:
        return self._dead is None

    def _die(self, why: str) -> None:
        self._dead = why
        self._box.close()
        self._backend.kill(self.container_id)

    def _call(self, req: dict, body: bytes = b"", timeout: float = _OP_TIMEOUT_S) -> tuple[dict, bytes]:
        with self._lock:
            if self._dead:
                raise SandboxError.dead(f"container {self.container_name} is {self._dead}", self._lost)
            stream = self._box.stream
            try:
                stream.sock.settimeout(timeout)
                stream.send(req, body)
                reply, data = stream.recv()
                self._answered = time.time()
            except socket.timeout as exc:
                self._die("killed (its helper stopped answering)")
                raise _Expired(f"container {self.container_name}: no answer to {req['op']} in {timeout:.0f} s") from exc
            except (OSError, EOFError, ValueError) as exc:
                # An OOM kill since the last command ended is the agent's doing (its processes held the
                # memory): the container's own count, read from this host at once, or where the engine
                # has removed its cgroup already, an OOM event since the helper last answered; where
                # neither can be read, Docker's OOMKilled, which covers the container's whole life (a
                # command OOM-killed before made any later death look like one), only where no command
                # had been OOM-killed before
                kills = self._box.cgroups.oom_kills()
                oom = kills > self._ooms if kills is not None else self._backend.oom_since(self.container_id,
                                                                                          self._answered)
                if oom is None:
                    oom = self._ooms == 0 and self._backend.oom_killed(self.container_id)
                self._die("dead (killed from outside, or its helper died)")
                message = f"container {self.container_name} died during {req['op']}: {exc}"
                if oom:
                    error = SandboxError.out_of_memory(message, self._request.limits.memory_mb)
                    self._lost = error.agents_doing
                    raise error from exc
                raise SandboxError(message) from exc
        if "error" in reply:
            self._raise_reply_error(req, reply, f"container {self.container_name}")
        return reply, data

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = {"HOME": "/tmp", "USER": "sandbox", "LOGNAME": "sandbox", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
               "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        # the runtime's PATH and VIRTUAL_ENV name host paths; inside, the image's venv stands for them
        env.update({k: v for k, v in self._request.runtime.env.items() if k not in ("PATH", "VIRTUAL_ENV")})
        env.update({"PATH": f"{images.VENV}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": images.VENV})
        if extra:
            env.update(extra)
        return env

    def exec(self, command: str | Sequence[str], *, timeout_s: float | None = None,
             env: Mapping[str, str] | None = None, cwd: str | None = None, stdin: bytes | None = None,
             collect: Sequence[str] = ()) -> ExecResult:
        if isinstance(command, str):
            argv, shown = [self._request.runtime.shell, "-c", command], command
        else:
            argv, shown = list(command), " ".join(command)
        timeout = timeout_s or self._request.limits.wall_time_s
        req = {"op": "exec", "argv": argv, "env": self._env(env), "cwd": cwd and self.resolve(cwd),
               "root": self.root, "timeout": timeout, "max_output_bytes": self._request.limits.max_output_bytes,
               "collect": [self.resolve(p) for p in collect]}
        memory, cpu = self._box.cgroups.memory, self._box.cgroups.cpu
        for counter in (memory, cpu):
            if counter is not None:
                counter.mark()
        try:
            reply, data = self._call(req, stdin or b"", timeout=timeout + _GRACE_S)
        except _Expired:
            return ExecResult(shown, -9, "", "killed: wall-time limit exceeded (container killed)",
                              wall_ms=timeout * 1000, timed_out=True)
        # (the helper's count, and this host's read now: the host's count of a command's own OOM kill
        # could lag the helper's reply, and a later death was then taken for the agent's new one)
        host = self._box.cgroups.oom_kills()
        self._ooms = max(int(reply.get("oom_count") or 0), host or 0, self._ooms)
        if memory is not None:  # all its processes together and its tmpfs files: see MemoryGrowth
            reply["peak_memory_mb"] = max(reply["peak_memory_mb"], memory.grown_kb(int(reply.get("tmpfs_kb") or 0)) / 1024)
        if cpu is not None:  # children reaped by the kernel too: see CpuUse (less what the helper used)
            reply["cpu_ms"] = max(reply["cpu_ms"], cpu.used_s(float(reply.get("server_cpu_ms") or 0) / 1000) * 1000)
        return self._exec_result(shown, reply, data)

    def close(self) -> None:
        with self._lock:
            if self._dead == "closed":
                return
            self._dead = "closed"
            self._box.close()  # EOF: the helper exits and the container stops
        self._backend._release(self)


class _Expired(SandboxError):
    """The helper did not answer by the command's deadline plus grace; the container was killed."""
