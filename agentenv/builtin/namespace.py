"""The embedded default backend: Linux namespaces, overlayfs workspaces, cgroup limits.

Each sandbox is a fresh pid/mount/network/ipc/uts namespace whose root is a private tmpfs holding
read-only binds of /usr and the runtime's paths, a synthesized /etc, a minimal /dev, its own /proc
and /tmp, and the workspace: an overlay over the task's pristine files whose writable layer lives in
the sandbox's own tmpfs, so it vanishes with the namespace. Commands run as an unprivileged user with
no capabilities and ``no_new_privs``. Memory and process limits use cgroups where this host lets us
create them and fall back to rlimits otherwise, reported as a warning. Without root on the host
(rootless mode) each sandbox is also a user namespace in which the sandbox user, the only uid
mapped, is the caller's uid. See ``_nszygote.py`` for the process tree.
"""

from __future__ import annotations

import concurrent.futures
import fcntl
import functools
import glob
import itertools
import json
import logging
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from typing import Mapping, Sequence

from agentenv import (
    SANDBOX_UID,
    AgentSandbox,
    Availability,
    BackendUnavailable,
    ExecResult,
    Isolation,
    SandboxBackend,
    SandboxError,
    SandboxRequest,
    sandbox_server_source,
)

from . import _nswarm, _nszygote as proto, reports
from .runtimes import host_interpreters

log = logging.getLogger("agentenv.sandbox.namespace")

_GRACE_S = 5.0  # how long past a command's own deadline the caller waits for init before killing it
_HERE = os.path.dirname(os.path.abspath(__file__))
_ZYGOTE = os.path.join(_HERE, "_nszygote.py")
_WARM = os.path.join(_HERE, "_nswarm.py")
#: where sandboxes get a warm interpreter: ``auto`` (the default: where it is cheap or pytest repays it), ``1``, ``0``
WARM_ENV = "AGENTENV_NS_WARM"
_ETC_HOST = ("ld.so.cache", "ld.so.conf", "nsswitch.conf", "localtime", "mime.types", "alternatives")


def zygote_program(seeds: bool = True) -> bytes:
    """What the zygote's interpreter reads on stdin: the shared request server loaded as a module,
    then ``_nszygote.py`` with the warm template's source beside it (standard library only), and,
    for the zygote (*seeds*), the same program again for the seeds it starts (see _nszygote._Seed)."""
    def text(path: str) -> str:
        with open(path, encoding="utf-8") as f:
            return f.read()

    seed = zygote_program(seeds=False) if seeds else None
    return (
        "import sys, types\n"
        "server = types.ModuleType('agentenv_sandbox_server')\n"
        f"exec(compile({sandbox_server_source()!r}, 'agentenv-sandbox-server', 'exec'), server.__dict__)\n"
        "sys.modules['agentenv_sandbox_server'] = server\n"
        f"exec(compile({text(_ZYGOTE)!r}, 'agentenv-zygote', 'exec'), "
        f"{{'__name__': '__main__', 'WARM_SOURCE': {warm_source()!r}, 'WARM_SCRIPTS': {warm_scripts()!r}, "
        f"'SEED_PROGRAM': {seed!r}}})\n"
    ).encode()


def warm_source() -> str:
    """The warm interpreter's program: _nswarm.py, and the trusted pytest judge it compiles."""
    with open(_WARM, encoding="utf-8") as f:
        warm = f.read()
    judge = reports.judge_source()
    return (f"{warm}\n_JUDGE = judge_code({judge.decode('utf-8')!r}, {reports.judge_digest(judge)!r}, "
            f"{reports.JUDGE_MODULE!r})\n")


def warm_scripts() -> dict[str, str]:
    """Scripts of agentenv's own that a seed compiles for its templates (_nswarm.SCRIPTS): the
    HumanEval judge, at the path its importer writes it to. (Seeds only: an exec'd template
    receives its program in one message, which has no room for them.)"""
    from agentenv.builtin.authoring import humaneval

    return {humaneval.HARNESS_PATH: humaneval.HARNESS}


def _probe() -> Availability:
    if sys.platform != "linux":
        return Availability(False, f"the namespace backend needs Linux (this is {sys.platform}); "
                                   "use backend='docker' (pip install agentenv-docker)")
    rootless = os.geteuid() != 0
    # without root, sandboxes get a user namespace too, in which the sandbox mounts its own /proc
    argv = ["unshare", "--mount", "--pid", "--fork", "--net", "--ipc", "--uts"]
    if rootless:
        argv += ["--user", "--map-root-user", "--mount-proc"]
    try:
        out = subprocess.run(argv + ["true"], capture_output=True, timeout=10)
    except FileNotFoundError:
        return Availability(True, "")  # util-linux missing; the zygote will report a real failure
    except subprocess.TimeoutExpired:
        return Availability(False, "creating namespaces timed out")
    if out.returncode != 0 and rootless:
        return Availability(False, "the namespace backend runs without root in a user namespace, which "
                                   f"this host refuses to a user ({out.stderr.decode(errors='replace').strip()});"
                                   " allow unprivileged user namespaces (sysctl user.max_user_namespaces>0, "
                                   "kernel.unprivileged_userns_clone=1, or the AppArmor userns restriction "
                                   "off), run as root, or use backend='docker'")
    if out.returncode != 0:
        return Availability(False, "this host refuses new namespaces (a locked-down container?): "
                                   f"{out.stderr.decode(errors='replace').strip()}; run with "
                                   "--privileged or use backend='docker'")
    return Availability(True, "")


#: per-user kernel limits that every sandbox (one host uid, as root) draws on together, and the
#: least each is raised to: one sandbox that took all 128 inotify instances left another's Harbor
#: check none, and three that held 5.5 million epoll watches left another's testwriting check none
#: (its selector's register failed): each scored a correct answer 0, unmasked (red team, stop 38);
#: one past the pipe pages' soft limit shrank every other sandbox's new pipes to one page. The
#: host's file table too (``fs.file-max``, 2.47 million on a 24 GB machine): one sandbox held 400,000
#: open files (100 processes of 4,000), so five of them would leave the host and every other
#: sandbox none (red team, stop 39). What a sandbox can hold is then bounded by its own limits (128
#: processes of 4,096 files; its memory cgroup, which is charged for files, watches and pipe pages),
#: far below these.
SHARED_LIMITS = {"/proc/sys/fs/inotify/max_user_instances": 1 << 24, "/proc/sys/fs/inotify/max_user_watches": 1 << 24,
                 "/proc/sys/fs/epoll/max_user_watches": 1 << 40, "/proc/sys/fs/pipe-user-pages-soft": 1 << 30,
                 "/proc/sys/fs/file-max": 1 << 40}


def _raise_shared_limits() -> None:
    for path, least in SHARED_LIMITS.items():
        try:
            with open(path) as f:
                if int(f.read()) >= least:
                    continue
            with open(path, "w") as f:
                f.write(str(least))
            log.info("namespace backend: raised %s to %d (shared by every sandbox's uid)", path, least)
        except (OSError, ValueError) as exc:
            log.warning("namespace backend: could not raise %s (%s): one sandbox can use up what the "
                        "others share", path, exc)


class _Cgroups:
    """Finds where per-sandbox cgroups can be made: cgroup v2 (unified) or v1 memory + pids."""

    def __init__(self, probe: bool = True) -> None:
        self.mode = "rlimit"
        self.base: dict[str, str] = {}
        # one directory per backend: two backends of one process must not remove each other's
        owner = f"agentenv-{os.getpid()}-{next(_cgroup_ids)}"
        v2 = "/sys/fs/cgroup"
        _remove_stale_cgroups(v2)
        if not probe:
            return
        candidates = []
        if os.path.exists(os.path.join(v2, "cgroup.controllers")):
            controllers = open(os.path.join(v2, "cgroup.controllers")).read().split()
            if {"memory", "pids"} <= set(controllers):
                candidates.append(("v2", {"unified": os.path.join(v2, owner)}))
        if os.path.isdir(os.path.join(v2, "memory")) and os.path.isdir(os.path.join(v2, "pids")):
            v1 = {"memory": os.path.join(v2, "memory", owner), "pids": os.path.join(v2, "pids", owner)}
            hierarchies = {os.path.realpath(os.path.join(v2, "memory")), os.path.realpath(os.path.join(v2, "pids"))}
            for optional in ("cpuacct", "cpu"):  # (optional: CPU time counted by the cgroup; a fair CPU share)
                where = os.path.join(v2, optional)
                if os.path.isdir(where) and os.path.realpath(where) not in hierarchies:
                    hierarchies.add(os.path.realpath(where))  # (one group where cpu and cpuacct are one hierarchy)
                    v1[optional] = os.path.join(where, owner)
            candidates.append(("v1", v1))
        for mode, base in candidates:
            try:
                for optional in ("cpuacct", "cpu"):
                    if optional in base:
                        try:
                            os.makedirs(base[optional], exist_ok=True)
                        except OSError as exc:
                            log.debug("cgroup v1 %s unusable: %s", optional, exc)
                            del base[optional]
                for path in base.values():
                    os.makedirs(path, exist_ok=True)
                if mode == "v2":
                    with open(os.path.join(v2, "cgroup.subtree_control"), "w") as f:
                        f.write("+memory +pids")
                    with open(os.path.join(base["unified"], "cgroup.subtree_control"), "w") as f:
                        f.write("+memory +pids")
                    try:  # each sandbox a fair share of the CPU (where the controller is there to enable)
                        for parent in (v2, base["unified"]):
                            with open(os.path.join(parent, "cgroup.subtree_control"), "w") as f:
                                f.write("+cpu")
                    except OSError as exc:
                        log.debug("cgroup v2 cpu controller unusable: %s", exc)
                self.mode, self.base = mode, base
                return
            except OSError as exc:
                log.debug("cgroup %s unusable: %s", mode, exc)
                for path in base.values():
                    try:
                        os.rmdir(path)
                    except OSError:
                        pass

    def remove(self) -> None:
        for path in self.base.values():
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


_cgroup_ids = itertools.count()


def _remove_stale_cgroups(top: str) -> None:
    """Remove the cgroups left by agentenv processes that died without closing their backend."""
    for hierarchy in [top] + [os.path.join(top, name) for name in ("memory", "pids", "cpuacct", "cpu")]:
        try:
            names = os.listdir(hierarchy)
        except OSError:
            continue
        for name in names:
            pid = name[9:].split("-")[0]
            if not name.startswith("agentenv-") or not pid.isdigit():
                continue
            if os.path.exists(f"/proc/{pid}"):
                continue
            base = os.path.join(hierarchy, name)
            try:  # another process may be sweeping the same one (Ray workers of one host start together)
                children = os.listdir(base)
            except OSError:
                continue
            for child in children:
                if os.path.isdir(os.path.join(base, child)):
                    try:
                        os.rmdir(os.path.join(base, child))
                    except OSError:
                        pass
            try:
                os.rmdir(base)
            except OSError:
                pass


_OWNER_LOCK = "owner.lock"


def _remove_stale_workdirs(top: str) -> None:
    """Remove the temp dirs (``agentenv-ns-<pid>-*``) of backends whose process died without
    closing them (SIGKILL). A dir goes only when its pid is gone *and* its owner's lock is free,
    and it is ours (uid): never a live backend's, in this process, another one, or another pid
    namespace sharing /tmp. (Dirs of the older unnamed form, without a lock, are left alone.)"""
    try:
        names = os.listdir(top)
    except OSError:
        return
    for name in names:
        pid = name[len("agentenv-ns-"):].split("-")[0]
        if not name.startswith("agentenv-ns-") or not pid.isdigit() or os.path.exists(f"/proc/{pid}"):
            continue
        path = os.path.join(top, name)
        try:
            st = os.lstat(path)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
                continue
            fd = os.open(os.path.join(path, _OWNER_LOCK), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held: its owner lives (a pid we cannot see)
        try:
            shutil.rmtree(path, ignore_errors=True)
            log.debug("removed the stale sandbox dir %s", path)
        finally:
            os.close(fd)


class _ZygoteClient:
    def __init__(self, workdir: str, pool_size: int) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stderr = open(os.path.join(workdir, "zygote.log"), "wb")
        # Every sandbox's init is a fork of the zygote and shows its command line as /proc/1/cmdline:
        # a neutral argv[0] and the script on stdin keep the install path and interpreter out of it.
        source = zygote_program()
        self.proc = subprocess.Popen(
            ["agentenv-sandbox-init", "-I", "-S", "-", str(theirs.fileno()), str(pool_size)],
            executable=sys.executable, pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, env=proto.ZYGOTE_ENV,
            stdout=self.stderr, stderr=self.stderr, start_new_session=True,
        )
        theirs.close()
        try:
            self.proc.stdin.write(source)
        except BrokenPipeError:
            pass  # it died at once: the first request reports it, with the log
        finally:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        self.sock = ours
        self.lock = threading.Lock()

    def request(self, msg: dict, *, want_fd: bool = False, want_reply: bool = True) -> tuple[dict, int | None]:
        with self.lock:
            try:
                self.sock.send(json.dumps(msg).encode())
                if not want_reply:
                    return {}, None
                if want_fd:
                    data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 1)
                else:
                    data, fds = self.sock.recv(1 << 16), []
            except OSError as exc:
                raise SandboxError(f"the namespace zygote is gone ({exc}); see {self.stderr.name}") from exc
        if not data:
            raise SandboxError(f"the namespace zygote exited; see {self.stderr.name}")
        reply = json.loads(data)
        if "error" in reply:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"the namespace zygote could not open a sandbox: {reply['error']}")
        return reply, (fds[0] if fds else None)

    def close(self) -> None:
        try:
            self.sock.close()  # EOF: the zygote kills every sandbox it still holds, then exits
        finally:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.stderr.close()


class NamespaceBackend(SandboxBackend):
    """Sandboxes made of Linux namespaces; the default on Linux hosts that allow them."""

    name = "namespace"
    priority = 100
    _availability: Availability | None = None

    @classmethod
    def availability(cls) -> Availability:
        if cls._availability is None:
            cls._availability = _probe()
        return cls._availability

    def __init__(self, pool_size: int | None = None, *, cgroups: bool = True, warm: bool | str | None = None) -> None:
        """*pool_size*: sandboxes kept set up in advance for each recently used configuration
        (runtime, limits, root; not the task's files, which a pooled sandbox mounts when it is
        handed out), once it recurs (default 1, or ``AGENTENV_NS_POOL``); 0 disables the warm
        pool. ``cgroups=False`` uses the rlimit fallback even where cgroups are writable (reported
        in ``isolation.warnings`` as usual).
        *warm*: each sandbox starts a warm interpreter of its runtime that Python commands fork
        from (see ``_nswarm.py``). ``"auto"`` (the default, or ``AGENTENV_NS_WARM``): where the
        template is a fork of its interpreter's seed (a few ms of CPU, see ``seed_interpreter``),
        or the runtime has pytest, whose start-up it saves (hundreds of ms a test run); any other
        runtime would pay more for an exec'd interpreter than one command saves. ``True``: any
        runtime with a python; ``False``: never. It costs the template's memory (and start-up CPU,
        in the background for pooled sandboxes) per sandbox, counted in the sandbox's own limits."""
        ok = self.availability()
        if not ok.ok:
            raise BackendUnavailable(ok.reason)
        _remove_stale_workdirs(tempfile.gettempdir())
        # named by our pid and locked while we live: a later backend removes it once we are gone
        self._workdir = tempfile.mkdtemp(prefix=f"agentenv-ns-{os.getpid()}-")
        self._owner_lock = os.open(os.path.join(self._workdir, _OWNER_LOCK), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC,
                                   0o600)
        fcntl.flock(self._owner_lock, fcntl.LOCK_EX)
        self._stage = os.path.join(self._workdir, "stage")
        os.mkdir(self._stage)
        self._etc = self._make_etc()
        # the host's files (and /etc/alternatives: /usr/bin/awk -> /etc/alternatives/awk -> mawk),
        # bound read-only at the same path: copying them (115 KB and ~400 links here) was ~1.2 ms
        # of every sandbox's set-up and its memory
        self._etc_binds = [name for name in _ETC_HOST if os.path.exists(os.path.join("/etc", name))]
        self._cgroups = _Cgroups(probe=cgroups)
        self._zygote: _ZygoteClient | None = None
        self._pool_size = int(os.environ.get("AGENTENV_NS_POOL", "1")) if pool_size is None else pool_size
        if warm is None:
            setting = os.environ.get(WARM_ENV, "auto").lower()
            warm = "auto" if setting == "auto" else setting not in ("0", "", "false", "no", "off")
        self._warm = warm
        self._lock = threading.Lock()
        self._open: dict[str, NamespaceSandbox] = {}
        self._closed = False
        self._topdirs, self._toplinks = [], {}
        for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            path = "/" + name
            if os.path.islink(path):
                self._toplinks[name] = os.readlink(path)
            elif os.path.isdir(path):
                self._topdirs.append(name)
        self._warnings: tuple[str, ...] = ()
        self._userns = {"uid": os.geteuid(), "gid": os.getegid()} if os.geteuid() != 0 else None
        if self._userns is None:
            _raise_shared_limits()
        if self._cgroups.mode == "rlimit":
            # RLIMIT_NPROC counts per (user namespace, uid): one sandbox's own when it has its own
            counted = ("that sandbox's own processes (its user namespace)" if self._userns else
                       f"every process of uid {SANDBOX_UID} on the host, all sandboxes together")
            self._warnings = ("memory and process limits fall back to rlimits (RLIMIT_AS, RLIMIT_NPROC): "
                              "no writable cgroup hierarchy with memory+pids controllers was found (or "
                              "cgroups=False); the address-space cap is coarser than a memory cap, and "
                              f"the process cap counts {counted}; mount cgroup2 read-write (or run as "
                              "root on the host) for exact limits",)
            log.warning("namespace backend: %s", self._warnings[0])

    def _make_etc(self) -> str:
        etc = os.path.join(self._workdir, "etc")
        os.mkdir(etc)
        files = {
            "passwd": f"root:x:0:0:root:/root:/bin/sh\nsandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp:/bin/sh\n",
            "group": f"root:x:0:\nsandbox:x:{SANDBOX_UID}:\n",
            "hosts": "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost\n",
            "hostname": "sandbox\n",
        }
        for name, text in files.items():
            with open(os.path.join(etc, name), "w") as f:
                f.write(text)
        return etc

    def _client(self) -> _ZygoteClient:
        with self._lock:
            if self._closed:
                raise SandboxError("this namespace backend is closed")
            if self._zygote is None or self._zygote.proc.poll() is not None:
                self._zygote = _ZygoteClient(self._workdir, self._pool_size)
            return self._zygote

    def open(self, request: SandboxRequest) -> "NamespaceSandbox":
        limits = request.limits
        cgrouped = self._cgroups.mode != "rlimit"
        how = f"cgroup {self._cgroups.mode}" if cgrouped else "rlimit"
        folder = os.path.normpath(os.path.abspath(request.workspace_dir)) if request.workspace_dir else None
        tmpfs = tmpfs_sizes(limits, request.root)
        cfg = {
            "uid": SANDBOX_UID, "root": request.root, "stage": self._stage, "etc": self._etc,
            "etc_binds": self._etc_binds,
            "toplinks": self._toplinks, "topdirs": self._topdirs,
            "mounts": [m for m in request.runtime.mounts if os.path.exists(m)],
            "hide": _host_package_trees(request.runtime.mounts),
            # the folder of the task's files, not the files: a pooled sandbox serves every task there
            "workspace_source": os.path.dirname(folder) if folder else None,
            "workspace_mb": tmpfs[request.root], "tmp_mb": tmpfs["/tmp"], "shm_mb": tmpfs["/dev/shm"],
            "limits": limits.to_json(), "cgroup_mode": self._cgroups.mode, "cgroup_base": self._cgroups.base,
            "limit_features": {"memory": how, "processes": how, "tmpfs_mb": tmpfs},
            "warnings": list(self._warnings), "userns": self._userns,
        }
        cfg.update(self._warm_config(request, cgrouped))
        if not cgrouped:
            cfg["rlimit_nproc"] = limits.max_processes
            cfg["rlimit_as_mb"] = limits.memory_mb
        if limits.network:
            cfg["warnings"].append("network access was asked for, but the namespace backend has no "
                                   "network beyond loopback; use backend='docker' for networked tasks")
        reply, fd = self._client().request({"op": "open", "config": cfg}, want_fd=True)
        sid = reply["id"]
        sock = socket.socket(fileno=fd)
        try:
            try:  # init ends its set-up with these files (if it failed already, it said why)
                proto.send_msg(sock, {"workspace": os.path.basename(folder) if folder else None})
            except OSError:
                pass
            ready, _ = proto.recv_msg(sock)
        except (EOFError, OSError) as exc:
            sock.close()
            raise SandboxError(f"sandbox init died during set-up; see {self._zygote.stderr.name}") from exc
        if not ready.get("ready"):
            sock.close()
            raise SandboxError(f"sandbox set-up failed: {ready.get('error')}")
        isolation = Isolation("namespace", ready["features"], tuple(ready.get("warnings", ())))
        box = NamespaceSandbox(self, sid, sock, request, isolation)
        box.init_pid = int(reply["init"])  # host pid of the sandbox's pid 1 (diagnostics, fault tests)
        with self._lock:
            self._open[sid] = box
        return box

    def _warm_config(self, request: SandboxRequest, cgrouped: bool) -> dict:
        """The warm interpreter's part of a sandbox configuration, or why there is none."""
        if not self._warm:
            return {"warm_off": f"turned off (NamespaceBackend(warm=False) or {WARM_ENV}=0)"}
        if self._userns:
            return {"warm_off": "rootless mode: the user namespace maps one uid only, and a template under "
                                "the commands' own uid would be within their reach"}
        if not cgrouped:
            return {"warm_off": "rlimit fallback: RLIMIT_NPROC would not count the warm interpreter's children"}
        env = base_env(request.runtime)
        python = _which("python", env["PATH"]) or _which("python3", env["PATH"])
        if python is None:
            return {"warm_off": "the runtime has no python on its PATH"}
        seed, why = seed_interpreter(python, env)
        if self._warm == "auto" and seed is None and not _has_pytest(request.runtime.mounts):
            return {"warm_off": f"the runtime has no pytest, and its template cannot be forked from a seed "
                                f"({why}); NamespaceBackend(warm=True) or {WARM_ENV}=1 warms any Python runtime"}
        preload = seed and _runtime_preload(request.runtime.mounts, env.get("PYTHONPATH", ""),
                                            env.get("PYTHONPYCACHEPREFIX"))
        return {"warm": {"python": python, "env": env, "seed": seed, "preload": preload}}

    def _oom_kills(self, sid: str) -> int:
        """OOM kills in sandbox *sid*'s memory cgroup so far (0 without one, or without a zygote)."""
        zygote = self._zygote
        if zygote is None or zygote.proc.poll() is not None:
            return 0
        try:
            reply, _ = zygote.request({"op": "oom", "id": sid})
        except SandboxError:
            return 0
        return int(reply.get("oom_kills") or 0)

    def _release(self, sid: str) -> None:
        with self._lock:
            self._open.pop(sid, None)
            zygote = self._zygote
        if zygote is not None and zygote.proc.poll() is None:
            try:
                zygote.request({"op": "close", "id": sid}, want_reply=False)
            except SandboxError:
                pass

    def open_count(self) -> int:
        """Sandboxes the zygote still holds (for leak tests)."""
        if self._zygote is None:
            return 0
        reply, _ = self._zygote.request({"op": "count"})
        return int(reply["open"])

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            boxes = list(self._open.values())
        for box in boxes:
            box.close()
        if self._zygote is not None:
            self._zygote.close()
        self._cgroups.remove()
        shutil.rmtree(self._workdir, ignore_errors=True)
        os.close(self._owner_lock)


class NamespaceSandbox(AgentSandbox):
    capabilities = frozenset({"pipes", "fork"})

    def __init__(self, backend: NamespaceBackend, sid: str, sock: socket.socket,
                 request: SandboxRequest, isolation: Isolation) -> None:
        self._backend, self._sid, self._sock = backend, sid, sock
        self._request = request
        self.root = request.root
        self.isolation = isolation
        self._lock = threading.Lock()
        self._dead: str | None = None
        self._ooms = 0  # the OOM kills its memory cgroup had counted when the last command ended
        self._lost: str | None = None  # what the agent did that killed it, for every later call
        #: host pid of the sandbox's init (pid 1 inside), for leak checks and memory accounting
        self.init_pid = 0

    @property
    def alive(self) -> bool:
        return self._dead is None

    def _call(self, req: dict, body: bytes = b"", timeout: float = 30.0) -> tuple[dict, bytes]:
        with self._lock:
            if self._dead:
                raise SandboxError.dead(f"sandbox {self._sid} is {self._dead}", self._lost)
            try:
                self._sock.settimeout(timeout)
                proto.send_msg(self._sock, req, body)
                reply, data = proto.recv_msg(self._sock)
            except (OSError, EOFError) as exc:
                self._dead = "dead (its init stopped answering)"
                self._sock.close()
                oom_kills = self._backend._oom_kills(self._sid)  # (asked before the zygote lets it go)
                self._backend._release(self._sid)
                message = f"sandbox {self._sid} died during {req['op']}: {exc}"
                if oom_kills > self._ooms:  # memory its commands held (tmpfs files, processes) took its init
                    error = SandboxError.out_of_memory(message, self._request.limits.memory_mb)
                    self._lost = error.agents_doing
                    raise error from exc
                raise SandboxError(message) from exc
        if "error" in reply:
            self._raise_reply_error(req, reply, f"sandbox {self._sid}")
        return reply, data

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = base_env(self._request.runtime)
        if extra:
            env.update(extra)
        return env

    def exec(self, command: str | Sequence[str], *, timeout_s: float | None = None,
             env: Mapping[str, str] | None = None, cwd: str | None = None, stdin: bytes | None = None,
             collect: Sequence[str] = (), pipes: Sequence[str] = ()) -> ExecResult:
        if isinstance(command, str):
            argv, shown = [self._request.runtime.shell, "-c", command], command
        else:
            argv, shown = list(command), " ".join(command)
        full_env = self._env(env)
        if "/" not in argv[0]:
            argv[0] = _which(argv[0], full_env["PATH"]) or argv[0]
        timeout = timeout_s or self._request.limits.wall_time_s
        req = {"op": "exec", "argv": argv, "env": full_env, "cwd": cwd and self.resolve(cwd),
               "timeout": timeout, "collect": [self.resolve(p) for p in collect],
               "pipes": [self.resolve(p) for p in pipes]}
        started = time.monotonic()
        try:
            reply, data = self._call(req, stdin or b"", timeout=timeout + _GRACE_S)
        except SandboxError:
            if time.monotonic() - started >= timeout:  # init was starved past its deadline: the
                return ExecResult(shown, -9, "", "killed: wall-time limit exceeded (sandbox destroyed)",
                                  wall_ms=timeout * 1000, timed_out=True)
            raise
        self._ooms = int(reply.get("oom_count") or self._ooms)  # (an earlier kill does not explain a later death)
        return self._exec_result(shown, reply, data)

    def kill(self) -> None:
        # init is pid 1 of the sandbox's pid namespace: killing it ends every process of the sandbox
        # at once, and a command in progress returns (the close that follows does not wait for it)
        if self.init_pid:
            try:
                os.kill(self.init_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.close()

    def fork(self) -> "NamespaceSandbox":
        """A new sandbox of the same request whose workspace holds this one's changes (the
        overlay's writable layer, copied; the task's files stay shared). Processes, /tmp and
        /dev/shm are not carried over. Take it while no command runs: a background process that
        writes meanwhile may leave a torn copy."""
        # the new sandbox comes from the zygote while this init reads its layer
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="agentenv-fork-open") as pool:
            opening = pool.submit(self._backend.open, self._request)
            try:
                reply, data = self._call({"op": "snapshot"}, timeout=120.0)
            except BaseException:
                if opening.exception() is None:
                    opening.result().close()
                raise
            child = opening.result()
        try:
            child._call({"op": "restore", "entries": reply["entries"]}, data, timeout=120.0)
        except BaseException:
            child.close()
            raise
        return child

    def close(self) -> None:
        with self._lock:
            if self._dead == "closed":
                return
            was_dead = self._dead
            self._dead = "closed"
            if not was_dead:
                self._sock.close()
        self._backend._release(self._sid)


def base_env(runtime) -> dict[str, str]:
    """The environment every command of a sandbox of *runtime* starts from."""
    env = {"HOME": "/tmp", "USER": "sandbox", "LOGNAME": "sandbox", "LANG": "C.UTF-8",
           "TMPDIR": "/tmp", "PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONUNBUFFERED": "1"}
    env.update(runtime.env)
    return env


def tmpfs_sizes(limits, root: str) -> dict[str, int]:
    """The size in MiB of each tmpfs a sandbox can write: /tmp, the workspace's writable layer
    (*root*) and /dev/shm. Their pages are memory, which no cgroup counts in rootless mode (or the
    rlimit fallback), so together they never exceed ``limits.memory_mb``: /dev/shm gets a sixteenth
    (1 to 16 MiB), /tmp and the workspace half of the rest each, and neither more than four times
    ``max_file_size_mb`` (at least 64 MiB), the cap they had before. (1 MiB each at the least.)"""
    mem = int(limits.memory_mb)
    shm = min(16, max(1, mem // 16))
    each = max(1, min((mem - shm) // 2, max(int(limits.max_file_size_mb) * 4, 64)))
    return {"/tmp": each, root: each, "/dev/shm": shm}


_HOST_PACKAGE_GLOBS = ("/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages",
                       "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                       "/usr/lib/google-cloud-sdk", "/usr/share/google-cloud-sdk")


def _host_package_trees(mounts: Sequence[str]) -> list[str]:
    """Python packages installed on the host, which a sandbox must not see: a task gets exactly its
    declared dependencies (its venv), and the host's copy of a package must not leak the original
    of a file that a task asks the agent to repair."""
    paths = [p for pattern in _HOST_PACKAGE_GLOBS for p in glob.glob(pattern)]
    for mount in mounts:  # an interpreter prefix (not a venv) brings its own site-packages
        if not os.path.exists(os.path.join(mount, "pyvenv.cfg")):
            paths += glob.glob(os.path.join(mount, "lib", "python3*", "site-packages"))
    return sorted(set(paths))


def seed_interpreter(python: str, env: dict[str, str]) -> tuple[str | None, str]:
    """The interpreter whose seed forks the templates for *python* started with *env* (see
    _nszygote._Seed), or (None, why none can). The seed runs as root outside every sandbox, so it
    must be one of the host's own interpreters (found as the runtimes find them), never a file of
    a runtime: a task's dependency may replace its venv's ``python``. It must be of agentenv's
    minor version (the seed runs the zygote's program), and everything an interpreter reads from
    the environment once, at its start, must be what the seed read (the zygote's environment)."""
    real = os.path.realpath(python)
    if real not in _host_pythons():
        return None, f"{python} is not one of the host's Python {sys.version_info[0]}.{sys.version_info[1]} interpreters"
    for key in sorted(set(env) | set(proto.ZYGOTE_ENV)):
        if _nswarm.read_at_start(key) and env.get(key) != proto.ZYGOTE_ENV.get(key):
            return None, f"the runtime's {key} is not the zygote's"
    return real, ""


@functools.lru_cache(maxsize=1)
def _host_pythons() -> frozenset[str]:
    """The real paths of the host's interpreters of agentenv's minor version (agentenv's own too)."""
    found = host_interpreters().get("%d.%d" % sys.version_info[:2], [])
    return frozenset(os.path.realpath(p) for p in found + [getattr(sys, "_base_executable", sys.executable)])


def _venv_site_packages(mounts: tuple[str, ...], version: str = "python3*") -> list[str]:
    """The site-packages a sandbox of these mounts sees: a venv's (an interpreter prefix's own is
    hidden, see _host_package_trees)."""
    return [p for m in mounts if os.path.exists(os.path.join(m, "pyvenv.cfg"))
            for p in glob.glob(os.path.join(m, "lib", version, "site-packages")) if os.path.isdir(p)]


@functools.lru_cache(maxsize=256)
def _has_pytest(mounts: tuple[str, ...]) -> bool:
    """Whether a sandbox of these mounts sees pytest."""
    return any(os.path.isfile(os.path.join(p, "pytest", "__init__.py")) for p in _venv_site_packages(mounts))


@functools.lru_cache(maxsize=256)
def _runtime_preload(mounts: tuple[str, ...], pythonpath: str, prefix: str | None) -> dict | None:
    """What a seed of this runtime imports once for all its templates (see _nswarm.preload_runtime):
    its pytest, found where a cold start finds it, with the runtime's bytecode cache *prefix*. None
    where a cold start could find another module first or run code before it (*pythonpath*, a
    ``.pth`` file in site-packages). (A runtime does not change once built.)"""
    if pythonpath:
        return None
    # (a seed's interpreter is of agentenv's version)
    paths = _venv_site_packages(mounts, "python%d.%d" % sys.version_info[:2])
    if not any(os.path.isfile(os.path.join(p, "pytest", "__init__.py")) for p in paths) or any(
            glob.glob(os.path.join(p, "*.pth")) for p in paths):
        return None
    return {"paths": paths, "prefix": prefix}


def _which(name: str, path: str) -> str | None:
    for d in path.split(":"):
        # resolved on the host: the runtime's paths are mounted at the same place inside
        candidate = os.path.join(d, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
