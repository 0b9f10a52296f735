"""The namespace backend's zygote and sandbox init. Standard library only; run as a script.

Why a separate process: forking the caller (which may hold torch, threads and locks) is slow and
unsafe; this small single-threaded interpreter forks sandboxes in about a millisecond instead.

Process tree of one sandbox::

    caller ──seqpacket──> zygote (this script, started once per backend)
                            ├── seed          one per Python interpreter that runtimes of warm
                            │     │           sandboxes use (see _Seed): root, standard library only,
                            │     │           started before it hears of any sandbox
                            │     └── template   per warm sandbox: a fork that enters the sandbox's
                            │                 namespaces and cgroups and confines itself; Python
                            │                 commands fork from it (see _nswarm.py)
                            └── keeper (C1)   waits for init; PDEATHSIG: dies with the zygote. With a
                                  │           warm interpreter it is pid 1 of a pid namespace of its
                                  │           own, around the sandbox's, and once init is set up it
                                  │           asks the seed for the template or, where its runtime's
                                  │           Python has none, execs that Python as the template
                                  │           (see _WarmKeeper)
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
import zlib

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
# The pool refills once no sandbox was opened for this long: opens that come in a burst (a vector
# env resetting) are not held up by a set-up between them, and the set-up, which briefly blocks
# the zygote and takes CPU, stays out of the first commands of the sandbox just handed out.
REFILL_DELAY_S = 0.01

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.unshare.argtypes = [ctypes.c_int]
_libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
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


def copy_tree(src: str, dst: str) -> None:
    """Copy a small tree of files, directories and symlinks (links copied, never followed):
    /etc's staged copy, once per sandbox. shutil.copytree's copystat of every entry was most of a
    sandbox's set-up."""
    os.mkdir(dst)
    for entry in os.scandir(src):
        target = os.path.join(dst, entry.name)
        if entry.is_symlink():
            os.symlink(os.readlink(entry.path), target)
        elif entry.is_dir():
            copy_tree(entry.path, target)
        else:
            with open(entry.path, "rb") as f, open(target, "wb") as out:
                out.write(f.read())
            os.chmod(target, entry.stat().st_mode & 0o7777)


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
        ioperm=173, clone=56, clone3=435, personality=135, prlimit64=302, setpriority=141, sched_setparam=142,
        sched_setscheduler=144, sched_setaffinity=203, sched_setattr=314, ioprio_set=251)),
    "aarch64": (0xC00000B7, dict(
        unshare=97, setns=268, io_uring_setup=425, io_uring_enter=426, io_uring_register=427, keyctl=219,
        add_key=217, request_key=218, bpf=280, perf_event_open=241, ptrace=117, process_vm_readv=270,
        process_vm_writev=271, init_module=105, finit_module=273, delete_module=106, kexec_load=104,
        kexec_file_load=294, mount=40, umount2=39, pivot_root=41, chroot=51, move_mount=429, open_tree=428,
        fsopen=430, fsmount=432, fsconfig=431, fspick=433, mount_setattr=442, swapon=224, swapoff=225,
        reboot=142, userfaultfd=282, open_by_handle_at=265, name_to_handle_at=264, acct=89, quotactl=60,
        quotactl_fd=443, syslog=116, vhangup=58, lookup_dcookie=18, settimeofday=170, clock_settime=112,
        clock_adjtime=266, adjtimex=171, nfsservctl=42, clone=220, clone3=435, personality=92, prlimit64=261,
        setpriority=140, sched_setparam=118, sched_setscheduler=119, sched_setaffinity=122, sched_setattr=274,
        ioprio_set=30)),
}
CLONE_NEW_ANY = (CLONE_NEWNS | 0x02000000 | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
                 | CLONE_NEWNET | 0x00000080)  # + CLONE_NEWCGROUP, CLONE_NEWTIME
PERSONALITY_OK = (0x0, 0x0008, 0x20000, 0x20008, 0xFFFFFFFF)  # Docker's: linux, linux32, uname26, query
# Calls that change another process's limits or scheduling: init (pid 1) shares the commands' uid,
# which is all the kernel asks, so a command could lower init's CPU limit (the kernel then kills
# it), its open-file limit (every later request fails) or its share of the CPU (requests time out):
# a sandbox lost, an episode masked, by the agent's own doing. They may name the caller only:
# pid 0 (prlimit64 may still read another's limits), and not all of the user's processes.
SELF_ONLY = ("prlimit64", "setpriority", "sched_setparam", "sched_setscheduler", "sched_setaffinity",
             "sched_setattr", "ioprio_set")
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

    def lo(i):  # seccomp_data.args[i], its low half (and high half; little-endian on both machines)
        return 16 + 8 * i

    def hi(i):
        return 20 + 8 * i

    for name in SELF_ONLY:  # each block: not this call, jump past it; else it returns
        if name == "prlimit64":  # (pid, resource, new, old): another's pid only with new == NULL
            body = [(_BPF_LD_W_ABS, lo(0)), (_BPF_JEQ_K, 0, 4, 0), (_BPF_LD_W_ABS, lo(2)), (_BPF_JEQ_K, 0, 0, 3),
                    (_BPF_LD_W_ABS, hi(2)), (_BPF_JEQ_K, 0, 0, 1)]
        elif name in ("setpriority", "ioprio_set"):  # (which, who): who 0, and not "every process of the user"
            user = 2 if name == "setpriority" else 3  # PRIO_USER, IOPRIO_WHO_USER
            body = [(_BPF_LD_W_ABS, lo(1)), (_BPF_JEQ_K, 0, 0, 3), (_BPF_LD_W_ABS, lo(0)), (_BPF_JEQ_K, user, 1, 0)]
        else:  # (pid, ...)
            body = [(_BPF_LD_W_ABS, lo(0)), (_BPF_JEQ_K, 0, 0, 1)]
        body += [(_BPF_RET_K, _RET_ALLOW), (_BPF_RET_K, eperm)]
        op(_BPF_JEQ_K, nr[name], 0, len(body))
        for code, k, *jumps in body:
            op(code, k, *jumps)
    op(_BPF_JEQ_K, nr["clone3"], 0, 1)
    op(_BPF_RET_K, enosys)
    op(_BPF_JEQ_K, nr["clone"], 0, 4)
    op(_BPF_LD_W_ABS, lo(0))
    op(_BPF_JSET_K, CLONE_NEW_ANY, 0, 1)
    op(_BPF_RET_K, eperm)
    op(_BPF_RET_K, _RET_ALLOW)
    op(_BPF_JEQ_K, nr["personality"], 0, 2 + len(PERSONALITY_OK))
    op(_BPF_LD_W_ABS, lo(0))
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


try:  # imported by the backend (as agentenv.builtin._nszygote)
    from agentenv._sandbox_server import (DEFAULT_SIGNALS, HEADER, MAX_READ, OOM_FILES, CpuUse, MemoryGrowth, Server,
                                          handle_no_signals, oom_kills, recv_msg, send_msg, which)
except ImportError:  # run as the zygote script: the backend loaded the server's source first
    from agentenv_sandbox_server import (DEFAULT_SIGNALS, HEADER, MAX_READ, OOM_FILES, CpuUse, MemoryGrowth, Server,
                                         handle_no_signals, oom_kills, recv_msg, send_msg, which)

#: real and saved uid of a sandbox's warm interpreter: no command (uid SANDBOX in all three slots)
#: may signal or trace a process whose real and saved uid are another user's
TEMPLATE_UID = 65533
#: bytes the warm interpreter reserves for a command's argv and environment (/proc/self/cmdline)
WARM_RESERVE = 32 << 10
#: the whole environment of the zygote and of the seeds (see _Seed): the host's never reaches
#: them, so never the memory of an init or a template
ZYGOTE_ENV = {"LANG": "C.UTF-8", "PATH": "/usr/local/bin:/usr/bin:/bin"}
WARM_SOURCE = globals().get("WARM_SOURCE")  # set by the backend's loader; None when imported
# what init sends an exec'd template (see WARM_LOADER), compressed once: one message of a SOCK_SEQPACKET
# pair, which a socket's default send buffer (212,992 bytes) caps; the source (the judge within) is past it
WARM_PAYLOAD = zlib.compress(WARM_SOURCE.encode(), 9) if WARM_SOURCE is not None else None
WARM_SCRIPTS = globals().get("WARM_SCRIPTS") or {}  # (what a seed compiles for its templates: _nswarm.SCRIPTS)
PAD_VAR = "AGENTENV_WARM_PAD"  # (the template leaves it out of the environment it serves, see _nswarm)
#: seeds that preload a runtime's pytest (each holds ~20 MB of its imports, shared by its templates)
MAX_RUNTIME_SEEDS = 8
SEED_PROGRAM = globals().get("SEED_PROGRAM")  # what a seed's interpreter reads (the zygote's only)
WARM_LOADER = ("import sys;B=frozenset(sys.modules);import socket;s=socket.socket(fileno=3);"
               "g={'__name__':'agentenv_warm','__builtins__':__builtins__};"
               "import zlib;w=zlib.decompress(s.recv(1<<20));del sys.modules['zlib'],zlib;"
               "exec(compile(w,'agentenv-warm','exec'),g);del w;g['main'](s,B)")
# what a template forked by a seed enters, in this order (the mount namespace last: it changes /proc)
SEED_NAMESPACES = (("ipc", CLONE_NEWIPC), ("uts", CLONE_NEWUTS), ("net", CLONE_NEWNET),
                   ("pid_for_children", CLONE_NEWPID), ("mnt", CLONE_NEWNS))
# characters a shell treats specially outside quotes: such a command line is left to the shell
_SHELL_SPECIAL = set("$`\\;&|<>(){}*?[]!#~\n\r\t\"'")
# --------------------------------------------------------------------------- init (pid 1)

class Init(Server):
    def __init__(self, ctl: socket.socket, cfg: dict, warm: tuple[socket.socket, int] | None = None):
        super().__init__(cfg["root"], cfg["uid"], cfg["uid"], cfg["limits"])
        self.ctl, self.cfg = ctl, cfg
        self.watch = ctl
        self.oom_fd: int | None = None
        self.warm = warm  # the template's channel, and the pipe that starts it (the keeper's side)
        self.template: dict | None = None  # the warm interpreter: socket, state
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
            self.memory = MemoryGrowth.open(os.path.dirname(cfg["oom_file"]))
        self.cpu = CpuUse.open(cfg.get("cpu_dir"))
        self.features["peak_memory"] = ("the largest process, or the memory cgroup's rise if larger"
                                        if self.memory is not None else "the largest process")
        self.features["cpu_time"] = ("the command's processes, or the CPU cgroup's use if more"
                                     if self.cpu is not None else "the command's processes")
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
        copy_tree(cfg["etc"], "etc")
        for name in cfg.get("etc_binds", ()):  # host files at their own path: no host folder shows in mountinfo
            host, target = os.path.join("/etc", name), os.path.join("etc", name)
            if os.path.isdir(host):
                os.mkdir(target)
            else:
                open(target, "w").close()
            bind_ro(host, target)
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
        self._workspace_layers()
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
        mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
        self._loopback_up()
        user = f"uid {self.uid}, no capabilities, no_new_privs"
        if self.rootless:
            user = (f"user namespace (rootless): uid {self.uid} is host uid {self.cfg['userns']['uid']} "
                    "and the only uid mapped; no capabilities, no_new_privs, no nested user namespaces")
        self.features.update({"pid": "namespace", "mount": "namespace", "ipc": "namespace",
                              "uts": "namespace", "network": "namespace (loopback only)", "user": user})
        self.features.update(cfg.get("limit_features", {}))
        self._start_template()

    def finish(self, workspace: str | None) -> None:
        """The rest of the set-up, once the sandbox is handed out: the task's files (*workspace*,
        a directory of ``workspace_source``) under the workspace, then the privileges go. Everything
        before does not depend on the task, so a pooled sandbox serves any task of its configuration."""
        self._workspace(workspace)
        if self.template is not None and not self.cfg["warm"].get("seed"):
            # an exec'd template imports what the runtime's PYTHONPATH holds (a sitecustomize, the
            # modules of its loader) as its interpreter starts: before the host writes any file of
            # the agent's (a template forked from a seed leaves writable entries out, _nswarm.adopt)
            self._template_ready()
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
        handle_no_signals()
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

    def _workspace_layers(self) -> None:
        """In the stage: the workspace's mount point, its writable layer, and (read-only, for init
        alone until :meth:`finish`) the host folder that holds the task's files."""
        cfg = self.cfg
        os.mkdir(".agentenv", 0o700)
        mount("tmpfs", ".agentenv", "tmpfs", MS_NOSUID | MS_NODEV, f"size={cfg['workspace_mb']}m,mode=700")
        os.makedirs(self.root.lstrip("/"), exist_ok=True)
        os.mkdir(".agentenv/upper")
        os.mkdir(".agentenv/work")
        os.chown(".agentenv/upper", self.uid, self.gid)
        if cfg.get("workspace_source"):
            os.mkdir(".agentenv/source")
            bind_ro(cfg["workspace_source"], ".agentenv/source")

    def _workspace(self, name: str | None) -> None:
        """After pivot_root (the cwd is the new root): the workspace over the task's files *name*."""
        rel = self.root.lstrip("/")
        upper, work = ".agentenv/upper", ".agentenv/work"
        if name is not None:
            if not isinstance(name, str) or name in ("", ".", "..") or "/" in name or "\0" in name or \
                    not os.path.isdir(os.path.join(".agentenv/source", name)):
                raise ValueError(f"no task files {name!r} in the workspace source")
            # paths relative to the root: mountinfo shows the options as given, not host paths
            os.mkdir(".agentenv/lower")
            bind_ro(os.path.join(".agentenv/source", name), ".agentenv/lower")
            opts = f"lowerdir=.agentenv/lower,upperdir={upper},workdir={work}"
            mount("overlay", rel, "overlay", MS_NOSUID | MS_NODEV, opts)
            self.features["workspace"] = "overlayfs (copy-on-write over the task's files)"
        else:
            mount(upper, rel, None, MS_BIND)
            self.features["workspace"] = "tmpfs"
        # the writable layer stays reachable to init alone (fork snapshots it), through this fd;
        # the layers, and every other task's files, leave the mount table
        self.upper_fd = os.open("/.agentenv/upper", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        _check(_libc.umount2(b"/.agentenv", MNT_DETACH), "hide workspace layers")

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

    # ---- fork: the workspace's writable layer, copied into another sandbox
    def op_snapshot(self, req, body):
        """The workspace's changes: every entry of the overlay's writable layer (files with their
        bytes, links, directories with the names the merged view lists, so that deletions and
        replaced directories carry over), read through init's fd of that layer, never followed."""
        entries: list[dict] = []
        blob = bytearray()
        unreadable: list[tuple[str, int]] = []  # (path in the workspace, mode) to put back
        # The copy is held in this server's memory, which the sandbox's files already share: at most
        # a quarter of it, as the evaluation copies at most (a workspace of 138 MB in 512 had the OOM
        # killer take the server mid-snapshot, and the episode with it)
        bound = min(SNAPSHOT_MAX, int(self.cfg["limits"]["memory_mb"]) << 18)

        def too_big(size: int) -> None:
            if size > bound:
                raise OSError(errno.EFBIG, f"the workspace's changes hold more than {bound >> 20} MiB, more than "
                                           "a fork copies (a quarter of the sandbox's memory)")

        def opened(dfd: int, name: str, path: str, st: os.stat_result, flags: int) -> int:
            """An entry the commands made unreadable (``chmod 000``: they own it, as this server
            does) is made readable for the copy (through the workspace's merged view, which the
            layer's own inode is cached by), its mode kept in the snapshot and put back."""
            flags |= os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
            need = 0o500 if flags & os.O_DIRECTORY else 0o400  # (a folder is read and searched)
            if st.st_mode & need != need and st.st_uid == os.geteuid():
                merged = os.path.join(self.root, path)
                os.chmod(merged, stat.S_IMODE(st.st_mode) | need, follow_symlinks=False)
                unreadable.append((merged, stat.S_IMODE(st.st_mode)))
            return os.open(name, flags, dir_fd=dfd)

        def walk(dfd: int, rel: str, st: os.stat_result | None = None, depth: int = 0) -> None:
            merged = os.path.join(self.root, rel) if rel else self.root
            # (a tree nested past the interpreter's recursion, or past what a path names, raised
            # RecursionError and ENAMETOOLONG out of env.fork(): red team, stop 37)
            if depth > FORK_DEPTH or len(os.fsencode(merged)) > FORK_PATH:
                raise OSError(errno.ENAMETOOLONG, f"the workspace's changes hold folders nested deeper than "
                                                  f"{FORK_DEPTH} or a path longer than {FORK_PATH} bytes, more than "
                                                  "a fork copies")
            entries.append({"p": rel, "k": "d", "names": sorted(os.listdir(merged)), **_meta(st or os.fstat(dfd))})
            for entry in sorted(os.scandir(dfd), key=lambda e: e.name):
                st = entry.stat(follow_symlinks=False)
                path = f"{rel}/{entry.name}" if rel else entry.name
                if stat.S_ISDIR(st.st_mode):
                    sub = opened(dfd, entry.name, path, st, os.O_DIRECTORY)
                    try:
                        walk(sub, path, st, depth + 1)  # (its mode as it was: opened() may have changed it)
                    finally:
                        os.close(sub)
                elif stat.S_ISREG(st.st_mode):
                    too_big(len(blob) + st.st_size)
                    fd = opened(dfd, entry.name, path, st, 0)
                    try:
                        offset = len(blob)
                        while True:  # (the size may change under a writer that still runs)
                            chunk = os.read(fd, min(max(st.st_size - (len(blob) - offset), 0) or 1 << 20, 1 << 24))
                            if not chunk:
                                break
                            blob.extend(chunk)
                            too_big(len(blob))
                    finally:
                        os.close(fd)
                    entries.append({"p": path, "k": "f", "o": offset, "n": len(blob) - offset, **_meta(st)})
                elif stat.S_ISLNK(st.st_mode):
                    entries.append({"p": path, "k": "l", "target": os.readlink(entry.name, dir_fd=dfd)})
                elif stat.S_ISFIFO(st.st_mode):
                    entries.append({"p": path, "k": "p", **_meta(st)})
                # a whiteout (0/0 device) is a deletion: its directory's names say so; sockets are not files

        if getattr(self, "upper_fd", None) is None:
            raise OSError(errno.ENOTSUP, "this sandbox keeps no workspace layer")
        top = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=self.upper_fd)
        try:
            walk(top, "")
        finally:
            os.close(top)
            for merged, mode in reversed(unreadable):
                try:
                    os.chmod(merged, mode, follow_symlinks=False)
                except OSError:
                    pass
        return {"entries": entries}, blob  # (not copied into bytes: send_msg sends it as it is)

    def op_restore(self, req, body):
        """Lay a snapshot's entries over this (pristine) sandbox's workspace."""
        made = []
        for e in req["entries"]:
            rel = e["p"]
            if any(part in ("", ".", "..") or "\0" in part for part in rel.split("/")) and rel != "":
                raise ValueError(f"bad path in snapshot: {rel!r}")
            full = os.path.join(self.root, rel) if rel else self.root
            kind = e["k"]
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                st = None
            if st is not None and (kind != "d" or not stat.S_ISDIR(st.st_mode)):
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(full)
                else:
                    os.unlink(full)
                st = None
            if kind == "d":
                if st is None:
                    os.mkdir(full, 0o700)
                keep = set(e["names"])
                for name in os.listdir(full):
                    if name not in keep:
                        victim = os.path.join(full, name)
                        if os.path.isdir(victim) and not os.path.islink(victim):
                            shutil.rmtree(victim)
                        else:
                            os.unlink(victim)
            elif kind == "f":
                fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
                try:
                    view = memoryview(body)[e["o"]:e["o"] + e["n"]]
                    while view:
                        view = view[os.write(fd, view):]
                    os.utime(fd, ns=(e["t"], e["t"]))
                    os.fchmod(fd, e["m"])
                finally:
                    os.close(fd)
                continue
            elif kind == "l":
                os.symlink(e["target"], full)
            elif kind == "p":
                os.mkfifo(full, 0o600)
            if kind != "l":
                made.append((full, e))
        for full, e in reversed(made):  # modes last: a read-only directory still receives its files first
            os.chmod(full, e["m"], follow_symlinks=False)
            os.utime(full, ns=(e["t"], e["t"]), follow_symlinks=False)
        return {"ok": True}, b""

    # ---- the warm interpreter (see _nswarm.py)
    def _start_template(self) -> None:
        """Tell the keeper that the sandbox is set up: it turns into the warm interpreter (see
        _WarmKeeper), before any command has run. Init sends it its source."""
        if self.warm is None:
            self.features["warm_start"] = "off: " + (self.cfg.get("warm_off") or "not asked for")
            return
        channel, go = self.warm
        seed = self.cfg["warm"].get("seed")
        try:
            os.write(go, b"go")
            os.close(go)
            if not seed:  # (a template forked from a seed has it)
                channel.send(WARM_PAYLOAD)
        except OSError as exc:
            self.features["warm_start"] = f"off: the warm interpreter could not start ({exc})"
            channel.close()
            return
        self.template = {"sock": channel, "state": "starting", "python": self.cfg["warm"]["python"]}
        loaded = "its standard library" + (" and the runtime's pytest" if self.cfg["warm"].get("preload") else "")
        how = (f"forked from the seed of {seed} ({loaded} loaded once for every sandbox), which "
               "entered the sandbox" if seed else "started")
        self.features["warm_start"] = (
            f"on: Python commands fork a warm interpreter ({self.cfg['warm']['python']}) {how} before any "
            "command, outside the sandbox's pid namespace (no command can name it) and under real and saved "
            f"uid {TEMPLATE_UID}")

    def _template_ready(self) -> str | None:
        """None when the template serves; otherwise why not (it is then shut down for good)."""
        t = self.template
        if t is None:
            return self.features.get("warm_start", "off")
        if t["state"] == "ready":
            return None
        if t["state"] == "starting":
            t["sock"].settimeout(30.0)
            try:
                msg = t["sock"].recv(65536)
                info = json.loads(msg) if msg else {"ready": False, "why": "it exited while starting"}
            except (OSError, ValueError) as exc:
                info = {"ready": False, "why": f"no answer ({exc})"}
            if info.get("ready"):
                t["state"] = "ready"
                return None
            self._drop_template(f"the warm interpreter is unusable: {info.get('why')}")
        return t.get("why", "the warm interpreter is gone")

    def _drop_template(self, why: str) -> None:
        t = self.template
        t["state"], t["why"] = "gone", why
        try:
            t["sock"].close()  # EOF: it exits
        except OSError:
            pass

    def warm_plan(self, argv: list, env: dict) -> tuple[dict | None, str]:
        """The interpreter command line a warm start would serve *argv* with, or (None, why not)."""
        if sum(len(a) for a in argv) > WARM_RESERVE:  # (before any parsing: a command may be 100 MB)
            return None, f"the command line is longer than the warm interpreter's {WARM_RESERVE >> 10} KiB"
        shell = len(argv) == 3 and argv[1] == "-c" and os.path.basename(argv[0]) in ("sh", "dash", "bash")
        if shell:
            if os.path.basename(os.path.realpath(argv[0])) != "dash":
                return None, "the shell is not dash (its additions to the environment are not known)"
            words = shell_words(argv[2])
            if words is None:
                return None, "not a simple command (shell syntax)"
        else:
            words = list(argv)
        if not words:
            return None, "empty command"
        prog = words[0]
        path = prog if "/" in prog else which(prog, env.get("PATH", "/usr/bin:/bin"))
        if path is None or not os.path.isabs(path):
            return None, f"{prog} is not found on PATH"
        python = self.template["python"] if self.template else None
        if path == python:
            return {"argv": [prog] + words[1:], "comm": os.path.basename(path), "dash": shell}, ""
        try:
            with open(path, "rb") as f:
                first = f.read(512).split(b"\n", 1)[0]
        except OSError:
            return None, f"{prog} is not readable"
        if python and first.startswith(b"#!") and first[2:].strip() == python.encode():
            return {"argv": [python, path] + words[1:], "comm": os.path.basename(path), "dash": shell}, ""
        return None, f"{prog} is not the runtime's python"

    def spawn(self, argv, env, cwd, stdin, stdout, stderr, req):
        plan = None
        # Every command waits until the template is ready (or gone): none runs while it starts up.
        why = self._template_ready()
        if why is None:
            plan, why = self.warm_plan(argv, env)
        if plan is not None:
            started = self._warm_spawn(plan, argv, env, cwd, (stdin, stdout, stderr))
            if isinstance(started, tuple):
                return started
            why = started
        pid, _ = super().spawn(argv, env, cwd, stdin, stdout, stderr, req)
        r, w = os.pipe()
        os.write(w, f"cold: {why}".encode()[:4000])
        os.close(w)
        return pid, r

    def _warm_spawn(self, plan, argv, env, cwd, stdio) -> tuple[int, int] | str:
        """Ask the template for the command's process; (pid, status fd), or why it could not."""
        t = self.template
        status_r, status_w = os.pipe()
        req = {"argv": argv, "env": env, "cwd": cwd, "python": plan,
               "rlimits": [list(x) for x in self.spawn_rlimits]}
        data = json.dumps(req).encode("utf-8", "surrogateescape")
        if len(data) > 1 << 20:
            os.close(status_r)
            os.close(status_w)
            return "the request is too large for the warm interpreter"
        try:
            t["sock"].settimeout(30.0)
            socket.send_fds(t["sock"], [data], list(stdio) + [status_w])
            reply = json.loads(t["sock"].recv(65536) or b'{"error": "the warm interpreter exited"}')
        except (OSError, ValueError) as exc:
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        finally:
            os.close(status_w)
        if "pid" not in reply:
            os.close(status_r)
            if str(reply.get("error", "")).startswith("fork failed"):  # out of pids for now: this command only
                return f"the warm interpreter could not fork ({reply['error']})"
            self._drop_template(f"the warm interpreter failed: {reply.get('error')}")
            return self.template["why"]
        self.spawn_cost_s = float(reply.get("cpu") or 0.0)
        return int(reply["pid"]), status_r

    def oom_count(self) -> int:
        if self.oom_fd is None:
            return 0
        return oom_kills(os.pread(self.oom_fd, 4096, 0)) or 0

    # ---- the request loop
    def serve(self) -> None:
        send_msg(self.ctl, {"ready": True, "features": self.features, "warnings": self.warnings})
        while True:
            try:
                req, body = recv_msg(self.ctl)
            except (EOFError, ConnectionError):
                os._exit(0)
            reply, data = self.handle(req, body)
            self.reap()
            send_msg(self.ctl, reply, data)


SNAPSHOT_MAX = 1 << 30
FORK_DEPTH, FORK_PATH = 256, 3072  # folders nested, bytes of a path: what a fork copies at most


def _meta(st: os.stat_result) -> dict:
    return {"m": stat.S_IMODE(st.st_mode), "t": st.st_mtime_ns}


def shell_words(command: str) -> list[str] | None:
    """The words of a simple shell command line (blanks, single and plain double quotes only);
    None when the shell would do more than split it (expansions, redirections, several commands,
    assignments)."""
    words: list[str] = []
    cur: list[str] = []
    have = False
    i = 0
    while i < len(command):
        c = command[i]
        if c == " ":
            if have:
                words.append("".join(cur))
                cur, have = [], False
            i += 1
            continue
        if c in ("'", '"'):
            j = command.find(c, i + 1)
            if j < 0:
                return None
            part = command[i + 1:j]
            if c == '"' and any(ch in part for ch in "$`\\!"):
                return None
            cur.append(part)
            have, i = True, j + 1
            continue
        if c in _SHELL_SPECIAL or (c == "=" and not words):
            return None
        cur.append(c)
        have, i = True, i + 1
    if have:
        words.append("".join(cur))
    return words

# --------------------------------------------------------------------------- zygote

def _oom_kills(cgroups) -> int:
    """The ``oom_kill`` count of the memory cgroup among *cgroups* (0 where none is there or readable)."""
    for path in cgroups:
        for name in OOM_FILES:
            try:
                with open(os.path.join(path, name), "rb") as f:
                    kills = oom_kills(f.read())
            except (OSError, ValueError):
                continue
            if kills is not None:
                return kills
    return 0


class Zygote:
    def __init__(self, sock: socket.socket, pool_size: int = 1):
        self.sock = sock
        self.pid = os.getpid()
        self.sandboxes: dict[str, dict] = {}  # id -> {"keeper": pid, "init": pid, "cgroups": [...]}
        self.doomed_cgroups: list[str] = []
        self.died: dict[str, int] = {}  # id -> OOM kills in its memory cgroup, for sandboxes reaped of late
        self.ids = itertools.count()
        # Warm pool: for each recently used configuration, sandboxes already set up and waiting, so
        # that opening one costs a message instead of namespaces + mounts (refilled while idle).
        self.pool_size = pool_size
        self.pool_keys = 8
        self.pool: dict[bytes, list[dict]] = {}
        self.pool_order: list[bytes] = []
        self.pool_boxes: dict[str, dict] = {}
        # configurations opened once (most recent last): a configuration joins the pool when it
        # comes again, so that a sweep over distinct tasks (an eval) sets up no sandbox it never uses
        self.seen: dict[bytes, None] = {}
        self.last_open = 0.0
        self.wake_r = self.wake_w = None
        self.seeds: dict[str, _Seed] = {}  # interpreter -> the seed of its templates

    def run(self) -> None:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        # The zygote's session is one autogroup of the scheduler, with every keeper and init (the
        # sandboxes' servers), and each command starts a session of its own: 110 busy loops left by
        # an agent got init one share of the CPU in 111, and a request of the host's could outlast
        # its timeout (a masked episode). The servers' group weighs as much as ~87 busy sessions now
        # (root only: a rootless zygote keeps the default).
        try:
            with open("/proc/self/autogroup", "w") as f:
                f.write("-20")
        except OSError:
            pass
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
            for interpreter, seed in list(self.seeds.items()):
                if seed.pid == pid:  # (the next sandbox that needs it starts another)
                    seed.sock.close()
                    del self.seeds[interpreter]
            for sid, box in list(self.sandboxes.items()):
                if box["keeper"] == pid:
                    self.doomed_cgroups += box["cgroups"]
                    del self.sandboxes[sid]
                    if not box.get("closed"):  # it died on its own: the host may ask why after this (op_oom)
                        self.died[sid] = _oom_kills(box["cgroups"])
                        while len(self.died) > 256:
                            del self.died[next(iter(self.died))]
        still = []
        for path in self.doomed_cgroups:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                # still busy: what is left in a dead sandbox's cgroup, such as its warm interpreter,
                # which has no pid in the sandbox (a sandbox whose init died of its closed connection
                # before the zygote heard "close" kept a template held up by a .pth alive for good)
                _kill_cgroup(path)
                still.append(path)
        self.doomed_cgroups = still

    def shutdown(self) -> None:
        for boxes in self.pool.values():
            for box in boxes:
                self._discard(box)
        self.pool.clear()
        for box in self.sandboxes.values():
            self._kill(box)
        deadline = time.monotonic() + 5
        while (self.sandboxes or self.doomed_cgroups) and time.monotonic() < deadline:
            self._reap()
            time.sleep(0.01)

    def op_close(self, req) -> None:
        box = self.sandboxes.get(req["id"])
        if box:
            box["closed"] = True  # (the host asked: it will not ask why it died, op_oom)
            self._kill(box)
        if req.get("reply"):
            self.sock.send(b'{"ok": true}')

    def op_count(self, req) -> None:
        self.sock.send(json.dumps({"open": len(self.sandboxes)}).encode())

    def op_oom(self, req) -> None:
        """How many processes the memory cgroup of a sandbox the caller still holds (its init may
        have died: the host asks before it closes it) had the kernel's OOM killer take."""
        box = self.sandboxes.get(req["id"])
        kills = _oom_kills(box["cgroups"]) if box else self.died.pop(req["id"], None)
        self.sock.send(json.dumps({"oom_kills": kills}).encode())

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
            try:  # init and the warm interpreter: the keeper's process group
                os.setpriority(os.PRIO_PGRP, box["keeper"], 0)
            except OSError:
                pass  # init died: the caller finds out from its socket
        sid = box["id"]
        self.pool_boxes.pop(sid, None)
        self.sandboxes[sid] = box
        socket.send_fds(self.sock, [json.dumps({"ok": True, "id": sid, "init": box["init"]}).encode()],
                        [box["sock"].fileno()])
        box["sock"].close()
        del box["sock"]
        if key not in self.pool and key not in self.seen:
            self.seen[key] = None
            while len(self.seen) > 64:
                del self.seen[next(iter(self.seen))]
        elif self.pool_size > 0:
            self.seen.pop(key, None)
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
                try:
                    box = self._spawn(json.loads(key)["config"], background=True)
                except Exception as exc:  # (the cgroup folder went, say): never the zygote's end
                    os.write(2, f"agentenv zygote: a pooled sandbox could not be set up: {exc}\n".encode())
                    self.pool_order.remove(key)
                    for old in self.pool.pop(key):
                        self._discard(old)
                    return True
                if box is not None:
                    self.pool_boxes[box["id"]] = box
                    boxes.append(box)
                return True
        return False

    def _discard(self, box: dict) -> None:
        box["sock"].close()
        self.pool_boxes.pop(box["id"], None)
        self.sandboxes[box["id"]] = box
        self._kill(box)

    @staticmethod
    def _kill(box: dict) -> None:
        """Kill a sandbox: its init (the kernel then kills its pid namespace) and whatever else is
        in its cgroups, such as a warm interpreter, which has no pid there and could otherwise be
        held up for good (a runtime's ``.pth`` that never returns, say) with the cgroup kept busy."""
        try:
            os.kill(box["init"], signal.SIGKILL)
        except ProcessLookupError:
            pass
        for path in box["cgroups"]:
            _kill_cgroup(path)

    def _seed(self, interpreter: str | None, preload: dict | None = None) -> _Seed | None:
        """The channel to the seed of *interpreter*'s templates (started on first use; None:
        templates of this configuration are exec'd, not forked). With *preload* (a runtime's
        pytest, see _nswarm.preload_runtime), a seed of that runtime's own, up to
        MAX_RUNTIME_SEEDS of them; past that, the interpreter's plain seed."""
        if not interpreter or SEED_PROGRAM is None:
            return None
        key = interpreter
        if preload:
            key = interpreter + "\0" + json.dumps(preload, sort_keys=True)
            if key not in self.seeds and sum(1 for s in self.seeds.values() if s.preload) >= MAX_RUNTIME_SEEDS:
                key, preload = interpreter, None
        seed = self.seeds.get(key)
        if seed is None:
            seed = self.seeds[key] = _Seed(interpreter, preload)
        return seed

    def _spawn(self, cfg: dict, background: bool = False) -> dict | None:
        """Fork a keeper and a set-up init for *cfg*. A *background* (pool) set-up runs at a lower
        priority, so that it yields the CPU to the commands of the sandboxes in use."""
        sid = f"{self.pid}-{next(self.ids)}"
        cfg = dict(cfg)
        cgroups, cfg["oom_file"] = cgroup_specs(cfg.get("cgroup_mode"), cfg.get("cgroup_base", {}), sid,
                                                cfg["limits"], bool(cfg.get("warm")))
        cfg["cpu_dir"] = next((spec["dir"] for spec in cgroups if spec.get("cpu")), None)
        made = []
        try:
            for spec in cgroups:
                os.mkdir(spec["dir"])
                made.append(spec["dir"])
                for name, value in spec["settings"].items():
                    with open(os.path.join(spec["dir"], name), "w") as f:
                        f.write(str(value))
                for name, value in spec.get("optional", {}).items():
                    try:
                        with open(os.path.join(spec["dir"], name), "w") as f:
                            f.write(str(value))
                    except OSError:
                        pass  # (a kernel that refuses it: what it would count goes uncounted, as before)
        except OSError:
            self.doomed_cgroups += made
            raise
        cfg["cgroup_procs"] = [os.path.join(d, "cgroup.procs") for d in made]
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        r, w = os.pipe()
        flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET
        warm = None
        if cfg.get("warm") and WARM_SOURCE is not None and not cfg.get("userns"):
            seed = self._seed(cfg["warm"].get("seed"), cfg["warm"].get("preload"))
            cfg["warm"] = {**cfg["warm"], "preload": seed and seed.preload}  # (what init reports)
            warm = _WarmKeeper(cfg, seed and seed.sock)
        if warm is not None:  # the keeper is pid 1 of a pid namespace of its own, above the sandbox's
            host_pidns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            _check(_libc.unshare(CLONE_NEWPID), "unshare (the keeper's pid namespace)")
        try:
            keeper = os.fork()
        finally:
            if warm is not None and keeper != 0:
                _check(_libc.setns(host_pidns, CLONE_NEWPID), "setns (back to the host's pid namespace)")
                os.close(host_pidns)
        if keeper == 0:
            try:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if warm is None and os.getppid() != self.pid:  # (pid 1 of its own namespace sees no parent)
                    os._exit(1)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                if self.wake_r is not None:
                    os.close(self.wake_r)
                    os.close(self.wake_w)
                os.setpgid(0, 0)  # a group of its own: init and the warm interpreter change priority together
                if background:
                    os.setpriority(os.PRIO_PROCESS, 0, 10)
                self.sock.close()
                parent_end.close()
                for other in list(self.pool_boxes.values()):
                    other["sock"].close()
                os.close(r)
                if warm is not None:
                    os.close(host_pidns)
                userns = cfg.get("userns")
                _check(_libc.unshare(flags | (CLONE_NEWUSER if userns else 0)), "unshare")
                if userns:
                    enter_user_namespace(cfg["uid"], userns["uid"], cfg["uid"], userns["gid"])
                if warm is not None:
                    warm.open_namespaces()
                for seed in self.seeds.values():  # (init closes the one its template comes from)
                    if warm is None or seed.sock is not warm.seed:
                        seed.sock.close()
                init = os.fork()
                if init == 0:
                    os.close(w)
                    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                    box = Init(child_end, cfg, warm and warm.init_side())
                    try:
                        box.setup()
                        box.finish(recv_msg(child_end)[0].get("workspace"))  # sent when handed out
                    except BaseException as exc:
                        send_msg(child_end, {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
                        os._exit(1)
                    box.serve()
                    os._exit(0)
                if warm is not None:
                    warm.open_namespaces(forked=True)
                os.write(w, str(init).encode())
                os.close(w)
                child_end.close()
                if warm is not None:
                    warm.become_template(cfg)  # returns only when init failed before its set-up ended
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
        if warm is not None:
            warm.close_all()
        os.close(w)
        child_end.close()
        init_pid = int(os.read(r, 32) or b"0")
        os.close(r)
        if init_pid and warm is not None:  # the keeper saw init's pid in its own namespace: take the host's
            try:
                with open(f"/proc/{keeper}/task/{keeper}/children") as f:
                    init_pid = int(f.read().split()[0])
            except (OSError, IndexError, ValueError):
                init_pid = 0
        if not init_pid:
            parent_end.close()
            self.doomed_cgroups += made
            return None
        return {"id": sid, "keeper": keeper, "init": init_pid, "cgroups": made, "sock": parent_end,
                "background": background}


class _WarmKeeper:
    """The keeper's part of a warm sandbox. The keeper, pid 1 of a pid namespace that holds only
    itself and the sandbox's (nested) namespace, turns into the warm interpreter once init has set
    the sandbox up: no process of the sandbox can name it (it has no pid there), a command's fork
    lands in the sandbox's pid namespace, and the keeper's death still ends the sandbox. What it
    needs from the host (the cgroup files) is opened before init hides the host."""

    def __init__(self, cfg: dict, seed: socket.socket | None) -> None:
        self.python, self.env = cfg["warm"]["python"], cfg["warm"]["env"]
        self.seed = seed  # the zygote's end of the channel to the seed of this runtime's Python
        self.cgroup_fds = [os.open(p, os.O_WRONLY | os.O_CLOEXEC) for p in cfg.get("cgroup_procs", ())]
        self.ns_fds: list[int] = []
        self.init_channel, self.channel = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.go_r, self.go_w = os.pipe()

    def close_all(self) -> None:
        for fd in self.cgroup_fds + [self.go_r, self.go_w]:
            os.close(fd)
        self.init_channel.close()
        self.channel.close()

    def open_namespaces(self, forked: bool = False) -> None:
        """In the keeper: what a template forked by the seed enters (see _Seed). Called once it has
        made the sandbox's namespaces (its /proc is still the host's), and again once it has forked
        init: the pid namespace for children exists only from its first process on, and by then
        init's pivot_root may have moved the keeper's root (its folder of namespaces was opened before)."""
        if self.seed is None:
            return
        if not forked:
            self.ns_dir = os.open("/proc/self/ns", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for name, _ in SEED_NAMESPACES[len(self.ns_fds):]:
            if name == "pid_for_children" and not forked:
                return
            self.ns_fds.append(os.open(name, os.O_RDONLY | os.O_CLOEXEC, dir_fd=self.ns_dir))
        os.close(self.ns_dir)

    def init_side(self) -> tuple[socket.socket, int]:
        """In init: its end of the template's channel, and the pipe on which it says "set up"."""
        for fd in self.cgroup_fds + self.ns_fds + [self.go_r] + ([self.ns_dir] if self.seed is not None else []):
            os.close(fd)
        if self.seed is not None:
            self.seed.close()
        self.channel.close()
        return self.init_channel, self.go_w

    def become_template(self, cfg: dict) -> None:
        """In the keeper: wait for init's set-up, then start the template: ask the seed of the
        runtime's interpreter for one (its fork enters the sandbox) where there is a seed, else
        exec the task's Python as the template. Either way it is confined like a command but under
        the template uid (real and saved)."""
        self.init_channel.close()
        os.close(self.go_w)
        go = os.read(self.go_r, 8)
        os.close(self.go_r)
        if go != b"go":
            return
        env = dict(self.env)
        env[PAD_VAR] = " " * WARM_RESERVE
        env["PYTHONNOUSERSITE"] = "1"  # never /tmp/.local: each command's own start-up decides about it
        if self.seed is not None:
            payload = {"python": self.python, "env": env, "uid": int(cfg["uid"]),
                       "fsize_mb": int(cfg["limits"]["max_file_size_mb"]), "cgroups": len(self.cgroup_fds)}
            try:  # the template is the seed's child; this keeper stays the keeper
                socket.send_fds(self.seed, [json.dumps(payload).encode()],
                                [self.channel.fileno()] + self.ns_fds + self.cgroup_fds)
            except OSError as exc:  # init hears EOF and starts commands cold
                os.write(2, f"agentenv: the seed did not answer: {exc}\n".encode())
            for fd in self.ns_fds + self.cgroup_fds:
                os.close(fd)
            self.channel.close()
            self.seed.close()
            return
        for fd in self.cgroup_fds:
            os.write(fd, b"0")  # under the sandbox's memory and process limits
            os.close(fd)
        os.chdir("/")  # the sandbox's root: init's pivot_root moved the namespace's root under us
        os.dup2(self.channel.fileno(), 3)
        confine_template(int(cfg["uid"]), int(cfg["limits"]["max_file_size_mb"]))
        argv = [self.python, "-c", WARM_LOADER, " " * WARM_RESERVE]
        try:
            os.execve(argv[0], argv, env)
        except OSError as exc:  # stay the keeper; init hears EOF and starts commands cold
            os.write(2, f"agentenv: the warm interpreter {argv[0]} did not start: {exc}\n".encode())
            os.close(3)
            self.channel.close()


def confine_template(uid: int, fsize_mb: int) -> None:
    """Confine a template (its channel on fd 3): stdio on /dev/null, no other fd, default signals,
    a command's limits, no capabilities, the sandbox user's effective uid (exec copies it to the
    saved uid; the template then moves its saved uid to the template uid too, see _nswarm.py), real
    uid the template's, no_new_privs and the sandbox's seccomp filter."""
    fsize = fsize_mb << 20
    built = seccomp_program(os.uname().machine)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(4, 1 << 16)
    signal.set_wakeup_fd(-1)
    for sig in DEFAULT_SIGNALS + (signal.SIGCHLD,):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
    drop_bounding_capabilities()
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(TEMPLATE_UID, uid, uid)
    clear_capabilities()
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    if built is not None:
        install_seccomp(built[0])


class _Seed:
    """The parent of the templates of every sandbox whose runtime's Python is *interpreter* (a
    virtual environment's base interpreter, say): that interpreter, exec'd by the zygote with
    ``-I -S`` and this program, in the zygote's own environment, with the modules the warm
    interpreter preloads imported once. It is root on the host and runs the interpreter's
    standard library only, never a runtime's packages (a ``.pth`` file runs code).

    Per sandbox, its fork enters the sandbox (namespaces, cgroups, the keeper's process group),
    confines itself as an exec'd template would and becomes the template, running ``site`` there:
    no interpreter start and no standard-library import per sandbox, and the pages stay shared.
    The seed forks as soon as a request arrives and never parses one: what a keeper sends (this
    sandbox's Python, environment, limits and namespaces) reaches the child only, so a template's
    memory holds nothing of any other sandbox.

    A runtime with pytest gets a seed of its own (*preload*, its first message): it also imports
    the runtime's pytest and the judge from the runtime's read-only tree, once, before it forks
    (``_nswarm.preload_runtime``); each template imported them in its sandbox before."""

    def __init__(self, interpreter: str, preload: dict | None = None) -> None:
        self.preload = preload
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # the kernel adds each sender's pid (as the seed's namespace numbers it) to what it sends:
        # the keeper, pid 1 of its own, cannot name itself to the template that joins its group
        theirs.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        r, w = os.pipe()
        pad = " " * WARM_RESERVE  # templates write each command's argv and environment over these
        self.pid = os.fork()
        if self.pid == 0:
            try:
                prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # (kept across the exec)
                os.dup2(r, 0)
                os.dup2(theirs.fileno(), 3)
                os.closerange(4, 1 << 16)
                os.execve(interpreter, ["agentenv-sandbox-seed", "-I", "-S", "-", "seed", pad],
                          {**ZYGOTE_ENV, PAD_VAR: pad})
            finally:
                os._exit(127)
        os.close(r)
        theirs.close()
        try:
            view = memoryview(SEED_PROGRAM)
            while view:  # (a signal, a keeper's exit say, can cut a write short)
                view = view[os.write(w, view):]
        except OSError:
            pass  # it died: keepers' requests fail, and their sandboxes start commands cold
        finally:
            os.close(w)
        try:  # its first message, before any keeper can send one: what it preloads
            self.sock.send(json.dumps(preload or {}).encode())
        except OSError:
            pass

    @staticmethod
    def serve(sock: socket.socket) -> None:
        """The seed's loop (its main)."""
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the templates
        warm = {"__name__": "agentenv_warm", "__builtins__": __builtins__}
        exec(compile(WARM_SOURCE, "agentenv-warm", "exec"), warm)
        warm["SCRIPTS"] = dict(WARM_SCRIPTS)
        warm["preload_standard_library"]()
        try:
            spec = json.loads(sock.recv(1 << 16) or b"{}")
        except (OSError, ValueError):
            spec = {}
        if spec.get("paths"):
            warm["preload_runtime"](spec)
        import gc
        gc.collect()
        gc.freeze()
        buf = bytearray(1 << 16)
        while True:
            try:
                n, anc, flags, _ = sock.recvmsg_into([buf], socket.CMSG_SPACE(4 * 16) + socket.CMSG_SPACE(12))
            except InterruptedError:
                continue
            fds, keeper = [], 0
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds += list(memoryview(data).cast("i")[:len(data) // 4])
                elif level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    keeper = struct.unpack("i", data[:4])[0]
            if n == 0 and not fds:
                os._exit(0)  # the zygote and every keeper are gone
            pid = -1
            if keeper > 0 and not flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                try:
                    pid = os.fork()
                except OSError:
                    pass
            if pid == 0:
                sock.close()
                try:
                    _template_from_seed(bytes(buf[:n]), fds, keeper, warm)
                except BaseException as exc:
                    try:
                        os.write(2, f"agentenv: a forked template failed: {type(exc).__name__}: {exc}\n".encode())
                    finally:
                        os._exit(1)
                os._exit(0)
            for fd in fds:
                os.close(fd)
            buf[:n] = bytes(n)


def _template_from_seed(raw: bytes, fds: list[int], keeper: int, warm: dict) -> None:
    """In the seed's child: enter the sandbox the keeper named, confine, become its template."""
    seed = os.getppid()
    req = json.loads(raw)
    channel, ns, cgroups = fds[0], fds[1:1 + len(SEED_NAMESPACES)], fds[1 + len(SEED_NAMESPACES):]
    if len(ns) != len(SEED_NAMESPACES) or len(cgroups) != req["cgroups"]:
        raise OSError("the keeper sent the wrong descriptors")
    os.setpgid(0, keeper)  # the keeper's group: priority changes with init's (see Zygote.op_open)
    # The keeper's priority, read once in its group: the zygote puts a pooled sandbox's group back
    # to normal priority as it hands it out, and a template that took the set-up's nice before it
    # joined, and joined after that, ran every warm command at nice 10 (red team, stop 40). Read
    # again after the change: the one change comes after it (it reaches the group) or before.
    while True:
        nice = os.getpriority(os.PRIO_PROCESS, keeper)
        os.setpriority(os.PRIO_PROCESS, 0, nice)
        if os.getpriority(os.PRIO_PROCESS, keeper) == nice:
            break
    for fd in cgroups:
        os.write(fd, b"0")  # under the sandbox's memory and process limits
        os.close(fd)
    for fd, (name, kind) in zip(ns, SEED_NAMESPACES):  # the mount namespace last: it changes /proc
        _check(_libc.setns(fd, kind), f"setns ({name})")
        os.close(fd)
    os.chdir("/")  # the sandbox's root (setns sets the root, not the working directory)
    os.dup2(channel, 3)
    confine_template(int(req["uid"]), int(req["fsize_mb"]))
    # dies with the seed, which dies with the zygote (set after the change of uids, which clears it)
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != seed:
        os._exit(1)
    sys.modules.pop("agentenv_sandbox_server", None)
    baseline = warm["adopt"](req["python"], req["env"])
    warm["main"](socket.socket(fileno=3), baseline)


def _kill_cgroup(path: str) -> None:
    """SIGKILL every process in the cgroup at *path*."""
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as f:  # cgroup v2, Linux 5.14+
            f.write("1")
        return
    except OSError:
        pass
    try:
        with open(os.path.join(path, "cgroup.procs")) as f:
            pids = [int(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def cgroup_specs(mode: str | None, base: dict, sid: str, limits: dict,
                 warm: bool = False) -> tuple[list[dict], str | None]:
    """The cgroup directories (with their settings) for one sandbox, and the file that counts OOM kills."""
    mem = int(limits["memory_mb"]) << 20
    pids = int(limits["max_processes"]) + 1 + int(warm)  # + init (+ the warm interpreter)
    if mode == "v2":
        d = os.path.join(base["unified"], sid)
        return ([{"dir": d, "settings": {"memory.max": mem, "memory.swap.max": 0, "pids.max": pids}, "cpu": True}],
                os.path.join(d, "memory.events"))
    if mode == "v1":
        mdir = os.path.join(base["memory"], sid)
        settings = {"memory.limit_in_bytes": mem}
        if os.path.exists(os.path.join(base["memory"], "memory.memsw.limit_in_bytes")):
            settings["memory.memsw.limit_in_bytes"] = mem
        # socket buffers are charged (to a counter of their own) only once this is set: 600 MB held
        # in loopback TCP connections passed a 256 MB limit unseen
        optional = {"memory.kmem.tcp.limit_in_bytes": mem}
        specs = [{"dir": mdir, "settings": settings, "optional": optional},
                 {"dir": os.path.join(base["pids"], sid), "settings": {"pids.max": pids}}]
        if "cpuacct" in base:
            specs.append({"dir": os.path.join(base["cpuacct"], sid), "settings": {}, "cpu": True})
        if "cpu" in base:  # (a group of its own: 120 busy loops in one sandbox weigh as one process of another's)
            specs.append({"dir": os.path.join(base["cpu"], sid), "settings": {}})
        return specs, os.path.join(mdir, "memory.oom_control")
    return [], None


def main() -> None:
    if sys.argv[1:2] == ["seed"]:
        _Seed.serve(socket.socket(fileno=3))
        return
    fd, pool_size = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sock = socket.socket(fileno=fd)
    Zygote(sock, pool_size).run()


if __name__ == "__main__":
    main()
