"""Testing helpers: the sandbox contract every backend must keep, and an in-memory backend.

:func:`check_backend` is to a sandbox backend what Gymnasium's ``check_env`` is to an environment:
the namespace backend, the Docker backend and a stranger's backend all run it, so "a backend" means
the same thing everywhere. It raises :class:`AssertionError` naming the clause a backend breaks::

    from agentenv.testing import check_backend
    check_backend(MyBackend(), runtime)

:class:`MemoryBackend` is the in-memory implementation for fast tests of everything above the
sandbox (environment, reward, actions, eval), in the spirit of httpx's ``MockTransport``: files live
in a dict and every command is answered by a *handler* you give it, never run on the host::

    def handler(command, sandbox):                      # -> ExecResult, or (exit_code, stdout, stderr)
        solved = sandbox.files.get("/app/solution.py") == b"print(42)\\n"
        sandbox.files[sandbox.env["AGENTENV_REWARD_FILE"]] = b"1" if solved else b"0"
        return 0, "", ""

    env = agentenv.CodingEnv(task, backend=MemoryBackend(handler))
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile
import threading
import time
import uuid
from typing import Any, Callable, Mapping, Sequence

from ._errors import SandboxError
from ._sandbox import Availability, ExecResult, Isolation, RuntimeEnv, Sandbox, SandboxBackend, SandboxRequest
from ._spec import Limits
from ._workspace import materialize

__all__ = ["MemoryBackend", "MemorySandbox", "check_backend"]

Handler = Callable[[str, "MemorySandbox"], Any]


# --------------------------------------------------------------------------- the in-memory backend

class MemorySandbox(Sandbox):
    """A sandbox whose files are a dict (absolute sandbox path -> bytes) and whose commands a handler answers."""

    capabilities = frozenset({"pipes"})

    def __init__(self, backend: "MemoryBackend", request: SandboxRequest, files: dict[str, bytes]):
        self.backend, self.request = backend, request
        self.root = request.root.rstrip("/") or "/"
        self.isolation = Isolation("memory", {"confinement": "none: commands are answered by a handler, "
                                                             "nothing runs"}, ())
        self.files = files
        #: the environment of the command being answered (its ``env`` argument)
        self.env: dict[str, str] = {}
        self.cwd = self.root
        self.commands: list[str] = []
        self._alive = True

    def _check(self) -> None:
        if not self._alive:
            raise SandboxError("the sandbox is closed")

    def exec(self, command: str | Sequence[str], *, timeout_s: float | None = None, env: Mapping[str, str] | None = None,
             cwd: str | None = None, stdin: bytes | None = None, collect: Sequence[str] = (),
             pipes: Sequence[str] = ()) -> ExecResult:
        self._check()
        shown = command if isinstance(command, str) else " ".join(command)
        self.commands.append(shown)
        self.env = {**self.request.runtime.env, **(env or {})}
        self.cwd = self.resolve(cwd) if cwd else self.root
        for path in pipes:
            self.files.pop(self.resolve(path), None)
        start = time.monotonic()
        answer = self.backend.handler(shown, self)
        if isinstance(answer, ExecResult):
            result = answer
        else:
            code, out, err = answer
            result = ExecResult(shown, int(code), str(out), str(err), wall_ms=(time.monotonic() - start) * 1000)
        artifacts = dict(result.artifacts)
        for path in [*collect, *pipes]:
            full = self.resolve(path)
            if full in self.files:
                artifacts[full] = self.files[full]
        for path in pipes:
            self.files.pop(self.resolve(path), None)
        return ExecResult(result.command, result.exit_code, result.stdout, result.stderr, result.wall_ms, result.cpu_ms,
                          result.peak_memory_mb, result.timed_out, result.oom_killed, result.output_truncated, artifacts)

    def read_file(self, path: str) -> bytes:
        self._check()
        full = self.resolve(path)
        if full in self.files:
            return self.files[full]
        if any(p.startswith(full.rstrip("/") + "/") for p in self.files):
            raise IsADirectoryError(21, "Is a directory", path)
        raise FileNotFoundError(2, "No such file or directory", path)

    def write_file(self, path: str, data: bytes, mode: int = 0o644) -> None:
        self._check()
        full = self.resolve(path)
        if any(p.startswith(full + "/") for p in self.files):
            raise IsADirectoryError(21, "Is a directory", path)
        parent = posixpath.dirname(full)
        while parent not in ("/", ""):
            if parent in self.files:
                raise NotADirectoryError(20, "Not a directory", path)
            parent = posixpath.dirname(parent)
        self.files[full] = bytes(data)

    def remove(self, path: str) -> None:
        self._check()
        full = self.resolve(path)
        for p in [p for p in self.files if p == full or p.startswith(full.rstrip("/") + "/")]:
            del self.files[p]

    def list_files(self, path: str = ".") -> list[str]:
        self._check()
        base = self.resolve(path).rstrip("/") + "/"
        return sorted(p[len(base):] for p in self.files if p.startswith(base))

    def kill_processes(self) -> None:
        self._check()  # (its commands are calls of the handler: none is left running)

    def close(self) -> None:
        if self._alive:
            self._alive = False
            self.files = {}
            self.backend._closed(self)

    @property
    def alive(self) -> bool:
        return self._alive


def _no_programs(command: str, sandbox: MemorySandbox) -> tuple[int, str, str]:
    return 127, "", f"{command}: the in-memory backend runs no programs; give MemoryBackend a handler\n"


class MemoryBackend(SandboxBackend):
    """Sandboxes in memory: the workspace is read into a dict, every command goes to *handler*.

    ``handler(command, sandbox)`` returns an :class:`agentenv.ExecResult` or ``(exit_code, stdout,
    stderr)``; it may read and change ``sandbox.files`` (absolute paths) and read ``sandbox.env``.
    Nothing runs on the host. :attr:`opened` counts the sandboxes made, :attr:`open_count` those
    still open (a leak test's figure).
    """

    name = "memory"
    priority = -100  # never chosen by backend="auto"

    def __init__(self, handler: Handler | None = None):
        self.handler = handler or _no_programs
        self.opened = 0
        self._open: set[int] = set()
        self._lock = threading.Lock()

    @classmethod
    def availability(cls) -> Availability:
        return Availability(True)

    def open(self, request: SandboxRequest) -> MemorySandbox:
        root = request.root.rstrip("/") or "/"
        files: dict[str, bytes] = {}
        if request.workspace_dir:  # the task's pristine workspace on the host: read, never written
            for dirpath, _, names in os.walk(request.workspace_dir):
                for name in names:
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, request.workspace_dir).replace(os.sep, "/")
                    with open(full, "rb") as f:
                        files[f"{root}/{rel}"] = f.read()
        sandbox = MemorySandbox(self, request, files)
        with self._lock:
            self.opened += 1
            self._open.add(id(sandbox))
        return sandbox

    def _closed(self, sandbox: MemorySandbox) -> None:
        with self._lock:
            self._open.discard(id(sandbox))

    @property
    def open_count(self) -> int:
        return len(self._open)


# --------------------------------------------------------------------------- the contract

class _Contract:
    """Each ``clause_*`` method is one promise of the sandbox protocol (``agentenv.Sandbox``)."""

    def __init__(self, backend: SandboxBackend, runtime: RuntimeEnv, workspace_dir: str | None, root: str):
        self.backend, self.runtime, self.workspace_dir, self.root = backend, runtime, workspace_dir, root

    def open(self, **limits: Any) -> Sandbox:
        request = SandboxRequest(self.runtime, self.workspace_dir, self.root, Limits(**limits) if limits else Limits(),
                                 {"agentenv.contract": uuid.uuid4().hex[:8]})
        return self.backend.open(request)

    def clause_lifecycle(self) -> None:
        box = self.open()
        assert box.alive, "a new sandbox is alive"
        assert isinstance(box.isolation, Isolation) and box.isolation.backend, "a sandbox says what isolation it has"
        assert box.root == self.root.rstrip("/"), f"sandbox.root is the requested root ({box.root!r})"
        box.close()
        assert not box.alive, "a closed sandbox is not alive"
        box.close()  # idempotent
        with self.open() as other:
            assert other.alive
        assert not other.alive, "leaving the context manager closes the sandbox"

    def clause_workspace(self) -> None:
        with self.open() as box:
            listed = box.list_files(self.root)
            if self.workspace_dir:
                assert "main.py" in listed and "pkg/data.txt" in listed, f"the workspace is laid out at root: {listed}"
                assert box.read_file("main.py") == b"print('contract')\n"
                assert box.read_file(f"{self.root}/pkg/data.txt") == b"data\n", "absolute paths resolve too"
            box.write_file("main.py", b"changed\n")
            assert box.read_file("main.py") == b"changed\n"
        with self.open() as fresh:
            if self.workspace_dir:
                assert fresh.read_file("main.py") == b"print('contract')\n", \
                    "a sandbox starts from the pristine workspace: another's writes never reach it"

    def clause_files(self) -> None:
        with self.open() as box:
            box.write_file("a/b/c.txt", b"deep")  # parents are made
            assert box.read_file("a/b/c.txt") == b"deep"
            assert "a/b/c.txt" in box.list_files("."), "list_files gives paths relative to the directory"
            assert box.list_files("a") == ["b/c.txt"]
            listed = box.list_files(".")
            assert listed == sorted(listed), "list_files is sorted"
            box.write_file("a/b/c.txt", b"replaced")
            assert box.read_file("a/b/c.txt") == b"replaced"
            data = bytes(range(256)) * 64
            box.write_file("bin.dat", data)
            assert box.read_file("bin.dat") == data, "bytes round-trip exactly"
            try:
                box.read_file("no/such/file")
            except FileNotFoundError:
                pass
            else:
                raise AssertionError("reading a missing file raises FileNotFoundError")
            try:
                box.read_file("a/b")
            except IsADirectoryError:
                pass
            else:
                raise AssertionError("reading a directory raises IsADirectoryError")
            box.remove("no/such/path")  # a missing path is not an error
            box.remove("a")
            assert not [p for p in box.list_files(".") if p.startswith("a/")], "remove takes a directory tree"

    def clause_isolation_between_sandboxes(self) -> None:
        with self.open() as one, self.open() as two:
            one.write_file("only-here.txt", b"1")
            assert "only-here.txt" not in two.list_files("."), "two sandboxes share no files"

    def clause_exec(self) -> None:
        with self.open() as box:
            r = box.exec("printf out; printf err >&2; exit 3")
            assert (r.exit_code, r.stdout, r.stderr) == (3, "out", "err"), f"exit status and both streams: {r}"
            assert not r.ok and not r.timed_out
            r = box.exec(["printf", "%s", "argv list"])
            assert r.exit_code == 0 and r.stdout == "argv list", f"an argv list runs without a shell: {r}"
            r = box.exec("printf %s \"$CONTRACT_VAR\"", env={"CONTRACT_VAR": "set"})
            assert r.stdout == "set", "env reaches the command"
            box.write_file("sub/x.txt", b"x")
            r = box.exec("pwd", cwd=f"{self.root}/sub")
            assert r.stdout.strip() == f"{self.root.rstrip('/')}/sub", f"cwd is honoured: {r.stdout!r}"
            r = box.exec("cat", stdin=b"fed")
            assert r.stdout == "fed", "stdin reaches the command"
            r = box.exec("printf made > made.txt", collect=["made.txt", "missing.txt"])
            assert r.artifacts.get(box.resolve("made.txt")) == b"made", "collect returns files read after the command"
            assert box.resolve("missing.txt") not in r.artifacts, "collect leaves out missing files"
            assert box.read_file("made.txt") == b"made", "what a command writes, the file requests see"

    def clause_timeout(self) -> None:
        with self.open() as box:
            start = time.monotonic()
            r = box.exec("sleep 30", timeout_s=1)
            assert r.timed_out and not r.ok, f"a command past its time limit is killed and flagged: {r}"
            assert time.monotonic() - start < 25, "the time limit is enforced"
            assert box.exec("true").ok, "the sandbox still works after a timeout"

    _IGNORED_WORKERS = ("import os, signal, time\n"
                        "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
                        "r, w = os.pipe()\n"
                        "for _ in range(2):\n"
                        "    if os.fork() == 0:\n"
                        "        start = time.process_time()\n"
                        "        while time.process_time() - start < 0.15: pass\n"
                        "        os.write(w, b\"x\"); os._exit(0)\n"
                        "os.close(w)\n"
                        "while os.read(r, 64): pass\n"
                        "print(\"done\")")

    def clause_usage(self) -> None:
        # The same work done by the command itself and by an orphan it leaves it to (a double fork
        # that reports through a FIFO, so the command waits without using the CPU): cpu_ms counts
        # the work either way, or a reward on CPU time is won by moving the work out of sight.
        work = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"
        with self.open() as box:
            direct = box.exec(work)
            handed = box.exec(f"rm -f /tmp/contract-done; mkfifo /tmp/contract-done; "
                              f"( ( {work}; echo done > /tmp/contract-done ) & ); cat /tmp/contract-done")
            assert direct.ok and handed.ok and handed.stdout.strip() == "done", f"{direct} {handed}"
            assert direct.cpu_ms > 0, f"cpu_ms measures a command's CPU time: {direct}"
            assert handed.cpu_ms >= direct.cpu_ms / 2, (
                f"cpu_ms counts the processes a command leaves behind: {handed.cpu_ms:.0f} ms with the work "
                f"in an orphan, {direct.cpu_ms:.0f} ms done by the command itself")
            if "CPU cgroup" in str(box.isolation.features.get("cpu_time", "")):
                # a backend that says cpu_ms counts the sandbox's CPU: two workers whose parent ignores
                # SIGCHLD are reaped by the kernel, and their CPU reaches no rusage (0.3 s of work)
                ignored = box.exec(f"command -v python3 >/dev/null || exit 77; python3 -c '{self._IGNORED_WORKERS}'")
                if ignored.exit_code != 77:
                    assert ignored.ok and ignored.stdout.strip() == "done", f"{ignored}"
                    assert ignored.cpu_ms >= 250, (
                        f"cpu_ms counts children the kernel reaped: {ignored.cpu_ms:.0f} ms for two workers of "
                        f"0.15 s of CPU each whose parent ignored SIGCHLD")
            if "memory cgroup" in str(box.isolation.features.get("peak_memory", "")):
                # a backend that says peak_memory_mb counts the sandbox's memory: files kept in its
                # tmpfs are memory no process's high-water mark shows (dd's own is ~2 MiB)
                held = box.exec("dd if=/dev/zero of=/tmp/contract-held bs=1M count=32 2>/dev/null && echo held")
                assert held.stdout.strip() == "held" and held.peak_memory_mb >= 30, (
                    f"peak_memory_mb counts files the command keeps in memory: {held.peak_memory_mb:.1f} MB "
                    f"for 32 MB written to /tmp ({held})")

    def clause_pipes(self) -> None:
        with self.open() as box:
            if "pipes" not in box.capabilities:
                return
            path = "/tmp/contract-pipe"
            r = box.exec(f"printf report > {path}", pipes=[path])
            assert r.artifacts.get(path) == b"report", f"a pipe returns what the command wrote to it: {r.artifacts}"
            nested = "/tmp/contract-dir/sub/pipe"
            r = box.exec(f"printf nested > {nested}", pipes=[nested])
            assert r.artifacts.get(nested) == b"nested", "a pipe's missing parent directories are made"
            r = box.exec(f"test -e {path} && echo left || echo gone")
            assert r.stdout.strip() == "gone", "a pipe is removed after its command: a later writer finds nothing"

    def clause_no_host_paths(self) -> None:
        with self.open() as box:
            box.exec("ln -s /etc/hostname link.txt")
            box.write_file("link.txt", b"replaced, not followed")
            assert box.read_file("link.txt") == b"replaced, not followed", "write_file replaces a symlink"


#: clauses that need a backend that runs programs
_EXEC_CLAUSES = ("exec", "timeout", "pipes", "no_host_paths", "usage")


def check_backend(backend: SandboxBackend, runtime: RuntimeEnv | None = None, *, root: str = "/app",
                  workspace_dir: str | None = None, runs_programs: bool = True, skip: Sequence[str] = ()) -> list[str]:
    """Check *backend* against the sandbox contract; returns the clauses checked.

    *runtime* is what sandboxes mount (default: a runtime with nothing to mount, for backends whose
    base system has ``sh`` and coreutils); *workspace_dir* a pristine workspace holding ``main.py``
    (``print('contract')``) and ``pkg/data.txt`` (``data``), made in a temporary directory when not
    given. ``runs_programs=False`` leaves out the clauses that run commands (an in-memory backend);
    *skip* names clauses to leave out, each for a reason the caller prints. Raises AssertionError
    naming the broken clause.
    """
    runtime = runtime or RuntimeEnv("contract", (), {"PATH": "/usr/local/bin:/usr/bin:/bin"})
    tmp = None
    if workspace_dir is None:
        tmp = tempfile.mkdtemp(prefix="agentenv-contract-")
        workspace_dir = materialize({"main.py": b"print('contract')\n", "pkg/data.txt": b"data\n"}, tmp)
    contract = _Contract(backend, runtime, workspace_dir, root)
    checked = []
    try:
        for name in (n[len("clause_"):] for n in dir(contract) if n.startswith("clause_")):
            if name in skip or (not runs_programs and name in _EXEC_CLAUSES):
                continue
            try:
                getattr(contract, f"clause_{name}")()
            except Exception as exc:  # an unexpected exception breaks the clause too
                what = str(exc) if isinstance(exc, AssertionError) else f"{type(exc).__name__}: {exc}"
                raise AssertionError(f"{type(backend).__name__} breaks the sandbox contract, clause {name!r}: "
                                     f"{what}") from exc
            checked.append(name)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return checked
