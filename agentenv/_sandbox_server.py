"""The request server inside every sandbox: one file that every backend runs.

The namespace backend's init (pid 1 of each sandbox) and the Docker backend's helper (pid 1 of each
container) answer the same framed requests with this code: ``exec`` (a command with a wall-time
limit, capped output, collected files and named pipes), ``read``, ``write``, ``remove``, ``list``
and ``ping``. It runs on the sandbox's own Python (3.7 or later), from its source text, so it uses
the standard library only and imports nothing of agentenv: the namespace backend sends it to its
zygote ahead of ``builtin/_nszygote.py``; the Docker backend sends it to the small bootstrap each
container starts with. :func:`agentenv.sandbox_server_source` gives the text to a third-party backend.

Message: ``!II`` (header length, body length), the JSON header, the body bytes. One reply per
request, in order; a failed request answers ``{"error": <exception class>, "errno", "message"}``.

Two path policies, one per kind of sandbox:

* :class:`Server` (a sandbox whose init also sees the host until it pivots: the namespace
  backend). A path is resolved here, symlink by symlink, and must end within bounds: reads and
  listings anywhere but /proc, /sys and /dev, writes and removals in the workspace or /tmp only.
  Only symlinks within the same bounds are followed; the result is then opened one component at
  a time with ``O_NOFOLLOW``, so a symlink swapped in meanwhile fails instead of being followed.
* :class:`ContainerServer` (a container whose whole file system is the sandbox's own): a final
  symlink is never followed on read, and a write replaces a symlink instead of writing through it.
"""

from __future__ import annotations

import errno
import io
import json
import os
import resource  # (here, not in a forked child: a server that left root may not read the stdlib)
import select
import shutil
import signal
import socket
import stat
import struct
import sys
import time

HEADER = struct.Struct("!II")
MAX_READ = 64 << 20
PSEUDO_FS = ("/proc", "/sys", "/dev")  # confined file requests never resolve into these
# Python ignores these; a command must start with the defaults (``yes | head`` ends by SIGPIPE)
DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT)


# --------------------------------------------------------------------------- framing

def send_msg(sock, header, body=b""):
    h = json.dumps(header).encode()
    head = HEADER.pack(len(h), len(body)) + h
    if len(body) > 1 << 20 and sock.type == socket.SOCK_STREAM:  # (a large body is not copied to join it)
        sock.sendall(head)
        sock.sendall(body)
    else:  # (a message of a SOCK_SEQPACKET socket is one record)
        sock.sendall(head + body)


def _recv_exact(sock, n):
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_msg(sock):
    hlen, blen = HEADER.unpack(_recv_exact(sock, HEADER.size))
    header = json.loads(_recv_exact(sock, hlen))
    return header, _recv_exact(sock, blen) if blen else b""


class Capped:
    """Keeps the head and the tail of a stream up to *cap* bytes, counting what it drops."""

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


def which(name, path):
    """*name* searched on *path* as a shell would (None when no executable file is found)."""
    for d in path.split(":"):
        candidate = os.path.join(d or ".", name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


_PF_EXITING = 0x4  # a process's flags (field 9 of /proc/<pid>/stat) while it exits


def handle_no_signals():
    """Leave the signals Python handles at their default: pid 1 of a pid namespace then gets none
    a process of its namespace sends (the kernel drops them), so a command cannot end its server."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)


def error_reply(exc):
    if isinstance(exc, OSError):
        # (the reason alone: the host raises it again with its errno, which would be said twice)
        return {"error": exc.__class__.__name__, "errno": exc.errno, "message": exc.strerror or str(exc)}
    return {"error": "RuntimeError", "message": "%s: %s" % (type(exc).__name__, exc)}


class MemoryGrowth:
    """How far a memory cgroup's usage rose over one command: its high-water mark, reset as the
    command starts, less its usage then. It counts what no process's peak RSS shows: the memory of
    all the command's processes together, and pages of files it keeps in memory-backed folders
    (tmpfs), which belong to no process. On cgroup v1, socket buffers are charged to a counter of
    their own, once ``memory.kmem.tcp.limit_in_bytes`` is set (the backends set it to the memory
    limit): its rise is added (300 MB held in loopback TCP connections showed as 45 MB; v2 charges
    them to ``memory.current``). :meth:`open` gives None where the cgroup's high-water mark cannot
    be reset (a read-only cgroup file system; cgroup v2 before Linux 6.12)."""

    def __init__(self, folder):
        v2 = os.path.exists(os.path.join(folder, "memory.current"))
        peak, usage = ("memory.peak", "memory.current") if v2 else ("memory.max_usage_in_bytes",
                                                                    "memory.usage_in_bytes")
        self.reset = b"reset" if v2 else b"0"  # v2: the reset is this open file's own (Linux 6.12+)
        self.fds = []  # (peak, usage) of each counter
        try:
            self.fds.append(self._pair(folder, peak, usage))
            if not v2 and self._limited(os.path.join(folder, "memory.kmem.tcp.limit_in_bytes")):
                self.fds.append(self._pair(folder, "memory.kmem.tcp.max_usage_in_bytes", "memory.kmem.tcp.usage_in_bytes"))
            self.mark(probe=True)
        except OSError:
            self.close()
            raise

    @staticmethod
    def _pair(folder, peak, usage):
        usage_fd = os.open(os.path.join(folder, usage), os.O_RDONLY | os.O_CLOEXEC)
        try:
            return os.open(os.path.join(folder, peak), os.O_RDWR | os.O_CLOEXEC), usage_fd
        except OSError:
            os.close(usage_fd)
            raise

    @staticmethod
    def _limited(path):
        """Whether a v1 socket-buffer limit is set (then, and only then, the kernel counts them)."""
        try:
            with open(path, "rb") as f:
                return int(f.read().split()[0]) < 1 << 62
        except (OSError, ValueError, IndexError):
            return False

    @classmethod
    def open(cls, folder):
        try:
            return cls(folder)
        except (OSError, ValueError):
            return None

    @staticmethod
    def _read(fd):
        return int(os.pread(fd, 64, 0).split()[0])

    def mark(self, probe=False):
        """At a command's start."""
        self.base = None
        try:
            for peak_fd, _ in self.fds:
                os.pwrite(peak_fd, self.reset, 0)
            self.base = [self._read(usage_fd) for _, usage_fd in self.fds]
        except (OSError, ValueError, IndexError):
            if probe:
                raise

    def grown_kb(self, files_kb=0):
        """At its end: KiB the cgroup's usage rose to above its usage at the start, less *files_kb*
        (what the sandbox's tmpfs held at the start): a command could delete those files and use
        their memory again unseen (240 MB of workspace files, deleted first, hid 150 MB of work)."""
        try:
            if self.base is None:
                return 0
            rise = sum(max(0, self._read(peak_fd) - base) for (peak_fd, _), base in zip(self.fds, self.base))
            return max(0, rise + (files_kb << 10)) // 1024
        except (OSError, ValueError, IndexError):
            return 0

    def close(self):
        for fd in [fd for pair in self.fds for fd in pair]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


OOM_FILES = ("memory.oom_control", "memory.events")  # where a memory cgroup counts its OOM kills (v1, v2)


def oom_kills(data):
    """The ``oom_kill`` count in the text of a memory cgroup's *OOM_FILES* file (None if absent)."""
    for line in data.splitlines():
        key, _, value = line.partition(b" ")
        if key == b"oom_kill":
            return int(value)
    return None


class CpuUse:
    """CPU time a cgroup's processes used over one command (v1 ``cpuacct.usage``, v2 ``cpu.stat``'s
    ``usage_usec``), less what others (the sandbox's server, the warm interpreter's fork) used
    meanwhile. It counts what no rusage reaches: children the kernel reaped itself because their
    parent ignored ``SIGCHLD`` (two workers that did all of a command's work left it 54 ms of CPU
    of its 600). :meth:`open` gives None where the cgroup has no such file."""

    def __init__(self, folder):
        v1 = os.path.join(folder, "cpuacct.usage")
        self.v2 = not os.path.exists(v1)
        self.fd = os.open(os.path.join(folder, "cpu.stat") if self.v2 else v1, os.O_RDONLY | os.O_CLOEXEC)
        try:
            self.mark(probe=True)
        except (OSError, ValueError, IndexError):
            os.close(self.fd)
            raise

    @classmethod
    def open(cls, folder):
        try:
            return cls(folder) if folder else None
        except (OSError, ValueError):
            return None

    def _read(self):
        """Seconds of CPU the cgroup has used."""
        data = os.pread(self.fd, 4096, 0)
        if not self.v2:
            return int(data.split()[0]) / 1e9
        for line in data.splitlines():
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) / 1e6
        raise ValueError("no usage_usec in cpu.stat")

    def mark(self, probe=False):
        """At a command's start."""
        self.base = None
        try:
            self.base = self._read()
        except (OSError, ValueError, IndexError):  # (a container's cgroup goes as the container stops)
            if probe:
                raise

    def used_s(self, others_s=0.0):
        """At its end: seconds of CPU the cgroup used since :meth:`mark`, but *others_s*."""
        try:
            return 0.0 if self.base is None else max(0.0, self._read() - self.base - others_s)
        except (OSError, ValueError, IndexError):
            return 0.0

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass
        self.fd = -1


# --------------------------------------------------------------------------- the server

class Server:
    """Answers requests for one sandbox. *limits* is the request's ``Limits.to_json()``.

    Hooks a backend overrides: :meth:`spawn` (how a command starts; returns its pid and how it
    started), :meth:`oom_count`, :meth:`only_keepers_left` (processes that outlive a kill-all by
    design), and :attr:`watch` (a socket whose EOF during a command means the caller is gone)."""

    def __init__(self, root, uid, gid, limits=None):
        self.root = root
        self.uid, self.gid = uid, gid
        self.limits = dict(limits or {})
        self.spawn_rlimits = []  # limits a child sets on itself after fork (address space, CPU time)
        self.command_uid = None  # the uid a child takes in all three slots, where this server's real uid is another
        self.watch = None
        self.memory = None  # a MemoryGrowth of the sandbox's memory cgroup, where the backend has one
        self.cpu = None  # a CpuUse of the sandbox's CPU cgroup, where the backend has one
        self.spawn_cost_s = 0.0  # CPU another process of the sandbox spent starting the last command (spawn)
        # the sandbox's memory-backed file systems (tmpfs, in both backends), for tmpfs_kb
        self.memory_paths = (root, "/tmp", "/dev/shm")

    # ---- the request loop
    def handle(self, req, body):
        """One request to (reply header, reply body); never raises for a bad request."""
        try:
            method = getattr(self, "op_" + str(req.get("op")), None)
            if method is None:
                raise ValueError("unknown request %r" % (req.get("op"),))
            return method(req, body)
        except Exception as exc:  # report, never die: the caller decides
            return error_reply(exc), b""

    def op_ping(self, req, body):
        return {"ok": True, "python": sys.version.split()[0], "pid": os.getpid()}, b""

    def op_kill(self, req, body):
        """Kill every process of the sandbox but this server (no command is started for it, so a
        sandbox whose processes hold every pid is still cleared)."""
        self.kill_all()
        return {"ok": True}, b""

    # ---- processes
    def reap(self):
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    @staticmethod
    def processes():
        """The pids of this pid namespace (this server is its pid 1)."""
        return {int(name) for name in os.listdir("/proc") if name.isdigit()}

    def stray_usage(self, known):
        """CPU seconds and the largest peak RSS (KiB) of the processes a command started that it did
        not wait for, so its rusage misses them: every process of the namespace but *known* (those
        there before it, and the command itself). An orphan that did the command's work (a double fork
        that reports through a pipe) counts as the command's, live or exited: a zombie child of this
        server is reaped here for its rusage, another process's times (with those of the children it
        reaped) and high-water mark come from /proc."""
        tick = os.sysconf("SC_CLK_TCK")
        me = os.getpid()
        cpu, peak = 0.0, 0
        patience = time.monotonic() + 0.2  # for all of them together: a fork bomb may leave thousands
        for pid in self.processes() - known - {me}:
            try:
                with open("/proc/%d/stat" % pid, "rb") as f:
                    fields = f.read().rpartition(b")")[2].split()
            except OSError:
                continue  # gone since the listing: reaped by its parent, whose times now hold it
            if int(fields[1]) == me and (fields[0] == b"Z" or int(fields[6]) & _PF_EXITING):
                # one on its way out has let its memory go already; its rusage still has the peak.
                # (Never a blocking wait: a leader thread that exits leaves a live process behind.)
                ru = self._reap_soon(pid, patience)
                if ru is not None:
                    cpu += ru.ru_utime + ru.ru_stime
                    peak = max(peak, ru.ru_maxrss)
                    continue
            # utime, stime, cutime, cstime (fields 14-17 of stat; the state is field 3)
            cpu += sum(int(x) for x in fields[11:15]) / tick
            try:
                with open("/proc/%d/status" % pid, "rb") as f:
                    for line in f:
                        if line.startswith(b"VmHWM:"):
                            peak = max(peak, int(line.split()[1]))
            except (OSError, ValueError, IndexError):
                pass
        return cpu, peak

    @staticmethod
    def _reap_soon(pid, patience):
        while True:
            try:
                got, _, ru = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                return None
            if got:
                return ru
            if time.monotonic() > patience:
                return None
            time.sleep(0.001)

    def only_keepers_left(self):
        """True when the only children left are ones kept by design (none here)."""
        return False

    def kill_all(self):
        """Kill every process but this one (pid 1), and reap them all before the next command.

        One ``kill(-1)`` misses what a fork bomb forks while the kernel walks the process list,
        and a killed process holds its pid (and its place under ``pids.max``) until reaped. Every
        process of the namespace descends from pid 1, so "no child left" means none is left."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                while os.waitpid(-1, os.WNOHANG)[0]:
                    pass
            except ChildProcessError:
                return
            if self.only_keepers_left():
                return
            time.sleep(0.001)

    def oom_count(self):
        return 0

    def tmpfs_kb(self):
        """KiB the sandbox's memory-backed file systems (:attr:`memory_paths`) hold now."""
        seen, used = set(), 0
        for path in self.memory_paths:
            try:
                st = os.statvfs(path)
            except OSError:
                continue
            if st.f_fsid not in seen:
                seen.add(st.f_fsid)
                used += (st.f_blocks - st.f_bfree) * st.f_frsize
        return used >> 10

    def spawn(self, argv, env, cwd, stdin, stdout, stderr, req):
        """Start a command in a new session with the given pipes. Returns (pid, status_fd): a
        status fd, where not None, is read after the command for how it started."""
        try:
            os.chdir(cwd)
        except OSError:
            os.chdir("/")
        try:
            if "/" not in argv[0]:
                argv = [which(argv[0], env.get("PATH", "/usr/bin:/bin")) or argv[0]] + list(argv[1:])
            if not self.spawn_rlimits and self.command_uid is None and hasattr(os, "posix_spawn"):
                # vfork: no copy of this interpreter's page tables; the server's own fds are close-on-exec
                return os.posix_spawn(
                    argv[0], argv, env, setsid=True, setsigdef=DEFAULT_SIGNALS,
                    file_actions=[(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, stdout, 1),
                                  (os.POSIX_SPAWN_DUP2, stderr, 2)]), None
            return self._fork_exec(argv, env, stdin, stdout, stderr), None
        finally:
            os.chdir("/")

    def _fork_exec(self, argv, env, stdin, stdout, stderr):
        """The slow path, for limits a child must set on itself (address space, CPU time)."""
        err_r, err_w = os.pipe()  # close-on-exec: EOF means exec succeeded
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.dup2(stdin, 0)
                os.dup2(stdout, 1)
                os.dup2(stderr, 2)
                for sig in DEFAULT_SIGNALS:
                    signal.signal(sig, signal.SIG_DFL)
                for which_limit, n in self.spawn_rlimits:
                    resource.setrlimit(which_limit, (n, n))
                if self.command_uid is not None:
                    os.setresuid(self.command_uid, self.command_uid, self.command_uid)
                os.execve(argv[0], argv, env)
            except OSError as exc:
                os.write(err_w, str(exc.errno).encode())
            finally:
                os._exit(127)
        os.close(err_w)
        failed = os.read(err_r, 32)
        os.close(err_r)
        if failed:
            os.waitpid(pid, 0)
            code = int(failed)
            raise OSError(code, os.strerror(code))
        return pid

    def op_exec(self, req, body):
        cap = int(req.get("max_output_bytes") or self.limits.get("max_output_bytes") or 1 << 20)
        timeout = float(req.get("timeout") or self.limits.get("wall_time_s") or 60)
        env, argv = req["env"], req["argv"]
        cwd = req.get("cwd") or req.get("root") or self.root
        oom_before = self.oom_count()
        self.reap()  # orphans that ended while the server was idle still hold their pids
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe()
        pipes = {}  # read fd -> (path, our own write fd that keeps EOF away, buffer)
        for path in req.get("pipes", ()):  # before the command starts: it may open them at once
            ends = self._make_pipe(path)
            if ends is not None:
                pipes[ends[0]] = (path, ends[1], bytearray())
        present = self.processes()
        files_kb = self.tmpfs_kb()
        if self.memory is not None:
            self.memory.mark()
        if self.cpu is not None:
            self.cpu.mark()
        self.spawn_cost_s = 0.0
        own = resource.getrusage(resource.RUSAGE_SELF)
        start = time.monotonic()
        try:
            pid, status_fd = self.spawn(argv, env, cwd, in_r, out_w, err_w, req)
        except OSError as exc:  # report like a shell does: the command could not start
            for fd in (out_r, err_r, in_w, out_w, err_w, in_r) + tuple(fd for r, (_, w, _) in pipes.items()
                                                                     for fd in (r, w)):
                os.close(fd)
            message = ("agentenv: cannot run %s: %s\n" % (argv[0], exc)).encode()
            return {"exit_code": 127, "wall_ms": (time.monotonic() - start) * 1000, "cpu_ms": 0.0,
                    "peak_memory_mb": 0.0, "timed_out": False, "oom_killed": False, "truncated": False,
                    "stdout_len": 0, "stderr_len": len(message), "artifacts": {}, "start": "cold"}, message
        for fd in (out_w, err_w, in_r):
            os.close(fd)
        if body:
            self._feed(in_w, body)
        os.close(in_w)
        pidfd = os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
        bufs = {out_r: Capped(cap), err_r: Capped(cap)}
        open_fds = [out_r, err_r] + list(pipes)
        timed_out = False
        status = rusage = None
        deadline = start + timeout
        watch = [self.watch] if self.watch is not None else []
        while status is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                try:
                    os.kill(-1, signal.SIGKILL)  # pid 1 kills every other process of the namespace
                except ProcessLookupError:
                    pass
                _, status, rusage = os.wait4(pid, 0)
                self.kill_all()
                break
            waits = open_fds + ([pidfd] if pidfd is not None else []) + watch
            ready, _, _ = select.select(waits, [], [], remaining if pidfd is not None else min(remaining, 0.01))
            if pidfd is None:
                got, st, ru = os.wait4(pid, os.WNOHANG)
                if got:
                    status, rusage = st, ru
            for fd in ready:
                if fd is self.watch:  # the caller never speaks during a command: this is its EOF
                    try:
                        gone = not self.watch.recv(1, socket.MSG_PEEK)
                    except OSError:
                        gone = True
                    if gone:
                        self.kill_all()
                        os._exit(0)
                elif fd == pidfd:
                    _, status, rusage = os.wait4(pid, 0)
                elif fd in pipes:
                    self._read_pipe(fd, pipes[fd][2])
                else:
                    chunk = os.read(fd, 65536)
                    if chunk:
                        bufs[fd].add(chunk)
                    else:
                        open_fds.remove(fd)
        wall = (time.monotonic() - start) * 1000
        captured = {}
        for fd, (path, writer, data) in pipes.items():
            os.close(writer)
            self._read_pipe(fd, data)
            os.close(fd)
            open_fds.remove(fd)
            try:
                os.unlink(path)  # later writers find nothing to write into
            except OSError:
                pass
            captured[path] = bytes(data)
        for fd in open_fds:  # drain what the command left; background processes may keep pipes open
            os.set_blocking(fd, False)
            try:
                while True:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    bufs[fd].add(chunk)
            except BlockingIOError:
                pass
        for fd in (out_r, err_r) + ((pidfd,) if pidfd is not None else ()):
            os.close(fd)
        stray_cpu_s, stray_peak_kb = self.stray_usage(present | {pid})
        grown_kb = self.memory.grown_kb(files_kb) if self.memory is not None else 0
        now = resource.getrusage(resource.RUSAGE_SELF)
        # (this server's own CPU over the command and the warm interpreter's fork are in the cgroup too)
        others_s = now.ru_utime + now.ru_stime - own.ru_utime - own.ru_stime + self.spawn_cost_s
        cgroup_cpu_s = self.cpu.used_s(others_s) if self.cpu is not None else 0.0
        started = self.started_how(status_fd)
        ooms = self.oom_count()
        oom = ooms > oom_before
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        artifacts = {}
        blob = b""
        for path, data in captured.items():
            artifacts[path] = [len(blob), len(data)]
            blob += data
        for path in req.get("collect", ()):
            try:
                data = self.read(path)
            except OSError:
                continue
            artifacts[path] = [len(blob), len(data)]
            blob += data
        out, err = bufs[out_r].value(), bufs[err_r].value()
        reply = {
            "exit_code": code, "wall_ms": wall,
            "cpu_ms": max((rusage.ru_utime + rusage.ru_stime if rusage else 0.0) + stray_cpu_s, cgroup_cpu_s) * 1000,
            # (for a caller that reads the sandbox's CPU cgroup itself: what to leave out of it)
            "server_cpu_ms": others_s * 1000,
            "peak_memory_mb": max(rusage.ru_maxrss if rusage else 0, stray_peak_kb, grown_kb) / 1024,
            "timed_out": timed_out, "oom_killed": oom, "oom_count": ooms, "tmpfs_kb": files_kb,
            "truncated": bufs[out_r].dropped > 0 or bufs[err_r].dropped > 0,
            "stdout_len": len(out), "stderr_len": len(err), "artifacts": artifacts, "start": started,
        }
        return reply, out + err + blob

    @staticmethod
    def started_how(status_fd):
        """How the command started, from what its starter wrote on *status_fd* (then closed)."""
        if status_fd is None:
            return "cold"
        data = b""
        os.set_blocking(status_fd, False)
        try:
            while len(data) < 4096:
                chunk = os.read(status_fd, 4096)
                if not chunk:
                    break
                data += chunk
        except BlockingIOError:
            pass
        os.close(status_fd)
        return data.decode("utf-8", "replace") or "cold: the warm start failed before it began"

    def _make_pipe(self, path):
        """A named pipe at *path* that the server reads while the command runs.

        A report written there is exactly what was written during the command: a second writer
        (an atexit hook overwriting the report, say) appends to it and so spoils it, and a writer
        after the command finds no pipe. The server holds a write end too, so it never sees EOF early.
        Its folder is made when missing (a reward file has no judge files beside it)."""
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            if os.path.lexists(path):
                os.unlink(path)
            os.mkfifo(path, 0o600)
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return None
        return reader, writer

    @staticmethod
    def _read_pipe(fd, data):
        try:
            while len(data) < MAX_READ:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data += chunk
        except BlockingIOError:
            pass

    @staticmethod
    def _feed(fd, data):
        os.set_blocking(fd, False)
        view = memoryview(data)
        deadline = time.monotonic() + 5
        while view and time.monotonic() < deadline:
            select.select([], [fd], [], 0.1)
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except BrokenPipeError:
                return

    # ---- file requests (confined: see the module docstring)
    def _allowed(self, path):
        return any(path == base or path.startswith(base.rstrip("/") + "/") for base in (self.root, "/tmp"))

    @staticmethod
    def _readable(path):
        return not any(path == top or path.startswith(top + "/") for top in PSEUDO_FS)

    @staticmethod
    def _refuse(path, write=True):
        why = "outside the workspace and /tmp" if write else "in /proc, /sys or /dev"
        return PermissionError(errno.EACCES, "refused: %s" % why, path)

    def _resolve(self, path, write=True):
        """The physical path *path* names (every symlink followed), refused unless within bounds."""
        allowed = self._allowed if write else self._readable
        parts = [p for p in path.split("/") if p not in ("", ".")]
        parts.reverse()
        cur, links = "/", 0
        while parts:
            name = parts.pop()
            if name == "..":
                cur = os.path.dirname(cur)
                continue
            nxt = os.path.join(cur, name)
            try:
                st = os.lstat(nxt)
            except (FileNotFoundError, NotADirectoryError):
                cur = os.path.join(nxt, *reversed(parts)) if parts else nxt
                break
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if not allowed(nxt) or links > 40:
                    raise self._refuse(path, write)
                target = os.readlink(nxt)
                parts += [p for p in reversed(target.split("/")) if p not in ("", ".")]
                if target.startswith("/"):
                    cur = "/"
                continue
            cur = nxt
        cur = os.path.normpath(cur)
        if not allowed(cur):
            raise self._refuse(path, write)
        return cur

    @staticmethod
    def _open_dir(path):
        """An O_PATH fd of the directory *path* (physical: no component may be a symlink)."""
        fd = os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for name in [p for p in path.split("/") if p]:
                nfd = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
                os.close(fd)
                fd = nfd
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _open_in(self, path, flags, mode=0o600):
        real = self._resolve(path, write=False)
        parent, name = os.path.split(real)
        if not name:
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        dfd = self._open_dir(parent)
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dfd)
        finally:
            os.close(dfd)

    def read(self, path):
        try:  # O_NONBLOCK: a FIFO opens at once, and is then refused as not a regular file
            fd = self._open_in(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refuse(path, write=False) from None
            raise OSError(exc.errno, exc.strerror, path) from None  # never the resolved path
        return _read_fd(fd, path)

    def op_read(self, req, body):
        return {"ok": True}, self.read(req["path"])

    def _make_dirs(self, path):
        """Create the directories of *path* below the root, replacing symlinks instead of following."""
        parts = path.strip("/").split("/")
        cur = ""
        for part in parts:
            cur += "/" + part
            try:
                st = os.lstat(cur)
            except FileNotFoundError:
                os.mkdir(cur)
                os.chown(cur, self.uid, self.gid)
                continue
            if not stat.S_ISDIR(st.st_mode):
                if not (cur + "/").startswith(self.root.rstrip("/") + "/"):
                    raise OSError(errno.ENOTDIR, "not a directory", cur)
                os.unlink(cur)
                os.mkdir(cur)
                os.chown(cur, self.uid, self.gid)

    def op_write(self, req, body):
        path = os.path.normpath(req["path"])
        if not self._allowed(path) or path in (self.root, "/tmp"):
            raise self._refuse(req["path"])
        self._make_dirs(os.path.dirname(path))
        real = self._resolve(os.path.dirname(path))
        dfd = self._open_dir(real)
        try:
            name = os.path.basename(path)
            _remove_at(dfd, name, os.path.join(real, name))
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=dfd)
        finally:
            os.close(dfd)
        try:
            view = memoryview(body)
            while view:
                view = view[os.write(fd, view):]
            os.fchown(fd, self.uid, self.gid)
            os.fchmod(fd, int(req.get("mode", 0o644)))
        finally:
            os.close(fd)
        return {"ok": True}, b""

    def op_remove(self, req, body):
        path = os.path.normpath(req["path"])
        if not self._allowed(path) or path in (self.root, "/tmp"):
            raise self._refuse(req["path"])
        try:
            real = self._resolve(os.path.dirname(path))
            dfd = self._open_dir(real)
        except FileNotFoundError:  # no parent, so nothing to remove: not an error (the protocol's promise)
            return {"ok": True}, b""
        try:
            name = os.path.basename(path)
            _remove_at(dfd, name, os.path.join(real, name))
        finally:
            os.close(dfd)
        return {"ok": True}, b""

    def op_list(self, req, body):
        base = self._resolve(req["path"], write=False)
        if not os.path.isdir(base):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", req["path"])
        return {"files": _walk(base, skip_pseudo=True)}, b""


class ContainerServer(Server):
    """The server for a container, whose whole file system is the sandbox's own (Docker)."""

    def oom_count(self):
        for path in ("/sys/fs/cgroup/memory/" + OOM_FILES[0], "/sys/fs/cgroup/" + OOM_FILES[1]):
            try:
                with open(path, "rb") as f:
                    return oom_kills(f.read()) or 0
            except (OSError, ValueError):
                continue
        return 0

    def read(self, path):
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            raise OSError(errno.ELOOP, "refusing to follow a symlink", path)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        return _read_fd(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), path)

    def op_write(self, req, body):
        path = req["path"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                os.unlink(path)  # replace the link, never write through it
        except FileNotFoundError:
            pass
        mode = int(req.get("mode", 0o644))
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.chmod(path, mode)
        return {"ok": True}, b""

    def op_remove(self, req, body):
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

    def op_list(self, req, body):
        return {"files": _walk(req["path"], skip_pseudo=False)}, b""

    def op_untar(self, req, body):
        import tarfile
        root = req["path"]
        os.makedirs(root, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(body)) as tar:
            for member in tar.getmembers():  # written by the backend from the task's workspace; still check
                if member.name.startswith("/") or ".." in member.name.split("/"):
                    raise ValueError("unsafe path in workspace archive: %r" % member.name)
            tar.extractall(root)
        return {"ok": True}, b""


def _read_fd(fd, path):
    """The contents of the regular file open at *fd* (closed here), at most MAX_READ bytes."""
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        if st.st_size > MAX_READ:
            raise OSError(errno.EFBIG, "file larger than %d bytes" % MAX_READ, path)
        os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _remove_at(dfd, name, full):
    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(full)  # fd-based: symlinks inside are removed, never followed
    else:
        os.unlink(name, dir_fd=dfd)


def _walk(base, skip_pseudo):
    """Every file and symlink below *base*, as sorted relative paths (at most ~100,000)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        if skip_pseudo and dirpath == "/":
            dirnames[:] = [d for d in dirnames if "/" + d not in PSEUDO_FS]
        rel = os.path.relpath(dirpath, base)
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.append(name if rel == "." else rel + "/" + name)
        if len(out) > 100000:
            break
    return sorted(out)


# --------------------------------------------------------------------------- stdio transport

#: the sandbox user of a container (the Docker backend's SANDBOX_UID)
CONTAINER_UID = 65534


def _become_sandbox_user(uid):
    """Started as root with CAP_SETUID and CAP_SETGID only (the Docker backend): take the sandbox
    user as effective uid (files are made as it) and as every gid, keeping root as real and saved
    uid; commands get the sandbox user in all three (``command_uid``). The kernel lets a process
    signal, limit (prlimit) or reschedule another only where their uids match, so none of this
    server's commands can: a command had lowered its CPU limit, and the kernel killed it."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(0, uid, 0)  # (the effective capabilities go with the effective uid)


def _not_dumpable():
    import ctypes

    PR_SET_DUMPABLE = 4
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def serve_stdio(read_exact, write, server_class=ContainerServer, root="/app", rlimits=()):
    """Serve framed requests read with *read_exact(n)* (EOFError at the end), replies passed to
    *write(bytes)*, until the stream ends: a container's pid 1 on its stdin and stdout. *rlimits*:
    (resource, limit) pairs each command sets on itself after fork (not this server's own)."""
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # Where commands share this server's uid, the kernel let them read /proc/1/fd (the stream the
    # replies go out on: a command wrote a reply of its own there, first) and /proc/1/mem, or trace
    # it: a process that is not dumpable is out of their reach. And pid 1 of a namespace gets only
    # the signals it handles: Python's SIGINT handler let a command's ``kill -INT 1`` end it.
    _not_dumpable()  # (first: what it imports may be readable by root only, outside a container)
    command_uid = None
    if os.getuid() == 0:
        _become_sandbox_user(CONTAINER_UID)
        command_uid = CONTAINER_UID
    handle_no_signals()
    server = server_class(root, os.geteuid(), os.getegid())
    server.command_uid = command_uid
    server.spawn_rlimits = [(int(which), int(n)) for which, n in rlimits]
    while True:
        try:
            hlen, blen = HEADER.unpack(read_exact(HEADER.size))
            req = json.loads(read_exact(hlen))
            body = read_exact(blen) if blen else b""
        except EOFError:
            return  # the backend closed the stream: the container ends with us
        reply, data = server.handle(req, body)
        server.reap()
        h = json.dumps(reply).encode()
        write(HEADER.pack(len(h), len(data)) + h + data)


def source():
    """This file's text: what a backend sends into a sandbox to run it."""
    with open(os.path.abspath(__file__), encoding="utf-8") as f:
        return f.read()
