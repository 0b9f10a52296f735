"""The warm interpreter of a namespace sandbox: a template that commands starting Python fork from.

Runs on the task's own Python (3.7 or later, standard library only), inside the sandbox, under its
seccomp filter, cgroup and ``no_new_privs``, with no capabilities. It starts during set-up, before
any untrusted code has run in the sandbox, in one of two ways. Where the runtime's interpreter has
a seed (a Python of agentenv's minor version, see ``_nszygote._Seed``), it is a fork of that seed,
which loaded this file and the standard library modules below (and a runtime's own seed, its
pytest: ``preload_runtime``) once for every sandbox; the fork
enters the sandbox, confines itself and ``adopt``\\s the state a cold start of the runtime's Python
would have (environment, flags, prefixes, ``sys.path``, ``site`` run in the sandbox). Otherwise
the keeper execs the runtime's Python, and init sends it this file's text.

Why it is out of the commands' reach: its real and saved uid are the *template uid* (its effective
uid is the sandbox user's, so it reads what commands read). The kernel lets a process signal
another only when the sender's real or effective uid equals the target's real or saved uid, and
trace (or read ``/proc/<pid>/mem``, ``fd``, ``environ``) only when all three of the target's uids
are the tracer's: commands, all of whose uids are the sandbox user, can do neither; ptrace is also
refused by the seccomp filter, and hidepid hides its /proc entries. It reads nothing writable
after its start (every ``sys.path`` entry it imports from must be on a read-only mount), so no
command can change what later commands inherit from it.

Per command (``run_command``): the template forks A, A forks B and exits, so B is reparented to
init (its parent, as for a cold command: init waits for it and reads its rusage). B takes the
sandbox user's uid in all three slots, a new session, the command's stdio, cwd and environment,
and then either emulates a cold start of the interpreter (sys.path from ``PYTHONPATH`` and
``PYTHONSAFEPATH``, ``sys.flags``, ``sys.pycache_prefix``, ``sys.dont_write_bytecode``, argv,
``__main__``, fresh stdio objects, ``/proc/self/cmdline`` and ``environ``) or, where it cannot
promise the cold start's behaviour, ``execve``\\s the command exactly as init would have started
it, and says why on its status pipe ("warm" or "cold: <reason>").
"""

import json
import os
import signal
import socket
import sys

# Modules the HumanEval judge and the trusted pytest judge import (standard library): kept in
# sys.modules for every Python command. Importing them has no effect but their presence. (``typing``:
# the HumanEval judge imports it for the solutions, as the format's harness has it loaded; 2.7 ms of
# CPU a judged problem when it was imported per command.)
STDLIB = ("ast", "contextlib", "ctypes", "faulthandler", "hmac", "io", "json", "runpy", "select", "shutil",
          "signal", "subprocess", "tempfile", "time", "types", "typing")
# Variables a cold start reads at start-up that the warm child sets up itself; every other
# PYTHON* variable (and the locale, HOME and TZ) must have the template's value, or the command
# starts cold.
EMULATED_ENV = ("PYTHONPATH", "PYTHONSAFEPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX",
                "PYTHONNOUSERSITE", "PYTHONUNBUFFERED", "PYTHONBREAKPOINT", "PYTHONCASEOK", "PYTHONASYNCIODEBUG")
FIXED_ENV = ("HOME", "TZ", "LANG", "LANGUAGE")
PAD_VAR = "AGENTENV_WARM_PAD"
# What a pytest session imports after ``import pytest`` (its default plugins aside), measured with
# ``-X importtime`` on a scored run: the debugger it configures, the email parser of metadata.
PYTEST_EXTRA = ("pdb", "cmd", "code", "codeop", "readline", "email.parser", "email.feedparser", "unittest",
                "_pytest._argcomplete")
FLAG_OPTIONS = {"B": "dont_write_bytecode", "s": "no_user_site", "P": "safe_path", "u": "unbuffered"}
# The trusted pytest judge (agentenv/builtin/_pytest_judge.py), compiled: (code, digest, module name),
# set by the line the backend's loader appends to this source (see namespace.warm_source), so a
# seed compiles it once for every sandbox. A template with pytest executes it before any command
# (it only defines); a scored run's entry module takes it when its digest is the host's.
_JUDGE = None
# The modules a seed imported for its runtime's pytest (see preload_runtime): a template forked
# from it has them already; they are not part of what a command that is not pytest may see.
PRELOADED = frozenset()
PR_SET_NAME, PR_SET_DUMPABLE = 15, 4
# Scripts of agentenv's own that tasks run by path (the HumanEval judge, .humaneval/check.py), as text
# ({path: source}), set in a seed (namespace.warm_scripts); it compiles each once for every sandbox
# (`preload_standard_library`): a command that runs that path with that very text takes the compiled
# code (4.8 ms of CPU a judged problem, a third of the judge's own cost).
SCRIPTS = {}
_SCRIPT_CODE = {}  # path -> (source bytes, code), in a seed's templates only


class Template:
    def __init__(self, channel, baseline):
        self.channel = channel
        self.baseline = baseline  # the modules of a cold start (before the loader imported anything)
        self.main_dunders = {k: v for k, v in vars(sys.modules["__main__"]).items() if k.startswith("__")}
        self.uid = os.geteuid()  # started as (real: template, effective and saved: sandbox user)
        self.env = {k: v for k, v in os.environ.items() if k != PAD_VAR}
        self.why_not = None
        self.stdlib = frozenset()
        self.names = frozenset()
        self.rest = []
        self.path_index = {}
        # a virtual environment without the system's packages has no user site either (site.venv)
        self.venv_alone = sys.prefix != sys.base_prefix and not _system_site_packages(sys.prefix)

    # ---- start-up
    def start(self):
        tid = os.getuid()
        os.setresuid(tid, self.uid, tid)  # effective: the sandbox user; real and saved: the template's
        if os.getresuid() != (tid, self.uid, tid) or tid == self.uid:
            raise SystemExit("agentenv warm interpreter: unexpected credentials %r" % (os.getresuid(),))
        try:
            import ctypes  # noqa: F401  (the child needs it for prctl and /proc/self/cmdline)
        except ImportError:
            self.why_not = "this Python has no ctypes"
        pythonpath = _pythonpath(self.env.get("PYTHONPATH", ""))
        if pythonpath is None:
            self.why_not = "the runtime's PYTHONPATH has relative entries"
        elif sys.path[:1 + len(pythonpath)] != [""] + pythonpath:
            self.why_not = "sys.path does not start as expected: %r" % sys.path[:4]
        else:
            self.rest = sys.path[1 + len(pythonpath):]
            for entry in self.rest:
                try:
                    st = os.statvfs(entry)
                except OSError:
                    if _writable_parent(entry):
                        self.why_not = "sys.path entry %s could appear on a writable mount" % entry
                    continue
                if not st.f_flag & os.ST_RDONLY:
                    self.why_not = "sys.path entry %s is on a writable mount" % entry
        if self.why_not is None:
            # The runtime's own PYTHONPATH entries (a workspace, say) may be writable: nothing is
            # imported from them here, and each command checks them for shadowing modules.
            full = list(sys.path)
            sys.path[:] = self.rest
            try:
                self._preload()
            finally:
                sys.path[:] = full
        self.channel.send(json.dumps({"ready": self.why_not is None, "why": self.why_not,
                                      "modules": len(sys.modules), "python": sys.version.split()[0]}).encode())

    def _preload(self):
        import importlib
        for name in STDLIB:
            try:
                importlib.import_module(name)
            except Exception:
                pass
        self.stdlib = frozenset(sys.modules) - PRELOADED
        preload_pytest(PYTEST_EXTRA, listing=not PRELOADED)  # (a seed that preloaded pytest listed them)
        names = set()
        for name, module in list(sys.modules.items()):
            if getattr(module, "__file__", None) or getattr(module, "__path__", None):
                names.add(name.split(".")[0])
        self.names = frozenset(names)
        self.path_index = {entry: i for i, entry in enumerate(self.rest)}
        import gc
        gc.collect()
        if hasattr(gc, "freeze"):  # the children's collections skip (and so do not copy) the template's objects
            gc.freeze()

    # ---- the loop: fork B for each request; returns in B only
    def serve(self):
        import resource  # (B imports it anyway, for the command's limits)

        def cpu():
            return sum(ru.ru_utime + ru.ru_stime for ru in (resource.getrusage(resource.RUSAGE_SELF),
                                                             resource.getrusage(resource.RUSAGE_CHILDREN)))

        buf = bytearray(1 << 20)
        while True:
            try:
                n, anc, flags, _ = self.channel.recvmsg_into([buf], socket.CMSG_SPACE(4 * 8))
            except InterruptedError:
                continue
            if n == 0:
                _outlive_init()
            fds = []
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds += list(memoryview(data).cast("i"))
            if self.why_not is not None or len(fds) != 4 or flags & socket.MSG_TRUNC:
                for fd in fds:
                    os.close(fd)
                self.channel.send(b'{"error": "refused"}')
                continue
            before = cpu()
            r, w = os.pipe()
            try:
                a = os.fork()
            except OSError as exc:
                a, why = -1, str(exc)
            if a == 0:
                os.close(r)
                try:
                    b = os.fork()
                except OSError:
                    os._exit(1)
                if b == 0:
                    os.close(w)
                    return bytes(buf[:n]), fds
                os.write(w, str(b).encode())
                os._exit(0)
            os.close(w)
            pid = os.read(r, 32) if a > 0 else b""
            os.close(r)
            if a > 0:
                os.waitpid(a, 0)  # when A is reaped, B is init's child already
            for fd in fds:
                os.close(fd)
            buf[:n] = bytes(n)  # keep no command's argv or environment in the template
            # (the CPU this template and A spent starting B: in the sandbox's CPU cgroup, not the command's)
            reply = ({"pid": int(pid), "cpu": cpu() - before} if pid
                     else {"error": "fork failed: %s" % (why if a < 0 else "in A")})
            self.channel.send(json.dumps(reply).encode())

    # ---- in B: become the command
    def run_command(self, raw, fds):
        import time
        deadline = time.monotonic() + 5
        while os.getppid() != 1 and time.monotonic() < deadline:  # A is exiting: init becomes our parent
            time.sleep(0.0001)
        req = json.loads(raw.decode("utf-8", "surrogateescape"))
        os.setresuid(self.uid, self.uid, self.uid)  # from here on, exactly a command's credentials
        stdin, stdout, stderr, status = fds
        fileno = self.channel.detach()  # no socket object left to close a reused fd number later
        os.close(fileno)
        os.setsid()
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(fd, target)
        os.set_inheritable(status, False)
        os.closerange(3, status)  # the received fds, and anything else the template held
        os.closerange(status + 1, 1 << 16)
        try:
            plan = self._prepare(req)
        except Exception as exc:  # whatever went wrong, the command still runs: cold
            plan = "the warm start failed (%s: %s)" % (type(exc).__name__, exc)
        if isinstance(plan, str):
            return self._cold(req, status, plan)
        os.write(status, b"warm")
        os.close(status)
        return self._run(plan)

    def _prepare(self, req):
        """Everything up to the command's first line of code; a string says why it must start cold."""
        _prctl(PR_SET_DUMPABLE, 1)  # as after an exec: a command may read its own /proc entries
        env = req["env"]
        import resource
        for which, n in req.get("rlimits", ()):
            resource.setrlimit(which, (n, n))
        try:
            os.chdir(req["cwd"])
        except OSError:
            os.chdir("/")
        if req["python"].get("dash"):  # dash exports PWD: the inherited one if it names the cwd
            env = req["env"] = dict(env)
            env["PWD"] = _dash_pwd(env.get("PWD"))
        plan = self._plan(req)
        if isinstance(plan, str):
            return plan
        areas = _proc_self_areas(req["python"]["argv"], env)
        if isinstance(areas, str):
            return areas
        self._become(req, plan)
        # after _become: glibc's environ no longer points into the original area
        _proc_self_write(areas, req["python"]["comm"])
        return plan

    def _cold(self, req, status, why):
        """Start the command as init would have: the same argv, environment and signal dispositions."""
        os.write(status, ("cold: " + why).encode("utf-8", "replace")[:4000])
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        argv = req["argv"]
        try:
            os.execve(argv[0], argv, req["env"])
        except OSError as exc:
            os.write(2, ("agentenv: cannot run %s: %s\n" % (argv[0], exc)).encode())
        os._exit(127)

    def _plan(self, req):
        """How a cold start of ``req["python"]`` would set up the interpreter; a string says why not."""
        env = req["env"]
        for key in set(env) | set(self.env):
            fixed = read_at_start(key) or key in FIXED_ENV
            if fixed and env.get(key) != self.env.get(key):
                return "%s differs from the warm interpreter's" % key
        if "LD_PRELOAD" in env or "LD_LIBRARY_PATH" in env:
            return "a dynamic-loader variable is set"
        argv = req["python"]["argv"]
        flags = {"dont_write_bytecode": bool(env.get("PYTHONDONTWRITEBYTECODE")),
                 "no_user_site": bool(env.get("PYTHONNOUSERSITE")),
                 "safe_path": bool(env.get("PYTHONSAFEPATH")) and sys.version_info >= (3, 11),
                 "unbuffered": bool(env.get("PYTHONUNBUFFERED"))}
        mode = target = None
        i = 1
        while i < len(argv) and mode is None:
            arg = argv[i]
            if arg == "--" or not arg.startswith("-") or arg == "-":
                break
            for j, ch in enumerate(arg[1:], 1):
                if ch in ("c", "m"):
                    rest = arg[j + 1:]
                    if not rest:
                        i += 1
                        if i >= len(argv):
                            return "-%s without an argument" % ch
                        rest = argv[i]
                    mode, target = ch, rest
                    break
                if ch not in FLAG_OPTIONS or (ch == "P" and sys.version_info < (3, 11)):
                    return "interpreter option -%s" % ch
                flags[FLAG_OPTIONS[ch]] = True
            i += 1
        if mode is None:
            if i < len(argv) and argv[i] == "--":
                i += 1
            if i >= len(argv) or argv[i] == "-":
                return "no script (interactive or stdin)"
            mode, target = "s", argv[i]
        args = argv[i + 1:] if mode == "s" else argv[i:]
        pythonpath = _pythonpath(env.get("PYTHONPATH", ""))
        if pythonpath is None:
            return "PYTHONPATH has relative entries"
        if mode == "c":
            first = ""
        elif mode == "m":
            first = os.getcwd()
        else:
            path = target if os.path.isabs(target) else os.path.join(os.getcwd(), target)
            if not os.path.isfile(path):
                return "the script %s is not a file" % target
            first = os.path.dirname(os.path.realpath(path))
        new = ([] if flags["safe_path"] else [first]) + pythonpath
        for entry in new:
            if entry in self.path_index:
                continue
            why = self._shadows(entry or ".")
            if why:
                return why
        if not flags["no_user_site"] and not self.venv_alone:
            import site
            user_site = os.path.join(os.path.expanduser("~"), ".local", "lib",
                                     "python%d.%d" % sys.version_info[:2], "site-packages")
            if os.path.isdir(user_site) or (site.USER_SITE and os.path.isdir(site.USER_SITE)):
                return "a user site-packages directory exists"
        pytest = (mode == "m" and target in ("pytest", "py.test")) or (
            mode == "s" and _is_pytest_script(target))
        return {"mode": mode, "target": target, "args": args, "flags": flags, "path": new + self.rest,
                "pytest": pytest}

    def _shadows(self, entry):
        """Why a module in *entry* would shadow one the template imported (None: none would)."""
        try:
            names = os.listdir(entry)
        except (FileNotFoundError, NotADirectoryError):
            return "sys.path entry %s is a file" % entry if os.path.exists(entry) else None
        except OSError:
            return "sys.path entry %s cannot be listed" % entry
        import importlib.machinery as machinery
        suffixes = sorted(machinery.all_suffixes(), key=len, reverse=True)
        for name in names:
            base = name
            for suffix in suffixes:
                if name.endswith(suffix):
                    base = name[:-len(suffix)]
                    break
            else:
                if not any(os.path.exists(os.path.join(entry, name, "__init__" + s)) for s in suffixes):
                    continue  # a directory without __init__ is a namespace portion: it does not shadow
            if base in self.names:
                return "%s in %s would shadow the preloaded module %s" % (name, entry or ".", base)
            if base in ("sitecustomize", "usercustomize"):  # (the template's start-up left them out: see adopt)
                return "%s in %s would run at start-up" % (name, entry or ".")
        return None

    def _become(self, req, plan):
        """Set up this process as a cold start of the command would be."""
        env = req["env"]
        os.environ.clear()
        os.environ.update(env)
        flags = plan["flags"]
        _set_flags({"dont_write_bytecode": int(flags["dont_write_bytecode"]),
                    "no_user_site": int(flags["no_user_site"]), "safe_path": bool(flags["safe_path"])})
        sys.dont_write_bytecode = flags["dont_write_bytecode"]
        sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
        sys.path[:] = plan["path"]
        for key in list(sys.path_importer_cache):
            if key not in self.path_index:
                del sys.path_importer_cache[key]
        import site
        site.ENABLE_USER_SITE = False if flags["no_user_site"] or self.venv_alone else site.check_enableusersite()
        if not plan["pytest"]:  # a script sees no test runner it did not import itself
            for name in [n for n in sys.modules if n not in self.stdlib]:
                del sys.modules[name]
        if "linecache" in sys.modules:
            sys.modules["linecache"].clearcache()
        pyargv = req["python"]["argv"]
        if plan["mode"] == "c":
            sys.argv = ["-c"] + plan["args"]
        elif plan["mode"] == "m":
            sys.argv = ["-m"] + plan["args"]
        else:
            sys.argv = [plan["target"]] + plan["args"]
        if hasattr(sys, "orig_argv"):
            sys.orig_argv = list(pyargv)
        main = type(sys)("__main__")
        main.__dict__.update(self.main_dunders)
        main.__dict__["__annotations__"] = {}
        sys.modules["__main__"] = main
        self.main = main
        _stdio(flags["unbuffered"])

    def _run(self, plan):
        main = self.main
        status, sigint = 0, False
        try:
            if plan["mode"] == "m":
                import runpy
                runpy._run_module_as_main(plan["target"], alter_argv=True)
            elif plan["mode"] == "c":
                exec(compile(plan["target"], "<string>", "exec", dont_inherit=True), main.__dict__)
            else:
                # 3.9 and later make the main script's file name absolute (not normalised)
                name = plan["target"]
                if sys.version_info >= (3, 9) and not os.path.isabs(name):
                    name = os.path.join(os.getcwd(), name)
                with open(name, "rb") as f:
                    source = f.read()
                main.__dict__["__file__"] = name
                main.__dict__["__cached__"] = None
                try:
                    from importlib.machinery import SourceFileLoader
                    main.__dict__["__loader__"] = SourceFileLoader("__main__", name)
                except ImportError:
                    pass
                known = _SCRIPT_CODE.get(name)
                if known is not None and known[0] == source and not sys.flags.optimize:
                    code = known[1]  # (that very text, compiled by the seed as here)
                else:
                    code = compile(source, name, "exec", dont_inherit=True)
                exec(code, main.__dict__)
        except SystemExit as exc:
            status = _exit_status(exc)
        except BaseException as exc:
            tb = exc.__traceback__.tb_next if exc.__traceback__ else None  # from the program's own frame on
            sys.excepthook(type(exc), exc.with_traceback(tb), tb)
            status, sigint = 1, isinstance(exc, KeyboardInterrupt)
        _finalize(status, sigint)


def _outlive_init():
    """Init closed the channel (it died, or gave the template up): wait for init, then go. The
    template is pid 1 of the namespace around the sandbox's: its exit would end the sandbox."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            continue


def _exit_status(exc):
    """The exit status the interpreter gives an uncaught SystemExit (printing a non-integer code)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code if -(1 << 31) <= code < (1 << 31) else -1
    try:
        sys.stderr.write(str(code) + "\n")
    except Exception:
        pass
    return 1


def _finalize(status, sigint):
    """What the interpreter's exit does that a program can see, then _exit: non-daemon threads are
    waited for, atexit callbacks run, stdout and stderr are flushed (status 120 if stdout cannot
    be). Tearing down the hundreds of modules the template holds (tens of ms) is left out:
    Python does not promise ``__del__`` of objects alive at exit."""
    try:
        import threading
        threading._shutdown()
    except Exception:
        pass
    try:
        import atexit
        atexit._run_exitfuncs()
    except Exception:
        pass
    for stream, failed in ((sys.stdout, 120), (sys.stderr, None)):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            if failed and status == 0:
                status = failed
    if sigint:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status & 0xFF)


def read_at_start(key):
    """Whether an interpreter reads the environment variable *key* once, at its start, in a way a
    warm start cannot take on (a template that read another value cannot serve the command)."""
    return (key.startswith("PYTHON") and key not in EMULATED_ENV) or key.startswith("LC_") or key in (
        "LANG", "LANGUAGE", "TZ")


def _dash_pwd(inherited):
    if inherited and inherited.startswith("/"):
        try:
            a, b = os.stat(inherited), os.stat(".")
            if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
                return inherited
        except OSError:
            pass
    return os.getcwd()


def _pythonpath(value):
    """The sys.path entries a cold start makes of PYTHONPATH (None: relative entries, which differ
    between Python versions, so such a command starts cold)."""
    entries = []
    for p in value.split(":") if value else ():
        if not p or not os.path.isabs(p):
            return None
        entries.append(os.path.normpath(p) if sys.version_info >= (3, 11) else p)
    return entries


def _system_site_packages(prefix):
    """Whether the virtual environment at *prefix* sees the system's packages (its pyvenv.cfg)."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    return value.strip().lower() == "true"
    except OSError:
        pass
    return True  # (site.venv's default)


def _writable(path):
    """Whether *path* is on a writable mount, or could appear on one."""
    try:
        return not os.statvfs(path).f_flag & os.ST_RDONLY
    except OSError:
        return _writable_parent(path)


def _writable_parent(path):
    parent = os.path.dirname(path.rstrip("/")) or "/"
    while parent and not os.path.exists(parent):
        parent = os.path.dirname(parent)
    try:
        return not os.statvfs(parent).f_flag & os.ST_RDONLY
    except OSError:
        return True


def _is_pytest_script(path):
    try:
        with open(path, "rb") as f:
            head = f.read(2048)
    except OSError:
        return False
    return b"from pytest import console_main" in head or b"from pytest import main" in head


def _prctl(option, arg):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if option == PR_SET_NAME:
        return libc.prctl(option, ctypes.c_char_p(arg), 0, 0, 0)
    return libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0)


def _set_flags(values):
    """Give ``sys.flags`` the values a cold start with this command's options would have.

    ``sys.flags`` is a read-only struct sequence; its items are replaced in place (ctypes), so
    that code reading it (``subprocess._args_from_interpreter_flags``, say) sees a cold start's."""
    import ctypes
    flags = sys.flags
    names = list(getattr(type(flags), "__match_args__", ())) or [
        "debug", "inspect", "interactive", "optimize", "dont_write_bytecode", "no_user_site", "no_site",
        "ignore_environment", "verbose", "bytes_warning", "quiet", "hash_randomization", "isolated",
        "dev_mode", "utf8_mode"]
    base = id(flags)
    item0 = id(flags[0])
    offset = next(off for off in range(8, 128, 8) if ctypes.c_void_p.from_address(base + off).value == item0)
    for name, value in values.items():
        if name not in names or getattr(flags, name) == value:
            continue
        index = names.index(name)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(value))
        ctypes.c_void_p.from_address(base + offset + 8 * index).value = id(value)


def _stdio(unbuffered):
    """Fresh sys.stdin/stdout/stderr for fds 0-2, made as a cold start makes them."""
    import io
    made = []
    for fd, name, write, old in ((0, "<stdin>", False, sys.__stdin__), (1, "<stdout>", True, sys.__stdout__),
                                 (2, "<stderr>", True, sys.__stderr__)):
        buffering = 0 if unbuffered and write else -1
        buf = io.open(fd, "wb" if write else "rb", buffering, closefd=False)
        raw = buf if buffering == 0 else buf.raw
        try:
            raw.name = name
        except AttributeError:
            pass
        line = not unbuffered and (raw.isatty() or fd == 2)
        stream = io.TextIOWrapper(buf, encoding=old.encoding, errors=old.errors, newline="\n",
                                  line_buffering=line, write_through=unbuffered)
        stream.mode = "w" if write else "r"
        made.append(stream)
    sys.stdin = sys.__stdin__ = made[0]
    sys.stdout = sys.__stdout__ = made[1]
    sys.stderr = sys.__stderr__ = made[2]


def _proc_self_areas(argv, env):
    """Where this command's argv and environment go so that /proc/self/cmdline and environ show
    them: the areas the template reserved at its start, NUL-padded to their end (a string says
    why not: they do not fit)."""
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    arg_start, arg_end, env_start, env_end = (int(x) for x in fields[45:49])
    areas = ((arg_start, arg_end, b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in argv)),
             (env_start, env_end, b"".join(("%s=%s" % kv).encode("utf-8", "surrogateescape") + b"\0"
                                           for kv in env.items())))
    for start, end, data in areas:
        if len(data) > end - start:
            return "the command line or environment is longer than the warm interpreter's reserve"
    return areas


def _proc_self_write(areas, comm):
    import ctypes
    for start, end, data in areas:
        ctypes.memmove(start, data + b"\0" * (end - start - len(data)), end - start)
    _prctl(PR_SET_NAME, comm.encode()[:15])
    return None


def preload_standard_library():
    """In a seed (see _nszygote._Seed), once: the modules every template it forks preloads, and
    the scripts of `SCRIPTS`, compiled as a command would compile them."""
    import importlib
    for name in STDLIB + ("site", "importlib.machinery", "importlib.util"):
        try:
            importlib.import_module(name)
        except Exception:
            pass
    for path, source in SCRIPTS.items():
        data = source.encode("utf-8")
        try:
            _SCRIPT_CODE[path] = (data, compile(data, path, "exec", dont_inherit=True))
        except Exception:
            pass


def preload_pytest(extra, listing=True):
    """Import pytest, its default plugins and *extra*, and execute the trusted judge (definitions
    only), where this runtime has pytest; what is imported already costs nothing. *listing*: list
    the runtime's distributions too (see below)."""
    import importlib
    try:
        import pytest  # noqa: F401
        from _pytest import config
        names = ["_pytest." + n for n in tuple(config.essential_plugins) + tuple(config.default_plugins)]
        for name in names + list(extra):
            try:
                importlib.import_module(name)
            except Exception:
                pass
        if _JUDGE is not None and getattr(sys.modules.get(_JUDGE[2]), "DIGEST", None) != _JUDGE[1]:
            code, digest, name = _JUDGE
            judge = type(sys)(name)
            try:
                exec(code, vars(judge))
            except Exception:  # (this runtime's pytest does not take it: its runs say why)
                pass
            else:
                judge.DIGEST = digest
                sys.modules[name] = judge
                judge.hold_modules()  # (the runner's fingerprint, noted once: runs only check it)
        # Third-party plugins (pytest11 entry points) are left to pytest: it imports them under
        # its assertion-rewriting hook, which a module imported before cannot get. Their
        # discovery gets faster: the listing of the runtime's (read-only) distributions is
        # cached by directory and mtime, so the children find it done.
        if listing:
            from importlib import metadata
            list(metadata.distributions())
    except Exception:
        pass


def preload_runtime(spec):
    """In a seed of one runtime (see _nszygote._Seed), once, before it forks any template: import
    the runtime's pytest as a template would (``preload_pytest``) from *spec*'s ``paths`` (the
    runtime's site-packages: where a cold start finds it, after the standard library) with its
    bytecode cache as the prefix, writing nothing; no ``site``, no ``.pth`` file, no plugin. A
    template then adopts its runtime (``site`` runs there, confined) with pytest loaded: its
    imports cost every sandbox ~75 ms of CPU when each template made them."""
    global PRELOADED
    before = frozenset(sys.modules)
    sys.dont_write_bytecode = True
    sys.pycache_prefix = spec.get("prefix") or None
    sys.path.extend(p for p in spec["paths"] if p not in sys.path)
    preload_pytest(tuple(n for n in PYTEST_EXTRA if n != "readline"))  # (readline reads the terminal's settings)
    PRELOADED = frozenset(sys.modules) - before


def adopt(python, env):
    """In a template forked from a seed (the runtime's interpreter started with ``-I -S`` in the
    zygote's environment), already confined: become what ``python -c`` of the
    runtime, started with *env*, is before its first line: environment, flags, executable,
    prefixes, ``sys.path`` and what ``site`` does (the runtime's ``.pth`` files run here, confined,
    as in a cold start). Returns the modules loaded by then (the template's baseline)."""
    os.environ.clear()
    os.environ.update(env)
    _set_flags({"isolated": 0, "ignore_environment": 0, "no_site": 0, "safe_path": False,
                "no_user_site": int(bool(env.get("PYTHONNOUSERSITE"))),
                "dont_write_bytecode": int(bool(env.get("PYTHONDONTWRITEBYTECODE")))})
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    sys.pycache_prefix = env.get("PYTHONPYCACHEPREFIX") or None
    sys.executable = python
    sys.prefix = sys.exec_prefix = sys.base_prefix
    if not os.path.exists(os.path.join(os.path.dirname(os.path.dirname(python)), "pyvenv.cfg")):
        sys._base_executable = python
    pythonpath = _pythonpath(env.get("PYTHONPATH", "")) or []
    # ``site`` imports a sitecustomize from the path: the runtime's entries on writable mounts (the
    # workspace) stay off it here, where the agent's files may already lie (an evaluation sandbox's
    # template starts as the host copies them in), and a command that would find one there starts
    # cold (`Template._shadows`): one that ran here ran in every warm command, scored runs too, and
    # rewrote the judge as it loaded (red team, stop 40)
    sys.path[:] = [p for p in pythonpath if not _writable(p)] + [p for p in sys.path if p not in pythonpath]
    sys.path_importer_cache.clear()
    import site
    site.PREFIXES = [sys.prefix, sys.exec_prefix]
    site.ENABLE_USER_SITE = site.USER_SITE = site.USER_BASE = None
    site.main()
    sys.path[:] = pythonpath + [p for p in sys.path if p not in pythonpath]
    sys.path_importer_cache.clear()
    sys.path.insert(0, "")
    main = vars(sys.modules["__main__"])  # the zygote's program came on stdin: ``-c`` has no file
    for name in ("__file__", "__cached__"):
        main.pop(name, None)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # what the interpreter's start sets
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(sig, signal.SIG_IGN)
    return frozenset(sys.modules)


def judge_code(source, digest, name):
    """*source* compiled as the judge (see _JUDGE); None where this Python cannot compile it."""
    try:
        return compile(source, "<judge>", "exec", dont_inherit=True), digest, name
    except Exception:
        return None


def main(channel, baseline):
    template = Template(channel, baseline)
    template.start()
    raw, fds = template.serve()  # returns in a command's process only
    template.run_command(raw, fds)
