"""The agent inside every container: pid 1, speaking length-prefixed JSON on stdin/stdout.

It is copied into the dependency image and run as ``python3 -I -S``, so it may use the standard
library only (Python 3.7+). Running as pid 1 of the container's pid namespace gives it two powers
the backend relies on: ``kill(-1, SIGKILL)`` ends every other process of the container (a command
that ran past its time, and whatever it left behind), and orphans are reparented to it, so it
reaps them. File operations happen here, inside the container's mount namespace, so a symlink the
agent planted resolves inside the container and can never reach the host.

Message: ``!II`` (header length, body length), the JSON header, the body bytes. One reply per
request, in order.
"""

import json
import os
import resource
import select
import shutil
import signal
import stat
import struct
import sys
import tarfile
import io
import time

HEADER = struct.Struct("!II")
_IN = sys.stdin.buffer
_OUT = sys.stdout.buffer


def _read_exact(n):
    chunks = []
    while n:
        chunk = _IN.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _send(header, body=b""):
    data = json.dumps(header).encode()
    _OUT.write(HEADER.pack(len(data), len(body)) + data + body)
    _OUT.flush()


class _Capped:
    """Keeps the head and the tail of a stream up to *cap* bytes (same text as the namespace backend)."""

    def __init__(self, cap):
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk):
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            extra = len(self.tail) - self.half
            if extra > 0:
                del self.tail[:extra]
                self.dropped += extra

    def value(self):
        if self.dropped:
            return bytes(self.head) + ("\n...[%d bytes dropped]...\n" % self.dropped).encode() + bytes(self.tail)
        return bytes(self.head + self.tail)


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _oom_count():
    for path in ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"):
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except OSError:
            continue
    return 0


def _no_symlink(path):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise OSError(40, "refusing to follow a symlink", path)
    return st


def op_ping(req, body):
    return {"ok": True, "python": sys.version.split()[0], "pid": os.getpid()}, b""


def op_untar(req, body):
    root = req["path"]
    os.makedirs(root, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        for member in tar.getmembers():  # written by the backend from the task's workspace; still check
            if member.name.startswith("/") or ".." in member.name.split("/"):
                raise ValueError("unsafe path in workspace archive: %r" % member.name)
        tar.extractall(root)
    return {"ok": True}, b""


def op_exec(req, body):
    cap = int(req["max_output_bytes"])
    timeout = float(req["timeout"])
    argv, env = req["argv"], req["env"]
    cwd = req.get("cwd") or req["root"]
    oom_before = _oom_count()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    in_r, in_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.closerange(3, 65536)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            try:
                os.chdir(cwd)
            except OSError:
                os.chdir("/")
            if "/" not in argv[0]:
                for d in env.get("PATH", "/usr/bin:/bin").split(":"):
                    candidate = os.path.join(d, argv[0])
                    if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                        argv = [candidate] + argv[1:]
                        break
            os.execve(argv[0], argv, env)
        except BaseException as exc:
            try:
                os.write(2, ("agentenv: cannot run %s: %s\n" % (argv[0], exc)).encode())
            finally:
                os._exit(127)
    for fd in (out_w, err_w, in_r):
        os.close(fd)
    if body:
        os.set_blocking(in_w, False)
        view = memoryview(body)
        feed_deadline = time.monotonic() + 5
        while view and time.monotonic() < feed_deadline:
            try:
                view = view[os.write(in_w, view):]
            except BlockingIOError:
                select.select([], [in_w], [], 0.05)
            except BrokenPipeError:
                break
    os.close(in_w)
    pidfd = os.pidfd_open(pid)
    bufs = {out_r: _Capped(cap), err_r: _Capped(cap)}
    open_fds = [out_r, err_r]
    timed_out = False
    status = rusage = None
    deadline = start + timeout
    while status is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            os.kill(-1, signal.SIGKILL)  # pid 1: every other process of the container
            _, status, rusage = os.wait4(pid, 0)
            while True:  # they are all dying: wait for each, so none lingers as a zombie
                try:
                    os.waitpid(-1, 0)
                except ChildProcessError:
                    break
            break
        ready, _, _ = select.select(open_fds + [pidfd], [], [], remaining)
        for fd in ready:
            if fd == pidfd:
                _, status, rusage = os.wait4(pid, 0)
            else:
                chunk = os.read(fd, 65536)
                if chunk:
                    bufs[fd].add(chunk)
                else:
                    open_fds.remove(fd)
    wall = (time.monotonic() - start) * 1000
    for fd in open_fds:  # background processes may keep the pipes open: take what is there
        os.set_blocking(fd, False)
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                bufs[fd].add(chunk)
        except BlockingIOError:
            pass
    for fd in (out_r, err_r, pidfd):
        os.close(fd)
    _reap()
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    artifacts, blob = {}, b""
    for path in req.get("collect", ()):
        try:
            data = _read(path)
        except OSError:
            continue
        artifacts[path] = [len(blob), len(data)]
        blob += data
    out, err = bufs[out_r].value(), bufs[err_r].value()
    return {
        "exit_code": code, "wall_ms": wall,
        "cpu_ms": (rusage.ru_utime + rusage.ru_stime) * 1000 if rusage else 0.0,
        "peak_memory_mb": (rusage.ru_maxrss / 1024) if rusage else 0.0,
        "timed_out": timed_out, "oom_killed": _oom_count() > oom_before,
        "truncated": bufs[out_r].dropped > 0 or bufs[err_r].dropped > 0,
        "stdout_len": len(out), "stderr_len": len(err), "artifacts": artifacts,
    }, out + err + blob


def _read(path):
    st = _no_symlink(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", path)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(22, "not a regular file", path)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def op_read(req, body):
    return {"ok": True}, _read(req["path"])


def op_write(req, body):
    path = req["path"]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            os.unlink(path)  # replace the link, never write through it
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, req.get("mode", 0o644))
    with os.fdopen(fd, "wb") as f:
        f.write(body)
    os.chmod(path, req.get("mode", 0o644))
    return {"ok": True}, b""


def op_remove(req, body):
    path = req["path"]
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return {"ok": True}, b""
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
    return {"ok": True}, b""


def op_list(req, body):
    base = req["path"]
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        rel = os.path.relpath(dirpath, base)
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.append(name if rel == "." else rel + "/" + name)
        if len(out) > 100000:
            break
    return {"files": sorted(out)}, b""


OPS = {"ping": op_ping, "untar": op_untar, "exec": op_exec, "read": op_read, "write": op_write,
       "remove": op_remove, "list": op_list}


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    while True:
        try:
            hlen, blen = HEADER.unpack(_read_exact(HEADER.size))
            req = json.loads(_read_exact(hlen))
            body = _read_exact(blen) if blen else b""
        except EOFError:
            return  # the backend closed the stream: the container ends with us
        try:
            reply, data = OPS[req["op"]](req, body)
        except OSError as exc:
            reply, data = {"error": type(exc).__name__, "errno": exc.errno, "message": str(exc)}, b""
        except Exception as exc:
            reply, data = {"error": type(exc).__name__, "message": str(exc)}, b""
        _send(reply, data)


if __name__ == "__main__":
    main()
