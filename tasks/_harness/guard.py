"""A trusted check that runs the agent's code in the same sandbox and still keeps its score honest.

Shipped as a hidden file (``.check/guard.py``) with every task of the testwriting, logs and ops
suites; each suite's ``build.py`` inlines it from ``tasks/_harness/guard.py``. Standard library
only: it runs on the task's interpreter, inside the sandbox, as the same user as the code it judges.
What the guard does about that, before any agent code runs:

1. The reward channel. The environment gives the check a fresh named pipe in
   ``$AGENTENV_REWARD_FILE`` (the ``reward_file`` report format). The guard opens it, unlinks the
   path and drops the variable; the score is written to the open descriptor last. A child finds no
   path to write to, and ``prctl(PR_SET_DUMPABLE, 0)`` closes ``/proc/<guard>/fd``, ``mem`` and
   ``environ`` to processes of the same user. Killing the guard leaves no score at all (0). A backend
   without pipes hands over a plain file, which a child could fill after killing the guard: the guard
   then refuses to judge (no score, and says why on stderr).
2. Secrets. Everything under the check's folder (expected answers, mutants, hidden inputs) is read
   into memory and deleted.
3. Runs that look alike. Before each run every other process of the sandbox is killed, the workspace
   is put back as the agent left it and ``/tmp`` and ``/dev/shm`` are emptied (what a run must see is
   written afresh), so a run cannot leave files or processes to the next one. What no reset puts
   back is the sandbox's counters (process ids, inode numbers): a run can tell how many came before
   it, and carry a few bits to the next. A check must therefore not tell its runs apart by their
   order: the testwriting check shuffles every subject, and the ops check replays a root in a random
   order with its idempotence run.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass

PR_SET_DUMPABLE = 4
MAX_OUTPUT = 256 << 10
CHILD_ENV = {"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "USER": "sandbox",
             "LOGNAME": "sandbox", "PYTHONDONTWRITEBYTECODE": "1", "TZ": "UTC"}


class Refused(Exception):
    """The check cannot judge safely here (no pipe for the score, say)."""


@dataclass(frozen=True)
class Result:
    exit_code: int  # -N: killed by signal N
    timed_out: bool
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


class Guard:
    def __init__(self, check_dir: str, workspace: str = "/app", scratch: tuple[str, ...] = ("/tmp", "/dev/shm")):
        self.workspace, self.scratch = workspace, scratch
        self._fd = self._take_reward_channel()
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            raise Refused("prctl(PR_SET_DUMPABLE, 0) failed: the guard's descriptors would be reachable")
        os.umask(0o022)
        self.files = _read_tree(check_dir)
        shutil.rmtree(check_dir, ignore_errors=True)
        self._protected = {os.getpid(), *_ancestors()}
        self.path = os.environ.get("PATH", "/usr/bin:/bin")
        self.snapshot = _snapshot(workspace)

    @staticmethod
    def _take_reward_channel() -> int:
        path = os.environ.pop("AGENTENV_REWARD_FILE", None)
        if not path:
            raise Refused("no $AGENTENV_REWARD_FILE: run this check as a step with \"report\": "
                          "{\"format\": \"reward_file\"}")
        try:
            st = os.lstat(path)
        except OSError as exc:
            raise Refused(f"the reward file {path} is missing ({exc.strerror})") from None
        if not stat.S_ISFIFO(st.st_mode):
            raise Refused("the reward file is a plain file, not a pipe: this backend cannot keep the agent's "
                          "code from writing the score (use the namespace backend)")
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        os.unlink(path)
        return fd

    # ------------------------------------------------------------------ between runs
    def kill_others(self) -> None:
        """SIGKILL every process of the sandbox except init, the guard and its ancestors, until none is left."""
        for _ in range(200):
            victims = [pid for pid in _live_pids() if pid not in self._protected and pid != 1]
            if not victims:
                return
            for pid in victims:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _reap_children()
            time.sleep(0.005)

    def reset(self, keep: tuple[str, ...] = ()) -> None:
        """A clean slate: no other process, the workspace as the agent left it, empty scratch folders
        (paths in *keep* and their parents survive)."""
        self.kill_others()
        _clear(self.workspace, ())
        _restore(self.workspace, self.snapshot)
        for folder in self.scratch:
            _clear(folder, keep)

    # ------------------------------------------------------------------ one run of agent code
    def run(self, argv: list[str], *, cwd: str, timeout: float, env: dict[str, str] | None = None,
            stdin: bytes | None = None) -> Result:
        """Run *argv* with a scrubbed environment and no inherited descriptors; kill what it leaves behind.
        *stdin* (at most 1 MiB) is in the pipe the command reads before it starts."""
        child_env = {"PATH": self.path, **CHILD_ENV, **(env or {})}
        feed = subprocess.DEVNULL if stdin is None else _filled_pipe(stdin)
        try:
            proc = subprocess.Popen(argv, cwd=cwd, env=child_env, stdin=feed, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
        except OSError as exc:
            return Result(127, False, b"", f"cannot run {argv[0]}: {exc}".encode())
        finally:
            if stdin is not None:
                os.close(feed)
        out, err, timed_out = _communicate(proc, timeout)
        if timed_out:
            self.kill_others()
        code = proc.wait()
        self.kill_others()
        return Result(code, timed_out, out, err)

    # ------------------------------------------------------------------ the verdict
    def finish(self, score: float, lines: list[str] = ()) -> None:
        self.kill_others()
        score = min(1.0, max(0.0, float(score)))
        for line in lines:
            print(line)
        print(f"score {score:.4f}")
        sys.stdout.flush()
        os.write(self._fd, f"{score:.6f}\n".encode())
        os.close(self._fd)


def main(judge) -> int:
    """Run ``judge(guard)`` and report a refusal without a score: the entry point of every check."""
    try:
        guard = Guard(os.path.dirname(os.path.abspath(sys.argv[0])))
    except Refused as exc:
        print(f"check refused: {exc}", file=sys.stderr)
        return 2
    judge(guard)
    return 0


# --------------------------------------------------------------------------- helpers

def _read_tree(top: str) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, _, names in os.walk(top):
        for name in names:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, top)] = f.read()
    return out


def _ancestors() -> list[int]:
    pids, pid = [], os.getppid()
    while pid > 1:
        pids.append(pid)
        try:
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return pids


def _live_pids() -> list[int]:
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if state not in ("Z", "X"):
                pids.append(int(name))
    return pids


def _reap_children() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _filled_pipe(data: bytes) -> int:
    """The read end of a pipe that already holds *data* and is closed for writing."""
    if len(data) > 1 << 20:
        raise ValueError("at most 1 MiB goes to a command's stdin")
    r, w = os.pipe()
    try:
        if len(data) > 65536:
            fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, len(data))  # it all fits: no write waits for the reader
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    return r


def _communicate(proc: subprocess.Popen, timeout: float) -> tuple[bytes, bytes, bool]:
    """stdout and stderr (each cut at MAX_OUTPUT) within *timeout* seconds, and whether it ran out."""
    sel = selectors.DefaultSelector()
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    for pipe in bufs:
        os.set_blocking(pipe.fileno(), False)
        sel.register(pipe, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            break
        for key, _ in sel.select(min(left, 0.5)):
            try:
                chunk = os.read(key.fileobj.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            buf = bufs[key.fileobj]
            if len(buf) < MAX_OUTPUT:
                buf += chunk[: MAX_OUTPUT - len(buf)]
    sel.close()
    for pipe in bufs:
        pipe.close()
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        timed_out = False
    except subprocess.TimeoutExpired:
        timed_out = True
    return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), timed_out


Entry = tuple[str, int, bytes]  # kind ("f", "d", "l"), mode, content or link target


def _snapshot(top: str) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for dirpath, dirnames, names in os.walk(top):
        for name in list(dirnames):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[os.path.relpath(full, top)] = ("l", 0, os.readlink(full).encode())
                dirnames.remove(name)
            else:
                out[os.path.relpath(full, top)] = ("d", stat.S_IMODE(st.st_mode), b"")
        for name in names:
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            rel = os.path.relpath(full, top)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("l", 0, os.readlink(full).encode())
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    out[rel] = ("f", stat.S_IMODE(st.st_mode), f.read())
    return out


def _restore(top: str, entries: dict[str, Entry]) -> None:
    for rel in sorted(entries):
        kind, mode, data = entries[rel]
        full = os.path.join(top, rel)
        if kind == "d":
            os.makedirs(full, exist_ok=True)
        elif kind == "l":
            os.symlink(data.decode(), full)
        else:
            with open(full, "wb") as f:
                f.write(data)
    for rel in sorted(entries, reverse=True):  # modes last: a read-only folder must still be filled
        kind, mode, _ = entries[rel]
        if kind != "l":
            os.chmod(os.path.join(top, rel), mode)


def _clear(top: str, keep: tuple[str, ...]) -> None:
    """Remove everything below *top* except the paths in *keep* (and the folders leading to them)."""
    try:
        names = os.listdir(top)
    except OSError:
        return
    for name in names:
        full = os.path.join(top, name)
        if any(k == full or k.startswith(full + "/") for k in keep):
            if any(k.startswith(full + "/") for k in keep) and not os.path.islink(full) and os.path.isdir(full):
                _clear(full, keep)
            continue
        remove(full)


def remove(path: str) -> None:
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        try:
            os.chmod(path, 0o700)
        except OSError:
            pass
        for dirpath, dirnames, _ in os.walk(path):  # folders the agent made unreadable or unwritable
            for d in [dirpath, *(os.path.join(dirpath, n) for n in dirnames)]:
                try:
                    if not os.path.islink(d):
                        os.chmod(d, 0o700)
                except OSError:
                    pass
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.unlink(path)
        except OSError:
            pass
