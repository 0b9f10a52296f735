"""The testwriting suite's reward: the share of hidden mutants the agent's tests kill.

Gate: the tests must pass on the module as given and on each hidden behaviour-preserving variant
of it (rewritten the way a refactoring would); tests that do not run (no test collected: exit
status 5) fail the gate. A mutant is killed when the test command fails on it (a failing test, an
error, a crash or a time-out).

The tests see each subject (the module, a variant, a mutant) only through what it does:

* It is not on disk. The run's interpreter (``python -I -c BLIND``, before pytest and any code of the
  agent's) reads its source from stdin, compiles it with every position set to 1:0 (no layout, no
  line numbers) and puts the module into ``sys.modules``. The module as given leaves the workspace
  for the run: a test that compared the subject with the file would compare the module with itself
  wherever the module is not swapped.
* Its code is out of reach. An audit hook stops the run (exit status 70, a failed run) when the tests
  take a code object of the subject (``__code__``, ``f_code``), a frame that is or leads to one of
  the subject's (``sys._getframe``, a traceback's ``tb_frame``; a generator's frame at all), or use
  ``gc``'s object walks, ``ctypes``, trace or profile functions or audit hooks of their own, or
  load an extension module that is not the interpreter's own (native code reads any memory); the
  process is not dumpable, so ``/proc/self/mem`` is closed to it. No signal handler can be set (a
  handler gets the frame it interrupted, with no audit event). No code of the tests' runs inside
  the hook (no collection, and nothing of a forged event is read). Counts of references to the
  subject's names and constants, of memory blocks and of memory are padded at random, and the
  subject is kept alive. The tests get the subject's
  functions as wrappers: the functions themselves live only in generators' frames (out of reach:
  no code, defaults, closures or tracebacks of theirs), and what they raise leaves without the
  subject's frames, so pytest's report of a failure never needs one.
* Every subject runs with the same paths, environment and clean slate (guard.py), in a random order
  (the module too: the sandbox's process counter tells a run how many came before it), and a failed
  gate is reported in the same words whatever the order, so the same tests always get the same
  observation.

What is left to a test that will not test behaviour is the process's own view of itself: the time a
call takes, where objects land in memory, the subject's frames seen unaudited from code it calls
(a generator of the tests' resumed by it; the ``tb_lasti`` of an exception it catches), and bytecode
crafted to read memory (``marshal``, a ``.pyc``, ``code.replace``: an exploit of the interpreter).
The robust end of this is the subject in a process of its own, the tests holding proxies.
"""

import json
import os
import random
import re
import sys
import types

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
import guard  # noqa: E402


GATE = "a test suite earns nothing unless it passes on the module and on behaviour-preserving rewrites of it"


BLIND = r'''
import _thread, ast, ctypes, gc, inspect, json, os, random, runpy, signal, struct, sys, types

def _load():
    name, path = sys.argv[1], sys.argv[2]
    given = json.loads(sys.stdin.buffer.read())
    source = given["source"]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    tree = ast.parse(source, path)
    for node in ast.walk(tree):  # no layout: every position is 1:0, whatever the subject's text
        if "lineno" in node._attributes:
            node.lineno = node.end_lineno = 1
            node.col_offset = node.end_col_offset = 0
    code = compile(tree, path, "exec", dont_inherit=True)
    module = types.ModuleType(name)
    module.__file__ = path  # (not there: the run removes the file)
    sys.modules[name] = module
    exec(code, module.__dict__)
    held = []
    for key, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is module.__dict__:
            setattr(module, key, _wrap(value, held))
        elif isinstance(value, type) and value.__module__ == name:
            for attr, item in list(vars(value).items()):
                if isinstance(item, types.FunctionType):
                    setattr(value, attr, _wrap(item, held))
                elif isinstance(item, (staticmethod, classmethod)):
                    setattr(value, attr, type(item)(_wrap(item.__func__, held)))
                elif isinstance(item, property):
                    setattr(value, attr, property(*(f and _wrap(f, held) for f in (item.fget, item.fset, item.fdel)),
                                                  item.__doc__))
    return module, (tuple(vars(module).items()), tuple(held), _padding(given["shared"]))

def _padding(shared):
    # The tests count references (sys.getrefcount) to the names and shared constants (small ints,
    # interned and one-character strings) the subject's code holds: a test that freed the subject
    # and compared the counts with those of a copy of the module killed 0-58% of the mutants while
    # testing nothing (red team, stop 33). The subject is kept alive (nothing the tests drop frees
    # it), and every name and constant that any of the task's subjects holds gets a random number of
    # references more, as do the counts of objects and memory blocks.
    draw = random.SystemRandom().randrange
    objects = [sys.intern(text) for text in shared["str"]] + [int(n) for n in shared["int"]]
    objects += [bytes(b) for b in shared["bytes"]] + [None, True, False, Ellipsis, (), "", b""]
    return (tuple((obj,) * draw(1024) for obj in objects), tuple([] for _ in range(draw(1024))),
            b"\0" * draw(1 << 20))

# fn lives only in the frames of generators, which the tests cannot open (a generator's frame
# stops the run), so they cannot reach the subject's own functions: not their code, defaults or
# closures, nor the tracebacks of a call of theirs (tb_lasti is a position in the code). Their
# frames have a globals dict of their own, which the hook knows: a traceback of one (from throw()
# into a generator, or code of the tests' that the loop below calls) stops the run too.
HELD = """
def held(fn):
    while True:
        yield one_call(fn)

def one_call(fn):
    args, kwargs = yield
    try:
        value = fn(*args, **kwargs)
    except BaseException as exc:
        seen, todo = set(), [exc]
        while todo:  # the exception and its chain leave without the subject's frames
            e = todo.pop()
            if e is not None and id(e) not in seen:
                seen.add(id(e))
                e.__traceback__ = None
                todo += [e.__cause__, e.__context__]
        yield False, exc
    else:
        yield True, value
"""
_HELD = {"__builtins__": __builtins__}
exec(HELD, _HELD)

def _wrap(fn, held):
    held.append(fn)
    calls, lock = _HELD["held"](fn), _thread.allocate_lock()

    def call(*args, **kwargs):
        with lock:
            one = next(calls)
        next(one)
        ok, value = one.send((args, kwargs))
        one.close()
        if ok:
            return value
        raise value

    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(call, attr, getattr(fn, attr))
    call.__dict__.update(fn.__dict__)
    call.__signature__ = inspect.signature(fn)
    return call

# The hook has a globals dict of its own with no builtins, and keeps nothing it could be made to
# change; no code of the tests' runs while it does, which could read its frame. It decides by identity of unaudited attributes (a function's __globals__, a frame's
# f_globals and f_back), so checking raises no event but one: its own read of a traceback's frame,
# which it knows by the globals of the frame that reads.
HOOK = """
def make(G, H, write, leave, out, getframe, banned, generators, own, string, typeof, trusted, untrusted, kinds, gc):
    def stop(why):
        try:
            write(out, ("\\nthe run was stopped: the tests reached the module's code or frames (" + why
                        + "); tests may use the module only through what it does\\n").encode())
        except:
            pass
        leave(70)

    function, frame_type, traceback = kinds
    isenabled, disable, enable = gc

    def hook(event, args):
        # No code of the tests' runs in here: an event they raise with sys.audit is checked for the
        # exact types the interpreter's own would carry before anything of it is read (a str
        # subclass's startswith, an object's __globals__ would run their code, which could take this
        # frame and what it refers to), and no collection runs meanwhile (a finalizer would too).
        if typeof(event) is not string:
            stop("an audit event that is not the interpreter's")
        collecting = isenabled()
        disable()
        try:
            check(event, args)
        finally:
            if collecting:
                enable()

    def check(event, args):
        if event.startswith(banned):
            stop(event)
        if event == "import":  # a file only for a compiled extension: native code reads any memory
            path = args[1]
            if path is not None and (typeof(path) is not string or not path.startswith(trusted)
                                     or "/./" in path or "/../" in path or path.rpartition("/")[2].startswith(untrusted)):
                stop("an extension module that is not the interpreter's own")
        frame = None
        if event == "sys._getframe":
            frame = args[0]
            if typeof(frame) is not frame_type:
                stop("an audit event that is not the interpreter's")
        elif event == "object.__getattr__":
            obj, name = args
            if typeof(name) is not string:
                stop("an audit event that is not the interpreter's")
            if name in generators:
                stop(name)
            elif name == "__code__":
                if typeof(obj) is not function:
                    stop("an audit event that is not the interpreter's")
                if obj.__globals__ is G:
                    stop(name)
            elif name == "f_code":
                if typeof(obj) is not frame_type:
                    stop("an audit event that is not the interpreter's")
                frame = obj
            elif name == "tb_frame":
                if typeof(obj) is not traceback:
                    stop("an audit event that is not the interpreter's")
                if getframe(2).f_globals is own:  # (the reader, below this check and the hook)
                    return
                frame = obj.tb_frame
        while frame is not None:
            if frame.f_globals is G or frame.f_globals is H:
                stop(event if event != "object.__getattr__" else args[1])
            frame = frame.f_back
    return hook
"""

def _watch(module, keep):
    # keep (the subject and the padding) is held by a reference no Python object has: not the
    # hook's closure, whose frame a finalizer that ran inside the hook read (red team, stop 33)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(keep))
    own = {"__builtins__": {}}  # (the hook's code looks up no global and no builtin name)
    exec(HOOK, own)
    hook = own.pop("make")(
        module.__dict__, _HELD,
        os.write, os._exit, os.dup(1),  # (pytest's capture puts a file of its own at 1)
        sys._getframe,
        ("gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
         "sys._current_frames", "sys._current_exceptions", "sys.addaudithook", "ctypes."),
        frozenset({"gi_code", "cr_code", "ag_code", "gi_frame", "cr_frame", "ag_frame"}), own, str, type,
        _trusted(), ("_test", "_xx", "xx", "_ctypes"), (types.FunctionType, types.FrameType, types.TracebackType),
        (gc.isenabled, gc.disable, gc.enable))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE: /proc/self/mem and the rest become root's
        _refuse("the test run cannot make itself undumpable")
    _no_signal_handlers(libc)
    sys.addaudithook(hook)

def _refuse(why):
    os.write(2, why.encode() + b"\n")
    os._exit(71)

def _trusted():
    # the folders the interpreter had before any test: its own, read-only in the sandbox (an
    # extension module may come only from these, and not the interpreter's test modules)
    found = set()
    for entry in sys.path:
        if entry and os.path.isdir(entry) and not os.access(entry, os.W_OK):
            found |= {os.path.normpath(entry) + "/", os.path.realpath(entry) + "/"}
    return tuple(sorted(found))

def _no_signal_handlers(libc):
    # A Python signal handler gets the frame it interrupted, with no audit event: fired by a timer
    # while the subject runs, it would sample the subject's frames (the bytecode offset, the locals).
    # From here on this process and its children cannot set one: a seccomp filter refuses
    # rt_sigaction with a new action (EPERM), reading one stays allowed. SIGINT's Python handler
    # goes back to the default first (asyncio.run sets one of its own only over Python's).
    machine = os.uname().machine
    if machine not in ("x86_64", "aarch64"):
        _refuse(f"no signal filter for {machine}: the tests could sample the module's frames")
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    arch, nr, x32 = (0xC000003E, 13, 0x40000000) if machine == "x86_64" else (0xC00000B7, 134, 0xFFFFFFFF)
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, kill, eperm = 0x7FFF0000, 0x80000000, 0x00050001
    program = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, kill),    # another architecture: killed
               (ld, 0, 0, 0), (jge, 0, 1, x32), (ret, 0, 0, kill),     # x32 (x86_64): killed
               (jeq, 0, 5, nr),                                        # not rt_sigaction: allowed
               (ld, 0, 0, 24), (jeq, 0, 2, 0), (ld, 0, 0, 28), (jeq, 1, 0, 0),  # act (arg 1) NULL: allowed
               (ret, 0, 0, eperm), (ret, 0, 0, allow)]
    filters = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *i) for i in program))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(program), ctypes.addressof(filters)))
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0) != 0:
        _refuse("the test run cannot refuse itself signal handlers (seccomp)")

    def refused(signalnum, handler):
        raise PermissionError(f"signal.signal({signalnum!r}, ...): tests may not set signal handlers here "
                              "(a handler gets the frame it interrupts, the module's own)")
    signal.signal = refused

def _main():
    _watch(*_load())
    rest = sys.argv[3:]
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.getcwd())  # as python -m puts it, now that this program has what it needs
    # (pytest's faulthandler would set handlers for SIGSEGV and the rest, which the filter refuses)
    sys.argv = [rest[1]] + (["-p", "no:faulthandler"] if rest[1] == "pytest" else []) + rest[2:]
    runpy.run_module(rest[1], run_name="__main__", alter_sys=True)

_main()
'''


def _blind(g: guard.Guard, module: str, command: list[str]) -> list[str]:
    """The test command (``PYTHON -m MODULE ...``) run by BLIND, which takes the subject from stdin."""
    if command[1] != "-m":
        raise SystemExit(f"the test command must be PYTHON -m MODULE ...: {command}")
    return [command[0], "-I", "-c", BLIND, module.removesuffix(".py"), os.path.join(g.workspace, module),
            *command[1:]]


def _shared(sources: list[str]) -> dict[str, list]:
    """Every name and shared constant (small ints, strings, empty and one-byte bytes) that the code of
    any of *sources* holds: BLIND pads each with random references (see ``_padding``)."""
    found: set = set()
    todo = [compile(source, "subject", "exec", dont_inherit=True) for source in sources]
    while todo:
        item = todo.pop()
        if isinstance(item, types.CodeType):
            found.update(item.co_names + item.co_varnames + item.co_cellvars + item.co_freevars)
            found.update((item.co_name, getattr(item, "co_qualname", item.co_name)))
            todo += item.co_consts
        elif isinstance(item, (tuple, frozenset)):
            todo += item
        elif type(item) in (str, bytes) or type(item) is int and -5 <= item <= 256:
            found.add(item)
    return {"str": sorted(k for k in found if type(k) is str), "int": sorted(k for k in found if type(k) is int),
            "bytes": sorted(list(k) for k in found if type(k) is bytes and len(k) <= 1)}


def _run(g: guard.Guard, module: str, argv: list[str], timeout: float, source: str, shared: dict) -> guard.Result:
    g.reset()
    # the module as given leaves the workspace for the run: a test that compared the subject with
    # the file would compare the module with itself wherever the module is not swapped
    os.unlink(os.path.join(g.workspace, module))
    given = json.dumps({"source": source, "shared": shared}).encode("utf-8")
    return g.run(argv, cwd=g.workspace, timeout=timeout, stdin=given)


def _why(result: guard.Result) -> str:
    return "time-out" if result.timed_out else f"exit status {result.exit_code}"


def _untimed(text: str) -> str:
    """pytest's output without the time it took (``1 failed in 0.12s``)."""
    return re.sub(r" in \d+(\.\d+)?s( \(\d+:\d\d:\d\d\))?", " in <time>", text)


def judge(g: guard.Guard) -> None:
    cfg = json.loads(g.files["subjects.json"])
    module, command, timeout = cfg["module"], cfg["command"], float(cfg["timeout_s"])
    subjects = [("module", "the module as given", cfg["original"])]
    subjects += [("variant", f"variant {v['name']}", v["source"]) for v in cfg["variants"]]
    subjects += [("mutant", f"{m['operator']} in {m['function']}", m["source"]) for m in cfg["mutants"]]
    # Every subject in a random order (the module too). A failed gate runs the rest of the gate's
    # subjects and is reported the same way whatever the order, so the same tests always get the same
    # observation.
    argv = _blind(g, module, command)
    shared = _shared([source for _, _, source in subjects])
    order = list(range(len(subjects)))
    random.SystemRandom().shuffle(order)
    gate = [j for j, (kind, _, _) in enumerate(subjects) if kind != "mutant"]
    results = {}
    for i in order:
        results[i] = _run(g, module, argv, timeout, subjects[i][2], shared)
        if subjects[i][0] == "mutant" or results[i].ok:
            continue
        for j in gate:
            if j not in results:
                results[j] = _run(g, module, argv, timeout, subjects[j][2], shared)
        if not results[0].ok:
            why = "no test was collected" if results[0].exit_code == 5 else _why(results[0])
            g.finish(0.0, [f"gate failed: the tests fail on the module as given ({why}); {GATE}",
                           _untimed(results[0].stdout.decode("utf-8", "replace")[-3000:])])
            return
        failed = [f"{label} ({_why(results[j])})" for j, (kind, label, _) in enumerate(subjects)
                  if kind == "variant" and not results[j].ok]
        g.finish(0.0, [f"gate failed: the tests fail on {', '.join(failed)}; {GATE}"])
        return
    mutants = [i for i, s in enumerate(subjects) if s[0] == "mutant"]
    killed = [i for i in mutants if not results[i].ok]
    survivors = sorted(subjects[i][1] for i in mutants if results[i].ok)
    lines = [f"gate passed: the tests pass on the module and its {len(cfg['variants'])} hidden variants",
             f"mutants killed: {len(killed)} of {len(mutants)}"]
    lines += [f"  survived: {label}" for label in survivors]
    g.finish(len(killed) / len(mutants) if mutants else 0.0, lines)


if __name__ == "__main__":
    sys.exit(guard.main(judge))
