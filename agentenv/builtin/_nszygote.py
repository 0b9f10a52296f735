"""The namespace backend's zygote and sandbox init. Standard library only; run as a script.

Why a separate process: forking the caller (which may hold torch, threads and locks) is slow and
unsafe; this small single-threaded interpreter forks sandboxes in about a millisecond instead.

Process tree of one sandbox::

    caller ──seqpacket──> zygote (this script, started once per backend)
                            └── keeper (C1)   waits for init; PDEATHSIG: dies with the zygote
                                  └── init (C2) pid 1 of new pid/mount/net/ipc/uts namespaces;
                                        │       PDEATHSIG: dies with the keeper, taking the whole
                                        │       pid namespace (every orphan) with it. Root while it
                                        │       mounts, then the unprivileged sandbox user for good.
                                        │       Without root on the host (rootless mode) it is also
                                        │       in a new user namespace whose only uid is the sandbox
                                        │       user, mapped to the caller's uid
                                        └── commands, started with posix_spawn, same user

The caller talks to each init directly over a stream socket handed over with SCM_RIGHTS.
When the caller's connection closes (it exited or crashed), the zygote kills every sandbox.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import itertools
import json
import os
import resource
import select
import shutil
import signal
import socket
import stat
import struct
import sys
import time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWUSER = 0x20000000, 0x40000000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine, 155)
MAX_READ = 64 << 20
# Python ignores these; a command must start with the defaults (``yes | head`` ends by SIGPIPE)
_DEFAULT_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT)
HEADER = struct.Struct("!II")
_PSEUDO_FS = ("/proc", "/sys", "/dev")  # file requests never resolve into these
# The pool refills once no sandbox was opened for this long: opens that come in a burst (a vector
# env resetting) are not held up by a set-up between them, and the set-up, which briefly blocks
# the zygote and takes CPU, stays out of the first commands of the sandbox just handed out.
REFILL_DELAY_S = 0.01

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.capset.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _b(s):
    return None if s is None else os.fsencode(s)


def mount(src, target, fstype, flags=0, data=None):
    _check(_libc.mount(_b(src), _b(target), _b(fstype), flags, _b(data)), f"mount {fstype or src} on {target}")


def bind_ro(src: str, target: str) -> None:
    mount(src, target, None, MS_BIND | MS_REC)
    # A user namespace may not clear the flags a mount of its parent has (they are locked), and
    # leaving out an atime flag means relatime: carry the source's noexec and atime flags over.
    have = os.statvfs(target).f_flag
    keep = 0
    for st, ms in ((os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME),
                   (os.ST_NODIRATIME, MS_NODIRATIME), (os.ST_RELATIME, MS_RELATIME)):
        if have & st:
            keep |= ms
    if not have & (os.ST_NOATIME | os.ST_RELATIME):
        keep |= MS_STRICTATIME
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | keep)


def prctl(option: int, arg: int, arg2: int = 0) -> None:
    _check(_libc.prctl(option, arg, arg2, 0, 0), "prctl")


def drop_bounding_capabilities() -> None:
    """Empty the bounding and ambient sets (needs CAP_SETPCAP: before giving up root)."""
    last = int(open("/proc/sys/kernel/cap_last_cap").read())
    for cap in range(last + 1):
        prctl(PR_CAPBSET_DROP, cap)
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)


def clear_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets."""
    _check(_libc.capset(struct.pack("Ii", _LINUX_CAPABILITY_VERSION_3, 0), bytes(24)), "capset")


# --------------------------------------------------------------------------- seccomp

# What commands may not call (EPERM), as Docker's default profile refuses them to a container
# without capabilities: namespaces (the agent could map itself root in a user namespace of its own
# and mount there), io_uring (a large kernel surface that bypasses syscall filtering), keyrings,
# bpf, perf, ptrace and cross-process memory access, modules, kexec, mounts, swap, reboot,
# userfaultfd, file handles, accounting, quotas, the kernel log, the clock. clone is allowed
# without CLONE_NEW* flags; clone3 answers ENOSYS (its flags are behind a pointer the filter cannot
# read), so glibc falls back to clone. personality is allowed only for Docker's values.
SECCOMP_DENY = ("unshare", "setns", "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl",
                "add_key", "request_key", "bpf", "perf_event_open", "ptrace", "process_vm_readv",
                "process_vm_writev", "init_module", "finit_module", "delete_module", "kexec_load",
                "kexec_file_load", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
                "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr", "swapon", "swapoff", "reboot",
                "userfaultfd", "open_by_handle_at", "name_to_handle_at", "acct", "quotactl", "quotactl_fd",
                "syslog", "vhangup", "lookup_dcookie", "settimeofday", "clock_settime", "clock_adjtime",
                "adjtimex", "uselib", "nfsservctl", "iopl", "ioperm")
SECCOMP_ARCH = {  # audit arch, syscall numbers (x86_64: asm/unistd_64.h; aarch64: asm-generic/unistd.h)
    "x86_64": (0xC000003E, dict(
        unshare=272, setns=308, io_uring_setup=425, io_uring_enter=426, io_uring_register=427, keyctl=250,
        add_key=248, request_key=249, bpf=321, perf_event_open=298, ptrace=101, process_vm_readv=310,
        process_vm_writev=311, init_module=175, finit_module=313, delete_module=176, kexec_load=246,
        kexec_file_load=320, mount=165, umount2=166, pivot_root=155, chroot=161, move_mount=429,
        open_tree=428, fsopen=430, fsmount=432, fsconfig=431, fspick=433, mount_setattr=442, swapon=167,
        swapoff=168, reboot=169, userfaultfd=323, open_by_handle_at=304, name_to_handle_at=303, acct=163,
        quotactl=179, quotactl_fd=443, syslog=103, vhangup=153, lookup_dcookie=212, settimeofday=164,
        clock_settime=227, clock_adjtime=305, adjtimex=159, uselib=134, nfsservctl=180, iopl=172,
        ioperm=173, clone=56, clone3=435, personality=135)),
    "aarch64": (0xC00000B7, dict(
        unshare=97, setns=268, io_uring_setup=425, io_uring_enter=426, io_uring_register=427, keyctl=219,
        add_key=217, request_key=218, bpf=280, perf_event_open=241, ptrace=117, process_vm_readv=270,
        process_vm_writev=271, init_module=105, finit_module=273, delete_module=106, kexec_load=104,
        kexec_file_load=294, mount=40, umount2=39, pivot_root=41, chroot=51, move_mount=429, open_tree=428,
        fsopen=430, fsmount=432, fsconfig=431, fspick=433, mount_setattr=442, swapon=224, swapoff=225,
        reboot=142, userfaultfd=282, open_by_handle_at=265, name_to_handle_at=264, acct=89, quotactl=60,
        quotactl_fd=443, syslog=116, vhangup=58, lookup_dcookie=18, settimeofday=170, clock_settime=112,
        clock_adjtime=266, adjtimex=171, nfsservctl=42, clone=220, clone3=435, personality=92)),
}
CLONE_NEW_ANY = (CLONE_NEWNS | 0x02000000 | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
                 | CLONE_NEWNET | 0x00000080)  # + CLONE_NEWCGROUP, CLONE_NEWTIME
PERSONALITY_OK = (0x0, 0x0008, 0x20000, 0x20008, 0xFFFFFFFF)  # Docker's: linux, linux32, uname26, query
_BPF_LD_W_ABS, _BPF_JEQ_K, _BPF_JGE_K, _BPF_JSET_K, _BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


def seccomp_program(machine: str) -> tuple[bytes, list[str]] | None:
    """The classic-BPF filter for *machine* and the names it denies; None for an unknown machine.

    Layout: a syscall of another architecture (a 32-bit or x32 entry point) kills the process;
    each denied number returns EPERM; clone looks at its flags (arg 0, low 32 bits), clone3
    returns ENOSYS, personality checks its argument; everything else is allowed."""
    if machine not in SECCOMP_ARCH:
        return None
    arch, nr = SECCOMP_ARCH[machine]
    denied = [name for name in SECCOMP_DENY if name in nr]
    ins: list[tuple[int, int, int, int]] = []

    def op(code, k, jt=0, jf=0):
        ins.append((code, jt, jf, k))

    eperm, enosys = _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS
    op(_BPF_LD_W_ABS, 4)  # seccomp_data.arch
    op(_BPF_JEQ_K, arch, 1, 0)
    op(_BPF_RET_K, _RET_KILL_PROCESS)
    op(_BPF_LD_W_ABS, 0)  # seccomp_data.nr
    if machine == "x86_64":  # x32 syscalls share the arch: __X32_SYSCALL_BIT
        op(_BPF_JGE_K, 0x40000000, 0, 1)
        op(_BPF_RET_K, _RET_KILL_PROCESS)
    for name in denied:
        op(_BPF_JEQ_K, nr[name], 0, 1)
        op(_BPF_RET_K, eperm)
    op(_BPF_JEQ_K, nr["clone3"], 0, 1)
    op(_BPF_RET_K, enosys)
    op(_BPF_JEQ_K, nr["clone"], 0, 4)
    op(_BPF_LD_W_ABS, 16)  # args[0], low half (little-endian on both machines)
    op(_BPF_JSET_K, CLONE_NEW_ANY, 0, 1)
    op(_BPF_RET_K, eperm)
    op(_BPF_RET_K, _RET_ALLOW)
    op(_BPF_JEQ_K, nr["personality"], 0, 2 + len(PERSONALITY_OK))
    op(_BPF_LD_W_ABS, 16)
    for i, value in enumerate(PERSONALITY_OK):
        op(_BPF_JEQ_K, value, len(PERSONALITY_OK) - i, 0)
    op(_BPF_RET_K, eperm)
    op(_BPF_RET_K, _RET_ALLOW)
    return b"".join(struct.pack("HBBI", *i) for i in ins), denied


def install_seccomp(program: bytes) -> None:
    """Install *program* for this process and everything it starts (needs no_new_privs first)."""
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(filters))  # struct sock_fprog
    buf = ctypes.create_string_buffer(fprog, len(fprog))
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(buf), 0, 0), "seccomp")


def enter_user_namespace(uid: int, host_uid: int, gid: int, host_gid: int) -> None:
    """Map the sandbox user (the namespace's only uid) to the caller's uid; nothing maps root."""
    with open("/proc/self/setgroups", "w") as f:
        f.write("deny")  # an unprivileged user may map its gid only once setgroups is off
    with open("/proc/self/uid_map", "w") as f:
        f.write(f"{uid} {host_uid} 1")
    with open("/proc/self/gid_map", "w") as f:
        f.write(f"{gid} {host_gid} 1")


# --------------------------------------------------------------------------- framing

def send_msg(sock: socket.socket, header: dict, body: bytes = b"") -> None:
    h = json.dumps(header).encode()
    sock.sendall(HEADER.pack(len(h), len(body)) + h + body)


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError("peer closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_msg(sock: socket.socket) -> tuple[dict, bytes]:
    hlen, blen = HEADER.unpack(_recv_exact(sock, HEADER.size))
    header = json.loads(_recv_exact(sock, hlen))
    return header, _recv_exact(sock, blen) if blen else b""


# --------------------------------------------------------------------------- init (pid 1)

class Init:
    def __init__(self, ctl: socket.socket, cfg: dict):
        self.ctl, self.cfg = ctl, cfg
        self.uid = self.gid = cfg["uid"]
        self.root = cfg["root"]
        self.oom_fd: int | None = None
        self.features: dict[str, object] = {}
        self.warnings: list[str] = list(cfg.get("warnings", ()))
        self.spawn_rlimits: list[tuple[int, int]] = []
        self.rootless = bool(cfg.get("userns"))

    # ---- set-up, before any untrusted code runs
    def setup(self) -> None:
        cfg = self.cfg
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        for path in cfg.get("cgroup_procs", ()):
            with open(path, "w") as f:
                f.write("0")
        if cfg.get("oom_file"):
            self.oom_fd = os.open(cfg["oom_file"], os.O_RDONLY)
        stage = cfg["stage"]
        mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755")
        os.chdir(stage)
        for name, target in cfg["toplinks"].items():
            os.symlink(target, name)
        for d in cfg["topdirs"]:
            os.mkdir(d)
            bind_ro("/" + d, d)
        # a copy in the root tmpfs (read-only with it), not a bind: a bind shows its host source
        # (the backend's temp dir) in /proc/self/mountinfo
        shutil.copytree(cfg["etc"], "etc", symlinks=True)
        # /tmp before the runtime's binds: a runtime cached under /tmp stays visible (read-only) in it
        os.mkdir("tmp")
        mount("tmpfs", "tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={cfg['tmp_mb']}m,mode=1777")
        for host in cfg["mounts"]:
            rel = host.lstrip("/")
            if os.path.lexists(rel) and not os.path.isdir(rel):
                continue
            os.makedirs(rel, exist_ok=True)
            bind_ro(host, rel)
        for host in cfg.get("hide", ()):  # host package trees: an empty, read-only tmpfs on top
            rel = host.lstrip("/")
            if os.path.isdir(rel) and not os.path.islink(rel):
                mount("tmpfs", rel, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k,mode=755")
        self._workspace(stage)
        self._dev()
        os.mkdir("proc")
        # Before the old root goes: a user namespace may mount a proc only while one is fully visible
        try:  # hidepid: commands cannot read init's entries (cmdline, status, mountinfo...)
            mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=1")
            self.features["proc"] = "own instance, hidepid=1 (init's entries unreadable)"
        except OSError as exc:
            mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            self.features["proc"] = "own instance"
            self.warnings.append(f"/proc without hidepid ({exc.strerror}): commands can read init's "
                                 "/proc/1/cmdline and status")
        _libc.sethostname(b"sandbox", 7)
        # pivot_root(".", ".") stacks the old root under the new one; detaching it leaves only ours.
        _check(_libc.syscall(SYS_PIVOT_ROOT, b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", MNT_DETACH), "umount old root")
        os.chdir("/")
        if self.rootless:  # the agent may not make a user namespace of its own to regain capabilities
            with open("/proc/sys/user/max_user_namespaces", "w") as f:
                f.write("0")
        _check(_libc.umount2(b"/.agentenv", MNT_DETACH), "hide workspace layers")
        mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        self._loopback_up()
        user = f"uid {self.uid}, no capabilities, no_new_privs"
        if self.rootless:
            user = (f"user namespace (rootless): uid {self.uid} is host uid {self.cfg['userns']['uid']} "
                    "and the only uid mapped; no capabilities, no_new_privs, no nested user namespaces")
        self.features.update({"pid": "namespace", "mount": "namespace", "ipc": "namespace",
                              "uts": "namespace", "network": "namespace (loopback only)", "user": user})
        self.features.update(cfg.get("limit_features", {}))
        self._drop_privileges()
        self._seccomp()

    def _seccomp(self) -> None:
        """Last step of the set-up (no_new_privs is set): every command inherits the filter. Init
        itself only spawns (clone without namespace flags), waits, kills and does file requests after it."""
        machine = os.uname().machine
        built = seccomp_program(machine)
        if built is None:
            self.warnings.append(f"no seccomp filter: no syscall table for {machine}; new namespaces, "
                                 "io_uring, bpf, keyctl and ptrace stay available to commands")
            self.features["seccomp"] = "none"
            return
        program, denied = built
        install_seccomp(program)
        self.features["seccomp"] = (
            f"filter ({machine}): {len(denied)} syscalls denied (EPERM), new namespaces refused (unshare, setns, "
            "clone with CLONE_NEW* flags: EPERM; clone3: ENOSYS, so libc falls back to clone), personality "
            "only with Docker's values, another architecture's syscalls kill the process")
        self.features["seccomp_denied"] = denied

    def _drop_privileges(self) -> None:
        """Become the sandbox user for good, once every mount is in place.

        Commands then inherit their credentials, ``no_new_privs`` and most rlimits from init, so
        init can start them with ``posix_spawn`` (vfork: no copy of this interpreter's page tables,
        several times cheaper than ``fork`` + Python code in the child). Init stays out of the
        agent's reach although it shares its uid: pid 1 of a namespace only receives the signals it
        handles (it handles none), and a non-dumpable process cannot be ptraced or read through
        /proc by an unprivileged user.
        """
        limits = self.cfg["limits"]
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(sig, signal.SIG_DFL)
        mb = 1 << 20
        fsize = int(limits["max_file_size_mb"]) * mb
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))  # init's own write_file obeys it too
        resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
        drop_bounding_capabilities()
        if not self.rootless:  # (a rootless user namespace has setgroups denied and no other ids)
            os.setgroups([])
            os.setgid(self.gid)
            os.setuid(self.uid)
        # Root's setuid empties the other sets; in a user namespace the sandbox uid was never 0,
        # so the capabilities the namespace gave its creator stay until cleared.
        clear_capabilities()
        # Changing the uid clears the parent-death signal: set it again. (Should the keeper die in
        # between, the control socket's EOF still ends init: its only other end is the zygote's.)
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        prctl(PR_SET_DUMPABLE, 0)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        if self.cfg.get("rlimit_nproc"):
            n = int(self.cfg["rlimit_nproc"])
            resource.setrlimit(resource.RLIMIT_NPROC, (n, n))
        self.spawn_rlimits = []  # limits init cannot carry itself: the child sets them after fork
        if self.cfg.get("rlimit_as_mb"):
            n = int(self.cfg["rlimit_as_mb"]) * mb
            self.spawn_rlimits.append((resource.RLIMIT_AS, n))
        if limits.get("cpu_time_s"):
            n = int(limits["cpu_time_s"]) + 1
            self.spawn_rlimits.append((resource.RLIMIT_CPU, n))

    def _workspace(self, stage: str) -> None:
        cfg = self.cfg
        os.mkdir(".agentenv", 0o700)
        mount("tmpfs", ".agentenv", "tmpfs", MS_NOSUID | MS_NODEV, f"size={cfg['workspace_mb']}m,mode=700")
        os.makedirs(self.root.lstrip("/"), exist_ok=True)
        rel = self.root.lstrip("/")
        upper, work = ".agentenv/upper", ".agentenv/work"
        os.mkdir(upper)
        os.mkdir(work)
        os.chown(upper, self.uid, self.gid)
        lower = cfg.get("workspace_dir")
        if lower:
            # paths relative to the stage: mountinfo shows the options as given, not host paths
            os.mkdir(".agentenv/lower")
            bind_ro(lower, ".agentenv/lower")
            opts = f"lowerdir=.agentenv/lower,upperdir={upper},workdir={work}"
            mount("overlay", rel, "overlay", MS_NOSUID | MS_NODEV, opts)
            self.features["workspace"] = "overlayfs (copy-on-write over the task's files)"
        else:
            mount(upper, rel, None, MS_BIND)
            self.features["workspace"] = "tmpfs"

    def _dev(self) -> None:
        os.mkdir("dev")
        mount("tmpfs", "dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
        for name in ("null", "zero", "full", "random", "urandom", "tty"):
            if os.path.exists("/dev/" + name):
                open("dev/" + name, "w").close()
                mount("/dev/" + name, "dev/" + name, None, MS_BIND)
        for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
            os.symlink(target, "dev/" + name)
        os.mkdir("dev/shm")
        mount("tmpfs", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={self.cfg.get('shm_mb', 16)}m,mode=1777")

    def _loopback_up(self) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            ifr = struct.pack("16sH14x", b"lo", 0)
            flags = struct.unpack("16sH14x", fcntl.ioctl(s, 0x8913, ifr))[1]  # SIOCGIFFLAGS
            fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP
        finally:
            s.close()

    # ---- the request loop
    def serve(self) -> None:
        send_msg(self.ctl, {"ready": True, "features": self.features, "warnings": self.warnings})
        while True:
            try:
                req, body = recv_msg(self.ctl)
            except (EOFError, ConnectionError):
                os._exit(0)
            try:
                reply, data = getattr(self, "op_" + req["op"])(req, body)
            except OSError as exc:
                reply, data = {"error": exc.__class__.__name__, "errno": exc.errno, "message": str(exc)}, b""
            except Exception as exc:  # report, never die: the caller decides
                reply, data = {"error": "RuntimeError", "message": f"{type(exc).__name__}: {exc}"}, b""
            self._reap()
            send_msg(self.ctl, reply, data)

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return

    def _kill_all(self) -> None:
        """Kill every process but init, and reap them all before the next command starts.

        One ``kill(-1)`` misses what a fork bomb forks while the kernel walks the process list,
        and a killed process holds its pid (and its place under ``pids.max``) until reaped. Every
        process of the namespace descends from init, so "init has no children" means none is left.
        """
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
            time.sleep(0.001)

    def _oom_count(self) -> int:
        if self.oom_fd is None:
            return 0
        for line in os.pread(self.oom_fd, 4096, 0).decode().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def op_ping(self, req, body):
        return {"ok": True}, b""

    def op_exec(self, req, body):
        limits = self.cfg["limits"]
        cap = int(limits["max_output_bytes"])
        timeout = float(req.get("timeout") or limits["wall_time_s"])
        env = req["env"]
        argv = req["argv"]
        cwd = req.get("cwd") or self.root
        oom_before = self._oom_count()
        self._reap()  # orphans that ended while init was idle still hold their pids
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        in_r, in_w = os.pipe()
        # the pipes exist before the command starts: a check that writes its report at once finds them
        pipes = {}  # read fd -> (path, our own write fd that keeps EOF away, buffer)
        for path in req.get("pipes", ()):
            pipes_fd = self._make_pipe(path)
            if pipes_fd is not None:
                pipes[pipes_fd[0]] = (path, pipes_fd[1], bytearray())
        start = time.monotonic()
        try:
            pid = self._spawn(argv, env, cwd, in_r, out_w, err_w)
        except OSError as exc:  # report like a shell does: the command could not start
            for fd in (out_r, err_r, in_w, out_w, err_w, in_r, *pipes, *(w for _, w, _ in pipes.values())):
                os.close(fd)
            for path, _, _ in pipes.values():
                try:
                    os.unlink(path)
                except OSError:
                    pass
            message = f"agentenv: cannot run {argv[0]}: {exc}\n".encode()
            return {"exit_code": 127, "wall_ms": (time.monotonic() - start) * 1000, "cpu_ms": 0.0,
                    "peak_memory_mb": 0.0, "timed_out": False, "oom_killed": False, "truncated": False,
                    "stdout_len": 0, "stderr_len": len(message), "artifacts": {}}, message
        for fd in (out_w, err_w, in_r):
            os.close(fd)
        if body:
            self._feed(in_w, body)
        os.close(in_w)
        pidfd = os.pidfd_open(pid)
        bufs = {out_r: _Capped(cap), err_r: _Capped(cap)}
        open_fds = [out_r, err_r, *pipes]
        timed_out = False
        status = rusage = None
        deadline = start + timeout
        while status is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                try:
                    os.kill(-1, signal.SIGKILL)  # pid 1 kills every other process of the namespace
                except ProcessLookupError:
                    pass
                _, status, rusage = os.wait4(pid, 0)
                self._kill_all()
                break
            ready, _, _ = select.select(open_fds + [pidfd, self.ctl], [], [], remaining)
            for fd in ready:
                if fd is self.ctl:  # the caller never speaks during a command: this is its EOF
                    try:
                        gone = not self.ctl.recv(1, socket.MSG_PEEK)
                    except OSError:
                        gone = True
                    if gone:
                        self._kill_all()
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
                while chunk := os.read(fd, 65536):
                    bufs[fd].add(chunk)
            except BlockingIOError:
                pass
        for fd in (out_r, err_r, pidfd):
            os.close(fd)
        oom = self._oom_count() > oom_before
        if os.WIFSIGNALED(status):
            code = -os.WTERMSIG(status)
        else:
            code = os.WEXITSTATUS(status)
        artifacts = {}
        blob = b""
        for path, data in captured.items():
            artifacts[path] = [len(blob), len(data)]
            blob += data
        for path in req.get("collect", ()):
            try:
                data = self._read(path)
            except OSError:
                continue
            artifacts[path] = [len(blob), len(data)]
            blob += data
        reply = {
            "exit_code": code, "wall_ms": wall,
            "cpu_ms": (rusage.ru_utime + rusage.ru_stime) * 1000 if rusage else 0.0,
            "peak_memory_mb": (rusage.ru_maxrss / 1024) if rusage else 0.0,
            "timed_out": timed_out, "oom_killed": oom,
            "truncated": bufs[out_r].dropped > 0 or bufs[err_r].dropped > 0,
            "stdout_len": 0, "artifacts": artifacts,
        }
        out, err = bufs[out_r].value(), bufs[err_r].value()
        reply["stdout_len"], reply["stderr_len"] = len(out), len(err)
        return reply, out + err + blob

    def _make_pipe(self, path: str) -> tuple[int, int] | None:
        """A named pipe at *path* that init reads while the command runs.

        A report written there is exactly what was written during the command: a second writer
        (an atexit hook overwriting the report, say) appends to it and so spoils it, and a writer
        after the command finds no pipe. Init holds a write end too, so it never sees EOF early."""
        try:
            if os.path.lexists(path):
                os.unlink(path)
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)  # a reward file has no judge files beside it
            os.mkfifo(path, 0o600)
            reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            writer = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return None
        return reader, writer

    @staticmethod
    def _read_pipe(fd: int, data: bytearray) -> None:
        try:
            while len(data) < MAX_READ and (chunk := os.read(fd, 65536)):
                data += chunk
        except BlockingIOError:
            pass

    def _feed(self, fd: int, data: bytes) -> None:
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

    def _spawn(self, argv: list[str], env: dict, cwd: str, stdin: int, stdout: int, stderr: int) -> int:
        """Start a command in a new session with the given pipes; init's fds are all close-on-exec."""
        try:
            os.chdir(cwd)
        except OSError:
            os.chdir("/")
        try:
            if not self.spawn_rlimits:
                return os.posix_spawn(
                    argv[0], argv, env, setsid=True, setsigdef=_DEFAULT_SIGNALS,
                    file_actions=[(os.POSIX_SPAWN_DUP2, stdin, 0), (os.POSIX_SPAWN_DUP2, stdout, 1),
                                  (os.POSIX_SPAWN_DUP2, stderr, 2)])
            return self._fork_exec(argv, env, stdin, stdout, stderr)
        finally:
            os.chdir("/")

    def _fork_exec(self, argv: list[str], env: dict, stdin: int, stdout: int, stderr: int) -> int:
        """The slow path, for limits a child must set on itself (address space, CPU time)."""
        err_r, err_w = os.pipe()  # close-on-exec: EOF means exec succeeded
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()
                os.dup2(stdin, 0)
                os.dup2(stdout, 1)
                os.dup2(stderr, 2)
                for sig in _DEFAULT_SIGNALS:
                    signal.signal(sig, signal.SIG_DFL)
                for which, n in self.spawn_rlimits:
                    resource.setrlimit(which, (n, n))
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

    # ---- file requests, resolved inside the sandbox and confined
    #
    # Init may open what commands may not: its own /proc/1/fd links lead to host files (its log, a
    # cgroup file), /dev/stdin is one of them. So a path is resolved here, symlink by symlink, and
    # must end within bounds: reads and listings anywhere but /proc, /sys and /dev (the rest of the
    # sandbox is what commands read anyway), writes and removals in the workspace or /tmp only.
    # Only symlinks within the same bounds are followed. The result is then opened one component
    # at a time with O_NOFOLLOW: a symlink swapped in meanwhile fails instead of being followed.

    def _allowed(self, path: str) -> bool:
        return any(path == base or path.startswith(base.rstrip("/") + "/") for base in (self.root, "/tmp"))

    @staticmethod
    def _readable(path: str) -> bool:
        return not any(path == top or path.startswith(top + "/") for top in _PSEUDO_FS)

    def _refuse(self, path: str, write: bool = True) -> OSError:
        why = "outside the workspace and /tmp" if write else "in /proc, /sys or /dev"
        return PermissionError(errno.EACCES, f"refused: {why}", path)

    def _resolve(self, path: str, write: bool = True) -> str:
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

    def _open_dir(self, path: str) -> int:
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

    def _open_in(self, path: str, flags: int, mode: int = 0o600) -> int:
        real = self._resolve(path, write=False)
        parent, name = os.path.split(real)
        if not name:
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        dfd = self._open_dir(parent)
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dfd)
        finally:
            os.close(dfd)

    def _read(self, path: str) -> bytes:
        try:  # O_NONBLOCK: a FIFO opens at once, and is then refused as not a regular file
            fd = self._open_in(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refuse(path, write=False) from None
            raise OSError(exc.errno, exc.strerror, path) from None  # never the resolved path
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", path)
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", path)
            if st.st_size > MAX_READ:
                raise OSError(errno.EFBIG, f"file larger than {MAX_READ} bytes", path)
            os.set_blocking(fd, True)
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def op_read(self, req, body):
        return {"ok": True}, self._read(req["path"])

    def _make_dirs(self, path: str) -> None:
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
        try:
            real = self._resolve(os.path.dirname(path))
            dfd = self._open_dir(real)
        except FileNotFoundError:  # no parent, so nothing to remove: not an error (the protocol's promise)
            return {"ok": True}, b""
        try:
            name = os.path.basename(path)
            self._remove_at(dfd, name, os.path.join(real, name))
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

    @staticmethod
    def _remove_at(dfd: int, name: str, full: str) -> None:
        try:
            st = os.lstat(name, dir_fd=dfd)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(full)  # fd-based: symlinks inside are removed, never followed
        else:
            os.unlink(name, dir_fd=dfd)

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
            self._remove_at(dfd, name, os.path.join(real, name))
        finally:
            os.close(dfd)
        return {"ok": True}, b""

    def op_list(self, req, body):
        base = self._resolve(req["path"], write=False)
        if not os.path.isdir(base):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", req["path"])
        out = []
        for dirpath, dirnames, filenames in os.walk(base):
            if dirpath == "/":
                dirnames[:] = [d for d in dirnames if "/" + d not in _PSEUDO_FS]
            rel = os.path.relpath(dirpath, base)
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                out.append(name if rel == "." else f"{rel}/{name}")
            if len(out) > 100_000:
                break
        return {"files": sorted(out)}, b""


class _Capped:
    """Keeps the head and the tail of a stream up to *cap* bytes, counting what it drops."""

    def __init__(self, cap: int):
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
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

    def value(self) -> bytes:
        if self.dropped:
            return bytes(self.head) + f"\n...[{self.dropped} bytes dropped]...\n".encode() + bytes(self.tail)
        return bytes(self.head + self.tail)


# --------------------------------------------------------------------------- zygote

class Zygote:
    def __init__(self, sock: socket.socket, pool_size: int = 1):
        self.sock = sock
        self.pid = os.getpid()
        self.sandboxes: dict[str, dict] = {}  # id -> {"keeper": pid, "init": pid, "cgroups": [...]}
        self.doomed_cgroups: list[str] = []
        self.ids = itertools.count()
        # Warm pool: for each recently used configuration, sandboxes already set up and waiting, so
        # that opening one costs a message instead of namespaces + mounts (refilled while idle).
        self.pool_size = pool_size
        self.pool_keys = 8
        self.pool: dict[bytes, list[dict]] = {}
        self.pool_order: list[bytes] = []
        self.pool_boxes: dict[str, dict] = {}
        self.last_open = 0.0
        self.wake_r = self.wake_w = None

    def run(self) -> None:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        # a keeper's exit wakes the loop, so that its cgroups go at once, not at the next request
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        while True:
            refill = any(len(self.pool[k]) < self.pool_size for k in self.pool_order)
            wait = 0.2 if self.doomed_cgroups else 5.0
            if refill:
                wait = min(wait, max(0.0, self.last_open + REFILL_DELAY_S - time.monotonic()))
            ready, _, _ = select.select([self.sock, self.wake_r], [], [], wait)
            if self.wake_r in ready:
                ready.remove(self.wake_r)
                try:
                    os.read(self.wake_r, 4096)
                except BlockingIOError:
                    pass
            if ready:
                try:
                    msg = self.sock.recv(1 << 16)
                except ConnectionError:
                    msg = b""
                if not msg:
                    self.shutdown()
                    return
                req = json.loads(msg)
                req["raw"] = msg
                try:
                    getattr(self, "op_" + req["op"])(req)
                except Exception as exc:
                    self.sock.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            # housekeeping after the answer: removing a cgroup can take a while
            self._reap()
            if not ready and refill and time.monotonic() >= self.last_open + REFILL_DELAY_S:
                self._refill()

    def _reap(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            for sid, box in list(self.sandboxes.items()):
                if box["keeper"] == pid:
                    self.doomed_cgroups += box["cgroups"]
                    del self.sandboxes[sid]
        still = []
        for path in self.doomed_cgroups:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                still.append(path)
        self.doomed_cgroups = still

    def shutdown(self) -> None:
        for boxes in self.pool.values():
            for box in boxes:
                self._discard(box)
        self.pool.clear()
        for box in self.sandboxes.values():
            try:
                os.kill(box["init"], signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while (self.sandboxes or self.doomed_cgroups) and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.01)

    def op_close(self, req) -> None:
        box = self.sandboxes.get(req["id"])
        if box:
            try:
                os.kill(box["init"], signal.SIGKILL)
            except ProcessLookupError:
                pass
        if req.get("reply"):
            self.sock.send(b'{"ok": true}')

    def op_count(self, req) -> None:
        self.sock.send(json.dumps({"open": len(self.sandboxes)}).encode())

    def op_open(self, req) -> None:
        self.last_open = time.monotonic()
        cfg = req["config"]
        # the caller encodes a configuration the same way every time: its bytes are the pool key
        key = req["raw"]
        pooled = self.pool.get(key)
        box = pooled.pop() if pooled else self._spawn(cfg)
        if box is None:
            self.sock.send(json.dumps({"error": "the sandbox keeper died before starting init"}).encode())
            return
        if box.get("background"):  # back to normal priority before any command can inherit it
            try:
                os.setpriority(os.PRIO_PROCESS, box["init"], 0)
            except OSError:
                pass  # init died: the caller finds out from its socket
        sid = box["id"]
        self.pool_boxes.pop(sid, None)
        self.sandboxes[sid] = box
        socket.send_fds(self.sock, [json.dumps({"ok": True, "id": sid, "init": box["init"]}).encode()],
                        [box["sock"].fileno()])
        box["sock"].close()
        del box["sock"]
        if self.pool_size > 0:
            self.pool.setdefault(key, [])
            self.pool_order = [k for k in self.pool_order if k != key] + [key]
            while len(self.pool_order) > self.pool_keys:
                for old in self.pool.pop(self.pool_order.pop(0), []):
                    self._discard(old)

    def _refill(self) -> bool:
        """Prepare one pooled sandbox where a recently used configuration has fewer than pool_size."""
        for key in reversed(self.pool_order):
            boxes = self.pool[key]
            if len(boxes) < self.pool_size:
                box = self._spawn(json.loads(key)["config"], background=True)
                if box is not None:
                    self.pool_boxes[box["id"]] = box
                    boxes.append(box)
                return True
        return False

    def _discard(self, box: dict) -> None:
        box["sock"].close()
        self.pool_boxes.pop(box["id"], None)
        self.sandboxes[box["id"]] = box
        try:
            os.kill(box["init"], signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _spawn(self, cfg: dict, background: bool = False) -> dict | None:
        """Fork a keeper and a set-up init for *cfg*. A *background* (pool) set-up runs at a lower
        priority, so that it yields the CPU to the commands of the sandboxes in use."""
        sid = f"{self.pid}-{next(self.ids)}"
        cfg = dict(cfg)
        cgroups, cfg["oom_file"] = cgroup_specs(cfg.get("cgroup_mode"), cfg.get("cgroup_base", {}), sid,
                                                cfg["limits"])
        made = []
        try:
            for spec in cgroups:
                os.mkdir(spec["dir"])
                made.append(spec["dir"])
                for name, value in spec["settings"].items():
                    with open(os.path.join(spec["dir"], name), "w") as f:
                        f.write(str(value))
        except OSError:
            self.doomed_cgroups += made
            raise
        cfg["cgroup_procs"] = [os.path.join(d, "cgroup.procs") for d in made]
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        r, w = os.pipe()
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET
        keeper = os.fork()
        if keeper == 0:
            try:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if os.getppid() != self.pid:
                    os._exit(1)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                if self.wake_r is not None:
                    os.close(self.wake_r)
                    os.close(self.wake_w)
                if background:
                    os.setpriority(os.PRIO_PROCESS, 0, 10)
                self.sock.close()
                parent_end.close()
                for other in list(self.pool_boxes.values()):
                    other["sock"].close()
                os.close(r)
                userns = cfg.get("userns")
                _check(_libc.unshare(flags | (CLONE_NEWUSER if userns else 0)), "unshare")
                if userns:
                    enter_user_namespace(cfg["uid"], userns["uid"], cfg["uid"], userns["gid"])
                init = os.fork()
                if init == 0:
                    os.close(w)
                    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                    box = Init(child_end, cfg)
                    try:
                        box.setup()
                    except BaseException as exc:
                        send_msg(child_end, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
                        os._exit(1)
                    box.serve()
                    os._exit(0)
                os.write(w, str(init).encode())
                os.close(w)
                child_end.close()
                while True:
                    try:
                        os.waitpid(init, 0)
                        break
                    except ChildProcessError:
                        break
                    except InterruptedError:
                        continue
                os._exit(0)
            except BaseException as exc:
                try:
                    os.write(2, f"agentenv zygote: sandbox keeper failed: {exc}\n".encode())
                finally:
                    os._exit(1)
        os.close(w)
        child_end.close()
        init_pid = int(os.read(r, 32) or b"0")
        os.close(r)
        if not init_pid:
            parent_end.close()
            self.doomed_cgroups += made
            return None
        return {"id": sid, "keeper": keeper, "init": init_pid, "cgroups": made, "sock": parent_end,
                "background": background}


def cgroup_specs(mode: str | None, base: dict, sid: str, limits: dict) -> tuple[list[dict], str | None]:
    """The cgroup directories (with their settings) for one sandbox, and the file that counts OOM kills."""
    mem = int(limits["memory_mb"]) << 20
    pids = int(limits["max_processes"]) + 1  # + init
    if mode == "v2":
        d = os.path.join(base["unified"], sid)
        return ([{"dir": d, "settings": {"memory.max": mem, "memory.swap.max": 0, "pids.max": pids}}],
                os.path.join(d, "memory.events"))
    if mode == "v1":
        mdir = os.path.join(base["memory"], sid)
        settings = {"memory.limit_in_bytes": mem}
        if os.path.exists(os.path.join(base["memory"], "memory.memsw.limit_in_bytes")):
            settings["memory.memsw.limit_in_bytes"] = mem
        return ([{"dir": mdir, "settings": settings},
                 {"dir": os.path.join(base["pids"], sid), "settings": {"pids.max": pids}}],
                os.path.join(mdir, "memory.oom_control"))
    return [], None


def main() -> None:
    fd, pool_size = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sock = socket.socket(fileno=fd)
    Zygote(sock, pool_size).run()


if __name__ == "__main__":
    main()
