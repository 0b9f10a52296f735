"""The sandbox protocol: what every backend (namespace, docker, ...) provides.

A backend turns a :class:`SandboxRequest` into a :class:`Sandbox`. A sandbox is a private machine
for one episode: a workspace at ``request.root`` that starts as ``request.workspace_dir``, the
runtime's host paths mounted read-only, no network, and the request's limits. The protocol stays
small on purpose: ``exec``, ``read_file``, ``write_file``, ``remove``, ``list_files``, ``close``.
File operations resolve paths *inside* the sandbox, so a symlink the agent planted cannot reach the
host. ``close`` is idempotent and leaves nothing behind (processes, mounts, temp dirs, containers).
"""

from __future__ import annotations

import abc
import posixpath
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Sequence

from ._errors import SandboxError
from ._spec import DEFAULT_ROOT, Limits
#: the unprivileged user (and group) that runs commands and owns the workspace in a sandbox
SANDBOX_UID = 65534


@dataclass(frozen=True)
class RuntimeEnv:
    """A prepared runtime: host paths to mount read-only (at the same path) and the process env.

    ``fingerprint`` proves which environment ran (interpreter version, installed packages, content
    hash); it is copied into every episode's ``info["runtime"]``.
    """

    name: str
    mounts: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    shell: str = "/bin/sh"


@dataclass(frozen=True)
class SandboxRequest:
    """Everything a backend needs to open one sandbox."""

    runtime: RuntimeEnv
    workspace_dir: str | None = None  # host directory copied (copy-on-write) to ``root``; never written
    root: str = DEFAULT_ROOT
    limits: Limits = Limits()
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Isolation:
    """What confinement a sandbox really has; ``warnings`` name every weaker-than-asked feature."""

    backend: str
    features: Mapping[str, str] = field(default_factory=dict)  # e.g. {"memory": "cgroup", "pid": "namespace"}
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"backend": self.backend, "features": dict(self.features), "warnings": list(self.warnings)}


@dataclass(frozen=True)
class ExecResult:
    """The outcome of one command. Timing and memory fields are measurements: they are left out of
    ``==`` so that two runs of the same command compare equal when they behaved the same."""

    command: str
    exit_code: int  # -N when killed by signal N
    stdout: str
    stderr: str
    wall_ms: float = field(default=0.0, compare=False)
    cpu_ms: float = field(default=0.0, compare=False)
    peak_memory_mb: float = field(default=0.0, compare=False)
    timed_out: bool = False
    oom_killed: bool = False
    output_truncated: bool = False
    artifacts: Mapping[str, bytes] = field(default_factory=dict, compare=False)  # files collected after the run
    #: how the command started: "warm" (forked from the sandbox's warm interpreter), "cold" or
    #: "cold: <why not warm>"; "" where the backend does not say
    start: str = field(default="", compare=False)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.oom_killed

    def transcript(self) -> str:
        """The command, its status and its output, as an agent reads them in an observation."""
        parts = [f"$ {self.command}", f"[exit code {self.exit_code}"
                 + (", timed out" if self.timed_out else "") + (", out of memory" if self.oom_killed else "")
                 + (", output truncated" if self.output_truncated else "") + "]"]
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.stderr:
            parts.append("[stderr]\n" + self.stderr.rstrip("\n"))
        return "\n".join(parts)

    def to_json(self, max_chars: int | None = None) -> dict[str, Any]:
        def cut(text: str) -> str:
            return text if max_chars is None or len(text) <= max_chars else text[-max_chars:]

        return {
            "command": self.command,
            "exit_code": self.exit_code,
            "stdout": cut(self.stdout),
            "stderr": cut(self.stderr),
            "wall_ms": round(self.wall_ms, 3),
            "cpu_ms": round(self.cpu_ms, 3),
            "peak_memory_mb": round(self.peak_memory_mb, 3),
            "timed_out": self.timed_out,
            "oom_killed": self.oom_killed,
            "output_truncated": self.output_truncated,
        }


class Sandbox(abc.ABC):
    """One isolated machine for one episode. Use as a context manager or call :meth:`close`."""

    root: str
    isolation: Isolation
    #: optional features; "pipes": ``exec(..., pipes=[paths])`` creates each path as a named pipe
    #: before the command and returns everything written to it during the command in ``artifacts``;
    #: "fork": :meth:`fork` branches the sandbox
    capabilities: frozenset[str] = frozenset()

    @abc.abstractmethod
    def exec(
        self,
        command: str | Sequence[str],
        *,
        timeout_s: float | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bytes | None = None,
        collect: Sequence[str] = (),
        pipes: Sequence[str] = (),
    ) -> ExecResult:
        """Run *command* (a shell string, or an argv list) as the unprivileged sandbox user.

        ``collect`` names files (sandbox paths) whose contents are read right after the command
        and returned in ``ExecResult.artifacts`` (missing ones are left out). ``pipes`` (only where
        :attr:`capabilities` holds ``"pipes"``) names paths created as named pipes before the
        command; everything written to them during the command is returned in ``artifacts``, and
        they are removed afterwards (a report that can be written once, by the command's run only). The wall-time limit
        is ``timeout_s`` or the request's ``limits.wall_time_s``; on expiry every process the
        command started is killed and ``timed_out`` is set. Raises :class:`SandboxError` when the
        sandbox itself failed (never for a failing command).
        """

    @abc.abstractmethod
    def read_file(self, path: str) -> bytes:
        """Contents of *path* (relative to ``root`` or absolute inside the sandbox).
        Raises FileNotFoundError / IsADirectoryError like the built-in ``open``."""

    @abc.abstractmethod
    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        """Create or replace *path*, making parent directories; an existing symlink is replaced,
        never followed."""

    @abc.abstractmethod
    def remove(self, path: str) -> None:
        """Remove a file, symlink or directory tree; a missing path is not an error."""

    @abc.abstractmethod
    def list_files(self, path: str = ".") -> list[str]:
        """Every regular file and symlink below *path*, as sorted paths relative to *path*."""

    @abc.abstractmethod
    def close(self) -> None:
        """Destroy the sandbox and everything in it. Idempotent."""

    def kill(self) -> None:
        """Stop every process of the sandbox *now*, even while a command runs, then close it.

        A scheduler cuts a straggler at its deadline with this: ``close`` may wait for the running
        command to return first. The default is ``close``; a backend that can do better overrides it."""
        self.close()

    def kill_processes(self) -> None:
        """Kill every process the sandbox's commands started (those left running in the background),
        and leave the sandbox open. The default is a command; a backend whose server can do it
        without starting one overrides it (a sandbox whose processes hold every pid is cleared too)."""
        self.exec("kill -9 -1 2>/dev/null; true", timeout_s=10)

    @property
    @abc.abstractmethod
    def alive(self) -> bool:
        """False once closed or once the sandbox died."""

    def fork(self) -> "Sandbox":
        """A new sandbox whose workspace starts as this one's is now (capability "fork"): the
        changes made to the workspace are copied, the task's files shared; processes, /tmp and
        anything else outside the workspace are not carried over. The two then diverge."""
        raise SandboxError(f"{type(self).__name__} cannot fork (no 'fork' capability)")

    def resolve(self, path: str) -> str:
        """Absolute sandbox path for *path*; relative paths are taken from ``root``."""
        return posixpath.normpath(posixpath.join(self.root, path))

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AgentSandbox(Sandbox):
    """A sandbox run by an agent process inside it that answers framed requests (header, body).

    The namespace backend's init and the Docker backend's helper speak the same requests; this
    base turns the file operations into requests and an exec reply into an :class:`ExecResult`.
    A subclass sends a request through :meth:`_call` and implements ``exec``, ``close`` and
    ``alive``.
    """

    @abc.abstractmethod
    def _call(self, header: dict[str, Any], body: bytes = b"",
              timeout: float | None = None) -> tuple[dict[str, Any], bytes]:
        """Send one request, return (reply header, reply body); raise SandboxError on failure."""

    @staticmethod
    def _raise_reply_error(req: dict[str, Any], reply: dict[str, Any], who: str) -> None:
        """Raise what an error reply says: the file errors as Python raises them, an ``OSError`` of a
        file request as such, anything else (an exec the server could not run) as SandboxError."""
        err = reply["error"]
        cls = {"FileNotFoundError": FileNotFoundError, "IsADirectoryError": IsADirectoryError,
               "NotADirectoryError": NotADirectoryError, "PermissionError": PermissionError}.get(err)
        if cls is not None:
            raise cls(reply.get("errno") or 0, reply.get("message", err), req.get("path"))
        if err == "OSError" and req["op"] != "exec":
            raise OSError(reply.get("errno") or 0, reply.get("message", err))
        raise SandboxError(f"{who}: {req['op']} failed: {reply.get('message', err)}")

    def read_file(self, path: str) -> bytes:
        return self._call({"op": "read", "path": self.resolve(path)})[1]

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self._call({"op": "write", "path": self.resolve(path), "mode": mode}, data)

    def remove(self, path: str) -> None:
        self._call({"op": "remove", "path": self.resolve(path)})

    def kill_processes(self) -> None:
        self._call({"op": "kill"})

    def list_files(self, path: str = ".") -> list[str]:
        return self._call({"op": "list", "path": self.resolve(path)})[0]["files"]

    @staticmethod
    def _exec_result(shown: str, reply: dict[str, Any], data: bytes) -> ExecResult:
        """The ExecResult of an exec reply: stdout, stderr, then the artifacts, in the body."""
        o, e = reply["stdout_len"], reply["stderr_len"]
        artifacts = {path: data[o + e + off: o + e + off + n] for path, (off, n) in reply["artifacts"].items()}
        return ExecResult(
            command=shown, exit_code=reply["exit_code"],
            stdout=data[:o].decode("utf-8", "replace"), stderr=data[o:o + e].decode("utf-8", "replace"),
            wall_ms=reply["wall_ms"], cpu_ms=reply["cpu_ms"], peak_memory_mb=reply["peak_memory_mb"],
            timed_out=reply["timed_out"], oom_killed=reply["oom_killed"], output_truncated=reply["truncated"],
            artifacts=artifacts, start=reply.get("start", ""))


@dataclass(frozen=True)
class Availability:
    """Whether a backend can run here, and if not, why and how to fix it."""

    ok: bool
    reason: str = ""


class SandboxBackend(abc.ABC):
    """A factory of sandboxes, registered through the ``agentenv_sandbox_backends`` hook."""

    name: ClassVar[str]
    #: higher wins when ``backend="auto"`` picks among available backends
    priority: ClassVar[int] = 0

    @classmethod
    @abc.abstractmethod
    def availability(cls) -> Availability:
        """Can this backend run on this host? Cheap; cached by the caller."""

    @abc.abstractmethod
    def open(self, request: SandboxRequest) -> Sandbox:
        """Create a sandbox. Raises :class:`SandboxError` (chained to the native error) on failure."""

    def close(self) -> None:
        """Release backend-wide resources (pools, daemons). Idempotent."""
