"""Warm interpreters in namespace sandboxes: Python commands fork a template started before any
command ran, and see what a cold start would have given them (issue 17)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap

import pytest

import agentenv
from agentenv import CodingEnv
from agentenv._spec import EnvironmentConfig
from agentenv._sandbox import Limits, RuntimeEnv, SandboxRequest
from agentenv.builtin import namespace, reports
from agentenv.builtin._nszygote import TEMPLATE_UID
from agentenv.builtin.namespace import NamespaceBackend
from _paths import wait_until

_AVAILABLE = NamespaceBackend.availability()
pytestmark = pytest.mark.skipif(not _AVAILABLE.ok, reason=f"namespace backend unavailable: {_AVAILABLE.reason}")
ROOTLESS = os.geteuid() != 0

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = sys.base_prefix
RUNTIME = RuntimeEnv("python3", tuple(p for p in (PREFIX,) if not p.startswith("/usr")),
                     {"PATH": f"{PREFIX}/bin:/usr/local/bin:/usr/bin:/bin"})

# Everything of the interpreter's state a program could look at, as JSON.
PROBE = textwrap.dedent(r'''
    import json, os, resource, signal, site, sys, warnings
    main = sys.modules["__main__"]
    with open("/proc/self/status") as f:
        status = {k: v.strip() for k, v in (l.split(":", 1) for l in f)
                  if k in ("Uid", "Gid", "Groups", "CapEff", "CapPrm", "CapBnd", "NoNewPrivs", "Seccomp")}
    with open("/proc/self/cmdline", "rb") as f:
        cmdline = [c.decode() for c in f.read().rstrip(b"\0").split(b"\0")]
    state = {
        "argv": sys.argv, "orig_argv": sys.orig_argv, "path": sys.path, "flags": list(sys.flags),
        "pycache_prefix": sys.pycache_prefix, "dont_write_bytecode": sys.dont_write_bytecode,
        "environ": dict(os.environ), "cwd": os.getcwd(), "main": sorted(vars(main)),
        "file": getattr(main, "__file__", None), "name": __name__, "executable": sys.executable,
        "ppid": os.getppid(), "ids": [os.getresuid(), os.getresgid(), os.getgroups()],
        "session_leader": os.getsid(0) == os.getpid(),
        "signals": [str(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ,
                                                         signal.SIGTERM, signal.SIGCHLD)],
        "blocked": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "fds": sorted(int(f) for f in os.listdir("/proc/self/fd")),
        "stdio": [(s.name, s.encoding, s.errors, s.line_buffering, s.write_through, s.mode)
                  for s in (sys.stdin, sys.stdout, sys.stderr)],
        "status": status, "cmdline": cmdline, "comm": open("/proc/self/comm").read(),
        "umask": os.umask(0o22), "rlimits": [resource.getrlimit(r) for r in (
            resource.RLIMIT_NOFILE, resource.RLIMIT_FSIZE, resource.RLIMIT_CORE, resource.RLIMIT_CPU)],
        "user_site": site.ENABLE_USER_SITE, "meta_path": [repr(type(f)) for f in sys.meta_path],
        "path_hooks": [getattr(h, "__qualname__", repr(type(h))) for h in sys.path_hooks], "warnings": [repr(f) for f in warnings.filters],
        "modules": sorted(sys.modules),
    }
    print(json.dumps(state, sort_keys=True, default=repr))
''')


def request(workspace_dir=None, runtime=RUNTIME, **limits) -> SandboxRequest:
    return SandboxRequest(runtime, workspace_dir, "/app", Limits(**{"wall_time_s": 30.0, **limits}))


@pytest.fixture(scope="module")
def backend():
    b = NamespaceBackend(pool_size=1, warm=True)  # the host's Python has no pytest: "auto" would leave it cold
    yield b
    b.close()


# A template is a fork of the seed of the runtime's interpreter (a Python of agentenv's minor
# version, started in the zygote's environment): the host's interpreter as it is, or a virtual
# environment of one (as tasks' runtimes are); otherwise the runtime's Python is exec'd (a time
# zone of its own makes it so: an interpreter reads TZ once, at its start).
# A runtime with pytest gets a seed of its own, which imported its pytest once for every template.
KINDS = {"forked": RUNTIME, "exec": RuntimeEnv("python3", RUNTIME.mounts, {**RUNTIME.env, "TZ": "UTC"}),
         "venv": None, "venv with pytest": None}


def runtime_of(kind: str) -> RuntimeEnv:
    if KINDS[kind] is None:  # a task's runtime: a virtual environment built by the python3.X runtime
        version = "python%d.%d" % sys.version_info[:2]
        deps = ("pytest==8.3.5",) if kind == "venv with pytest" else ()
        KINDS[kind] = agentenv.registry().runtime_for(version).prepare(EnvironmentConfig(version, deps))
    return KINDS[kind]


@pytest.fixture(params=sorted(KINDS))
def box(backend, request):
    kind = request.param
    with backend.open(SandboxRequest(runtime_of(kind), None, "/app", Limits(wall_time_s=30.0))) as sandbox:
        if not ROOTLESS:
            features = sandbox.isolation.features["warm_start"]
            assert features.startswith("on") and ("seed" in features) == (kind != "exec"), features
            assert ("the runtime's pytest" in features) == (kind == "venv with pytest"), features
        yield sandbox


def warm_and_cold(box, command: str, **kw):
    """The same command line started warm and (behind the shell's ``exec``, which the warm path
    leaves to the shell) cold."""
    warm = box.exec(command, **kw)
    cold = box.exec("exec " + command, **kw)
    assert cold.start.startswith("cold"), cold
    return warm, cold


@pytest.mark.skipif(ROOTLESS, reason="rootless sandboxes have no warm interpreter (one uid only): "
                                     "test_rootless_sandboxes_say_why_they_start_cold covers them")
@pytest.mark.parametrize("variant", ["-c", "script", "-m"])
def test_a_warm_start_sees_what_a_cold_start_sees(box, variant):
    box.write_file("probe.py", PROBE.encode())
    box.write_file("/tmp/extra/helper.py", b"X = 1\n")
    if variant == "-c":
        command, env = "python -c 'exec(open(\"/app/probe.py\").read())'", None
    elif variant == "script":  # the environment of a scored pytest run, and options a cold start reads
        command = "python -B -u probe.py one 'two words'"
        env = {"PYTHONSAFEPATH": "1", "PYTHONNOUSERSITE": "1", "PYTHONPYCACHEPREFIX": "/tmp/pc",
               "PYTHONPATH": "/tmp/extra", "PYTEST_ADDOPTS": "-x"}
    else:
        command, env = "python -m probe --flag", {"PYTHONPATH": "/tmp/extra"}
    warm, cold = warm_and_cold(box, command, env=env, cwd="/app")
    assert warm.start == "warm", warm
    assert warm.exit_code == cold.exit_code == 0, (warm, cold)
    got, want = json.loads(warm.stdout), json.loads(cold.stdout)
    warm_modules, cold_modules = set(got.pop("modules")), set(want.pop("modules"))
    assert got == want
    # the template's extra modules are standard library ones a judge imports, never a test runner
    assert cold_modules <= warm_modules and not {"pytest", "_pytest", "pluggy"} & warm_modules
    assert warm.stderr == cold.stderr == ""


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_exit_status_output_errors_and_limits_behave_as_cold(box):
    cases = [
        "import sys; print('out'); sys.exit(3)",
        "raise ValueError('boom')",
        "import sys; sys.exit('a message')",
        "import atexit, sys; atexit.register(lambda: print('at exit')); sys.stdout.write('unflushed')",
        "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
        "import sys; print(sys.stdin.read().upper())",
        "import threading, time; threading.Thread(target=lambda: (time.sleep(0.2), print('thread'))).start()",
        "print('x' * 300000)",
    ]
    for code in cases:
        warm, cold = warm_and_cold(box, f"python -c {json.dumps(code)}", stdin=b"piped in")
        assert warm.start == "warm", warm
        assert (warm.exit_code, warm.stdout, warm.stderr, warm.output_truncated) == \
               (cold.exit_code, cold.stdout, cold.stderr, cold.output_truncated), code
    with backend_for_limits() as (b, small):
        # (6 s: on a loaded machine a command that starts warm may take a while to say so)
        slow = small.exec("""python -c 'print("looping", flush=True)\nwhile True: pass'""", timeout_s=6)
        assert slow.timed_out and slow.start == "warm" and slow.stdout == "looping\n", slow
        after = small.exec("python -c 'print(42)'")  # the kill of every command spared the template
        assert after.stdout == "42\n" and after.start == "warm", after
        capped = small.exec("python -c 'print(\"y\" * 10000)'")
        assert capped.start == "warm" and capped.output_truncated and len(capped.stdout) < 4200, capped


class backend_for_limits:
    def __enter__(self):
        self.backend = NamespaceBackend(pool_size=0, warm=True)
        self.box = self.backend.open(request(max_output_bytes=4096))
        return self.backend, self.box

    def __exit__(self, *exc):
        self.box.close()
        self.backend.close()


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_nothing_one_command_changes_reaches_the_next(box):
    first = box.exec("python -c 'import json, os, sys; json.dumps = None; sys.modules[\"planted\"] = os; "
                     "os.environ[\"LEAK\"] = \"1\"; sys.path.insert(0, \"/tmp\"); open(\"/tmp/seen\", \"w\")'")
    assert first.start == "warm" and first.ok, first
    second = box.exec("python -c 'import json, os, sys; print(json.dumps(1), \"planted\" in sys.modules, "
                      "os.environ.get(\"LEAK\"), \"/tmp\" in sys.path)'")
    assert second.start == "warm" and second.stdout == "1 False None False\n", second
    # a workspace module that would shadow a preloaded one: the command starts cold and imports it
    box.write_file("json.py", b"def dumps(x):\n    return 'the workspace json'\n")
    shadowed = box.exec("python -c 'import json; print(json.dumps(1))'", cwd="/app")
    assert shadowed.start.startswith("cold: json.py in") and shadowed.stdout == "the workspace json\n", shadowed
    elsewhere = box.exec("python -c 'import json; print(json.dumps(1))'", cwd="/tmp")
    assert elsewhere.start == "warm" and elsewhere.stdout == "1\n", elsewhere


def test_commands_that_need_the_shell_or_other_programs_start_cold(box):
    for command, why in [("true", "not the runtime's python"), ("python -c pass; true", "shell syntax"),
                         ("python -X dev -c pass", "interpreter option -X"),
                         ("FOO=1 python -c pass", "shell syntax"),
                         ("python -c pass " + "x" * 40000, "longer than the warm interpreter's")]:
        result = box.exec(command)
        assert result.ok and result.start.startswith("cold") and (ROOTLESS or why in result.start), result
    tuned = box.exec("python -c pass", env={"PYTHONHASHSEED": "0"})  # the template's hash seed is its own
    assert tuned.start.startswith("cold: PYTHONHASHSEED"), tuned


def _templates(mnt: str) -> list[int]:
    """The processes of the mount namespace *mnt* (a sandbox's) whose real uid is the template's."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.readlink(f"/proc/{name}/ns/mnt") == mnt and \
                    _status(int(name)).get("Uid", "").split()[:1] == [str(TEMPLATE_UID)]:
                found.append(int(name))
        except OSError:  # gone, or a kernel thread
            pass
    return found


def _status(pid: int) -> dict:
    with open(f"/proc/{pid}/status") as f:
        return {k: v.strip() for k, v in (line.split(":", 1) for line in f)}


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_the_template_is_out_of_the_commands_reach(box):
    assert box.exec("python -c pass").start == "warm"  # the template is up
    # the template: the one process of the sandbox's mount namespace under the template uid
    ns = {kind: os.readlink(f"/proc/{box.init_pid}/ns/{kind}") for kind in ("mnt", "net", "ipc", "uts", "pid")}
    templates = _templates(ns["mnt"])
    assert len(templates) == 1, templates
    template = templates[0]
    status = _status(template)
    assert [int(x) for x in status["Uid"].split()] == [TEMPLATE_UID, 65534, TEMPLATE_UID, 65534]
    assert status["CapEff"] == status["CapPrm"] == status["CapBnd"] == "0" * 16
    assert status["NoNewPrivs"] == "1" and status["Seccomp"] == "2"
    # no pid in the sandbox's pid namespace (nothing there can name it); its children are born there
    assert os.readlink(f"/proc/{template}/ns/pid") != ns["pid"]
    assert os.readlink(f"/proc/{template}/ns/pid_for_children") == ns["pid"]
    assert all(os.readlink(f"/proc/{template}/ns/{kind}") == ns[kind] for kind in ("mnt", "net", "ipc", "uts"))
    assert os.readlink(f"/proc/{template}/cwd") == os.readlink(f"/proc/{template}/root") == "/"
    # from inside: only init and the command itself exist; no pid reaches anything else
    attack = box.exec(["/bin/sh", "-c", textwrap.dedent("""
        exec python -S -c '
        import ctypes, os, signal
        libc = ctypes.CDLL(None, use_errno=True)
        me = os.getpid()
        print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit()) == [1, me])
        hits = []
        for pid in range(2, 4096):
            if pid == me:
                continue
            try:
                os.kill(pid, 0)
                hits.append(pid)
            except ProcessLookupError:
                pass
            except PermissionError:
                hits.append(pid)
        print(hits, libc.ptrace(16, 1, 0, 0), ctypes.get_errno())
        '
    """)])
    assert attack.stdout == "True\n[] -1 1\n", attack
    assert box.exec("python -c 'print(7)'").stdout == "7\n"
    assert _status(template)["State"][0] in "SR"  # still there, still serving (not a zombie)


PYTEST_PROBE = textwrap.dedent(r'''
    import json, os, sys
    import _pytest.main
    import pytest

    def test_probe():
        print("PROBE" + json.dumps({
            "pytest": pytest.__file__, "version": pytest.__version__, "cached": _pytest.main.__cached__,
            "path": sys.path, "flags": list(sys.flags), "prefix": sys.pycache_prefix,
            "dont_write_bytecode": sys.dont_write_bytecode, "environ": dict(os.environ),
            "argv": sys.argv, "executable": sys.executable, "prefixes": [sys.prefix, sys.base_prefix]}))
''')


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_pytest_preloaded_by_the_runtimes_seed_is_the_pytest_a_cold_start_loads(backend):
    """The seed imported the runtime's pytest on the host, outside every sandbox: a warm pytest run
    must see the same pytest (its files, its bytecode from the runtime's cache), the same paths,
    flags and environment as a cold one; a command that is not pytest sees no pytest at all."""
    runtime = runtime_of("venv with pytest")
    with backend.open(SandboxRequest(runtime, None, "/app", Limits(wall_time_s=30.0))) as box:
        assert "the runtime's pytest" in box.isolation.features["warm_start"]
        box.write_file("test_probe.py", PYTEST_PROBE.encode())
        warm, cold = warm_and_cold(box, "python -m pytest -q -s -p no:cacheprovider test_probe.py", cwd="/app")
        assert warm.start == "warm" and warm.exit_code == cold.exit_code == 0, (warm, cold)
        got, want = (json.loads(r.stdout.split("PROBE", 1)[1].splitlines()[0]) for r in (warm, cold))
        assert got == want
        assert got["cached"].startswith(runtime.env["PYTHONPYCACHEPREFIX"]), got["cached"]
        plain = box.exec("python -c 'import sys; print(sorted(m for m in sys.modules if \"pytest\" in m))'")
        assert (plain.start, plain.stdout) == ("warm", "[]\n"), plain


def _seeds_of(zygote: int) -> int:
    """How many seeds *zygote* holds (its children named ``agentenv-sandbox-seed``)."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                count += ppid == zygote and f.read().startswith(b"agentenv-sandbox-seed\0")
        except (OSError, ValueError, IndexError):
            pass
    return count


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_runtimes_with_pytest_past_the_cap_fork_from_the_interpreters_plain_seed():
    """A runtime with pytest gets a seed that preloads it (~20 MB each, for the backend's life), up
    to MAX_RUNTIME_SEEDS of them; the runtimes after that share the interpreter's plain seed, and
    their pytest runs are still warm and give what a cold start gives."""
    from agentenv.builtin._nszygote import MAX_RUNTIME_SEEDS
    base = runtime_of("venv with pytest")
    # runtimes alike but for their bytecode cache's path (a copy of hard links): each is another
    # preload, as a runtime with other dependencies would be
    scratch = tempfile.mkdtemp(prefix="seed-cap-", dir=os.path.dirname(base.mounts[-1]))
    os.chmod(scratch, 0o755)
    b = NamespaceBackend(pool_size=0, warm=True)
    try:
        loaded = []
        for i in range(MAX_RUNTIME_SEEDS + 2):
            cache = os.path.join(scratch, str(i))
            shutil.copytree(base.env["PYTHONPYCACHEPREFIX"], cache, copy_function=os.link)
            runtime = RuntimeEnv(base.name, base.mounts + (cache,), {**base.env, "PYTHONPYCACHEPREFIX": cache})
            with b.open(SandboxRequest(runtime, None, "/app", Limits(wall_time_s=30.0))) as box:
                features = box.isolation.features["warm_start"]
                assert features.startswith("on") and "forked from the seed" in features, features
                loaded.append("the runtime's pytest" in features)
                if i >= MAX_RUNTIME_SEEDS - 1:
                    box.write_file("test_probe.py", PYTEST_PROBE.encode())
                    warm, cold = warm_and_cold(box, "python -m pytest -q -s -p no:cacheprovider test_probe.py",
                                               cwd="/app")
                    assert warm.start == "warm" and warm.exit_code == cold.exit_code == 0, (warm, cold)
                    got, want = (json.loads(r.stdout.split("PROBE", 1)[1].splitlines()[0]) for r in (warm, cold))
                    assert got == want
                    assert got["cached"].startswith(cache), got["cached"]
        assert loaded == [True] * MAX_RUNTIME_SEEDS + [False, False]
        # the runtimes' seeds and one plain seed, however many runtimes come after
        assert _seeds_of(b._zygote.proc.pid) == MAX_RUNTIME_SEEDS + 1
    finally:
        b.close()
        shutil.rmtree(scratch)


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_a_scored_pytest_episode_runs_warm_and_keeps_the_judge(monkeypatch):
    starts = []
    real_exec = namespace.NamespaceSandbox.exec

    def recording(self, command, **kw):
        result = real_exec(self, command, **kw)
        starts.append((str(command), result.start))
        return result

    monkeypatch.setattr(namespace.NamespaceSandbox, "exec", recording)
    task = os.path.join(REPO, "tasks", "examples", "fizzbuzz", "task.json")
    backend = NamespaceBackend(pool_size=1)
    env = CodingEnv(task, backend=backend)
    try:
        with open(os.path.join(REPO, "tasks", "examples", "fizzbuzz", "solution", "fizzbuzz.py")) as f:
            solution = f.read()
        env.reset()
        _, reward, *_, info = env.step(solution)
        assert reward == 1.0 and info["integrity"]["ok"], info
        scored = [s for c, s in starts if "agentenv_judge_" in c]
        assert scored == ["warm"], starts
        # the judge still catches a solution that patches the test runner from inside the run
        env.reset()
        cheat = solution + "\nimport _pytest.runner\n_pytest.runner.call_and_report = lambda *a, **k: None\n"
        _, reward, *_, info = env.step(cheat)
        assert reward == 0.0 and not info["integrity"]["ok"], info
    finally:
        env.close()
        backend.close()


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_a_scored_run_takes_the_judge_from_the_template_only_when_it_is_this_version(monkeypatch):
    task = os.path.join(REPO, "tasks", "examples", "fizzbuzz", "task.json")
    with open(os.path.join(REPO, "tasks", "examples", "fizzbuzz", "solution", "fizzbuzz.py")) as f:
        solution = f.read()
    written, source = reports.judge_files, reports.judge_source()

    def reward_of(backend, copy: bool, version: bytes = source):
        files = written if copy else lambda work, entry: {
            k: v for k, v in written(work, entry).items() if not k.endswith("/judge_core.py")}
        monkeypatch.setattr(reports, "judge_files", files)
        monkeypatch.setattr(reports, "judge_source", lambda: version)
        env = CodingEnv(task, backend=backend)
        try:
            env.reset()
            _, reward, *_, info = env.step(solution)
        finally:
            env.close()
        assert reward == 0.0 or info["integrity"]["ok"], info
        return reward

    warm, cold = NamespaceBackend(pool_size=1), NamespaceBackend(pool_size=1, warm=False)
    try:
        # no copy of the judge in the sandbox: only the template's can decide, and it does
        assert reward_of(warm, copy=False) == 1.0
        # a cold start compiles the copy, and has no judge without it
        assert reward_of(cold, copy=True) == 1.0 and reward_of(cold, copy=False) == 0.0
        # another version of the judge than the one the template executed: only the copy counts
        other = source + b"\n# another version\n"
        assert reward_of(warm, copy=False, version=other) == 0.0
        assert reward_of(warm, copy=True, version=other) == 1.0
    finally:
        warm.close()
        cold.close()


# A task test that looks into the judge of its own run (trusted code: the task's test file).
HELD_PROBE = textwrap.dedent('''
    import calc


    def test_the_runner_was_noted_once_by_the_seed(pytestconfig):
        entry = next(m for n, m in pytestconfig.pluginmanager.list_name_plugin() if str(n).startswith("agentenv_judge_"))
        judge = vars(entry)["_judge"]
        held, baseline = judge._HELD, judge._BASELINE[0]
        assert {"pytest", "_pytest.runner", "pluggy", "math", "unittest.case"} <= set(held), sorted(held)
        in_baseline = {id(e) for e in baseline}
        for name, (module, spaces, entries, _) in held.items():
            if name in ("_pytest.assertion.rewrite", "_pytest.python_api", "_pytest.approx", "unittest.case"):  # the judge wraps some of their
                continue  # functions as it starts: a run notes them again
            if name.startswith(("pytest", "_pytest", "pluggy")):
                assert all(id(e) in in_baseline for e in entries if e[0] not in judge._PATCHED_BY_PYTEST), name  # reused
            fresh = []
            judge._note_module(fresh, name, module)  # (what the judge notes of it now)
            now = {e[0]: e[:4] for e in fresh}
            changed = [e[0] for e in entries if e[0] not in judge._PATCHED_BY_PYTEST and now.get(e[0]) != e[:4]]
            assert not changed, changed
        assert calc.add(2, 3) == 5
''')


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_a_warm_scored_run_checks_the_runners_fingerprint_its_seed_took(tmp_path):
    """The judge notes every function and class of pytest and pluggy when a run starts (~3 ms);
    the runtime's seed notes them once, and a run forked from it only checks that nothing changed
    since (what a cold start notes, the same entries)."""
    (tmp_path / "ws" / "tests").mkdir(parents=True)
    (tmp_path / "ws" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "ws" / "tests" / "test_held.py").write_text(HELD_PROBE)
    task = {"task_id": "t.held", "description": "fix add",
            "environment_config": {"runtime": "python3.11", "dependencies": ["pytest==8.3.5"]},
            "workspace": {"root": "/app", "directory": "ws"},
            "execution_steps": [{"action": "overwrite_file", "path": "/app/calc.py", "content": "<model_generated_code>"},
                                {"action": "run_command", "command": "python -m pytest -q tests"}],
            "reward_logic": {"type": "composite", "rules": [
                {"metric": "test_pass_rate", "weight": 1.0, "aggregation": "last", "scoring": "step"}]}}
    (tmp_path / "task.json").write_text(json.dumps(task))
    backend = NamespaceBackend(pool_size=0)
    env = CodingEnv(str(tmp_path / "task.json"), backend=backend)
    try:
        env.reset()
        _, reward, *_, info = env.step("def add(a, b):\n    return a + b\n")
        assert reward == 1.0 and info["integrity"]["ok"], info
    finally:
        env.close()
        backend.close()


def test_the_seeds_notes_are_taken_again_where_the_runner_changed_before_the_run(monkeypatch):
    """What the seed noted is the baseline only where it is still what the run starts with: a
    function replaced, a name added to a module or a class member replaced since are noted again."""
    import _pytest.nodes
    import _pytest.pastebin
    import _pytest.python

    judge = type(sys)("judge_under_test")
    exec(compile(reports.judge_source(), "<judge>", "exec", dont_inherit=True), vars(judge))
    judge.hold_modules()

    def replaced(*args, **kwargs):
        pass

    def parametrize(self, *args, **kwargs):
        pass

    monkeypatch.setattr(_pytest.pastebin, "create_new_paste", replaced)
    monkeypatch.setattr(_pytest.nodes, "added_since", replaced, raising=False)
    monkeypatch.setattr(_pytest.python.Metafunc, "parametrize", parametrize)  # (collection is over)
    entries, *_ = judge._fingerprint()
    noted = {e[0]: e for e in entries}
    assert noted["_pytest.pastebin.create_new_paste"][3] is replaced and noted["_pytest.nodes.added_since"][3] is replaced
    assert noted["_pytest.python.Metafunc.parametrize"][4] is parametrize
    untouched = judge._HELD["_pytest.runner"][2]
    assert untouched and {id(e) for e in untouched} <= {id(e) for e in entries}


def test_rootless_and_rlimit_sandboxes_say_why_they_have_no_warm_interpreter(backend):
    request_ = request()
    rootless, backend._userns = backend._userns, {"uid": 1000, "gid": 1000}
    try:  # (CI runs as root: what a rootless backend decides, without a rootless backend)
        assert backend._warm_config(request_, True)["warm_off"].startswith("rootless mode")
    finally:
        backend._userns = rootless
    if not ROOTLESS:
        assert backend._warm_config(request_, False)["warm_off"].startswith("rlimit fallback")
        assert "warm" in backend._warm_config(request_, True)


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_by_default_runtimes_get_a_warm_interpreter_where_it_is_cheap():
    """A forked template costs no interpreter start: every runtime on agentenv's own Python gets
    one. An exec'd one costs a start, which only pytest's saved start-up repays."""
    b = NamespaceBackend(pool_size=0)
    try:
        with b.open(request(runtime=KINDS["exec"])) as box:  # an interpreter of its own, without pytest
            assert box.isolation.features["warm_start"].startswith("off: the runtime has no pytest"), \
                box.isolation.features
            assert box.exec("python -c pass").start.startswith("cold: off: ")
        with b.open(request()) as box:
            assert box.exec("python -c pass").start == "warm"
    finally:
        b.close()


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_the_humaneval_judge_runs_warm_when_asked_and_judges_alike(monkeypatch):
    starts = []
    real_exec = namespace.NamespaceSandbox.exec

    def recording(self, command, **kw):
        result = real_exec(self, command, **kw)
        starts.append(result.start)
        return result

    monkeypatch.setattr(namespace.NamespaceSandbox, "exec", recording)
    problems = os.path.join(REPO, "tasks", "humaneval_mini", "problems")
    task = os.path.join(problems, sorted(os.listdir(problems))[0])
    rewards = {}
    for warm in (True, False):
        backend = NamespaceBackend(pool_size=0, warm=warm)
        env = CodingEnv(task, backend=backend)
        try:
            reference = env.task.reference_files()
            solution = next(iter(reference.values()))
            solution = solution.decode() if isinstance(solution, bytes) else solution
            prompt = env.task.execution_steps[0]["content"].replace("<model_generated_code>", "")
            completion = solution[len(prompt):]
            for name, code in (("right", completion), ("wrong", "    return None\n"), ("loops", "    while True: pass\n")):
                env.reset()
                rewards[warm, name] = env.step(code)[1]
        finally:
            env.close()
            backend.close()
    assert rewards == {(True, "right"): 1.0, (True, "wrong"): 0.0, (True, "loops"): 0.0,
                       (False, "right"): 1.0, (False, "wrong"): 0.0, (False, "loops"): 0.0}, rewards
    assert starts[:3] == ["warm"] * 3 and all(s.startswith("cold") for s in starts[3:]), starts


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_a_planted_user_site_reaches_cold_starts_only_as_it_would_anyway(box):
    site = f"/tmp/.local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    assert box.exec(f"mkdir -p {site} && echo 'import os; os.environ[\"PLANTED\"] = \"yes\"' > {site}/x.pth").ok
    probe = "python {}-c 'import os; print(os.environ.get(\"PLANTED\"))'"
    with_site = box.exec(probe.format(""))
    if box.exec("exec " + probe.format("")).stdout == "None\n":  # a venv's cold start has no user site
        assert with_site.start == "warm" and with_site.stdout == "None\n", with_site
    else:
        assert with_site.start.startswith("cold: a user site") and with_site.stdout == "yes\n", with_site
    without = box.exec(probe.format("-s "))  # the template itself never read it
    assert without.start == "warm" and without.stdout == "None\n", without


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_an_unusable_template_leaves_the_sandbox_working_cold(backend):
    odd = RuntimeEnv("python3", RUNTIME.mounts, {**RUNTIME.env, "PYTHONPATH": "relative/dir"})
    with backend.open(request(runtime=odd)) as box:
        for _ in range(3):  # the template gave up, and stays: it is the keeper the sandbox lives by
            result = box.exec("python -c 'print(5)'")
            assert result.stdout == "5\n" and result.start.startswith("cold: the warm interpreter is unusable"), result
        # a workspace on the runtime's PYTHONPATH is fine: it is checked per command, never imported from
    ws = RuntimeEnv("python3", RUNTIME.mounts, {**RUNTIME.env, "PYTHONPATH": "/app"})
    with backend.open(request(runtime=ws)) as box:
        assert box.exec("python -c pass").start == "warm"
        box.write_file("json.py", b"print('workspace json')\n")
        shadowed = box.exec("python -c 'import json'", cwd="/tmp")
        assert shadowed.start.startswith("cold: json.py in /app") and shadowed.stdout == "workspace json\n"


# Counts, in the memory of a process (argv[1]: a pid, or "self"), each of the markers given in
# hex after it.
MEMORY_SCAN = textwrap.dedent(r'''
    import sys
    pid, marks = sys.argv[1], [bytes.fromhex(h) for h in sys.argv[2:]]
    counts = [0] * len(marks)
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            addresses, perms = line.split()[:2]
            if not perms.startswith("r") or "[vvar" in line or "[vsyscall" in line:
                continue
            start, end = (int(x, 16) for x in addresses.split("-"))
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            for i, mark in enumerate(marks):
                counts[i] += data.count(mark)
    print(counts)
''')


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
def test_a_forked_template_holds_nothing_of_another_sandbox(backend, tmp_path):
    """The seed forked before the zygote read any request: what the zygote knows of other
    sandboxes (their configuration, here an environment variable) is not in a command's memory,
    while its own sandbox's is."""
    other, own, never = (f"agentenv-mark-{os.urandom(6).hex()}" for _ in range(3))
    (tmp_path / "scan.py").write_text(MEMORY_SCAN)

    def runtime(mark):
        return RuntimeEnv("python3", RUNTIME.mounts, {**RUNTIME.env, "AGENTENV_TEST_MARK": mark})

    with backend.open(request(runtime=runtime(other))) as first:
        assert first.exec("python -c pass").start == "warm"
        with backend.open(request(runtime=runtime(own), workspace_dir=str(tmp_path))) as box:
            result = box.exec(["python", "/app/scan.py", "self"] + [m.encode().hex() for m in (other, own, never)])
    assert result.start == "warm", result
    got_other, got_own, got_never = json.loads(result.stdout)
    assert got_own > got_never and got_other == got_never, result.stdout
    # (the zygote itself holds the other sandbox's configuration: a template forked from it would too)
    zygote = subprocess.run([sys.executable, "-c", MEMORY_SCAN, str(backend._zygote.proc.pid), other.encode().hex()],
                            capture_output=True, text=True, check=True)
    assert json.loads(zygote.stdout)[0] > 0, zygote


def test_a_seed_is_only_ever_one_of_the_hosts_interpreters(tmp_path):
    """The seed runs as root outside every sandbox: a runtime's own file named like an interpreter
    (a dependency can replace a venv's ``python``) never becomes one; its template is exec'd, confined."""
    from agentenv.builtin._nszygote import ZYGOTE_ENV
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    planted = bin_dir / ("python%d.%d" % sys.version_info[:2])
    planted.write_text("#!/bin/sh\necho planted\n")
    planted.chmod(0o755)
    (bin_dir / "python").symlink_to(planted.name)
    seed, why = namespace.seed_interpreter(str(bin_dir / "python"), dict(ZYGOTE_ENV))
    assert seed is None and "not one of the host's" in why, why
    host = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    assert namespace.seed_interpreter(host, dict(ZYGOTE_ENV)) == (host, "")
    if ROOTLESS:
        return  # (no warm interpreter in rootless mode: the backend asks for no seed at all)
    b = NamespaceBackend(pool_size=0, warm=True)
    try:
        planted_runtime = RuntimeEnv("python3", (str(tmp_path / "venv"),), {"PATH": f"{bin_dir}:/usr/bin:/bin"})
        assert b._warm_config(request(runtime=planted_runtime), True)["warm"]["seed"] is None
        assert b._warm_config(request(), True)["warm"]["seed"] == os.path.realpath(os.path.join(PREFIX, "bin", "python"))
    finally:
        b.close()


@pytest.mark.skipif(ROOTLESS, reason="no warm interpreter in rootless mode")
@pytest.mark.parametrize(("tz", "end"), [(None, "closed"), ("UTC", "closed"), (None, "init died")],
                         ids=["forked", "exec", "forked-init-died"])
def test_a_template_held_up_by_its_runtime_dies_with_its_sandbox(backend, tmp_path, tz, end):
    """A runtime's ``.pth`` runs in the template's start-up (as in any cold start) and may never
    return; the template has no pid in the sandbox, so closing the sandbox must still end it, and
    so must its init's death where the template is the seed's fork (init that died of its closed
    connection before the zygote heard "close" left the zygote nothing to close, and the template
    lived on: a CI failure, stop 35). An exec'd template is the keeper, whose sandbox stays open
    until it is closed."""
    venv = tmp_path / "venv"  # its python: a link to the host's interpreter, which has a seed
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site_packages = next(venv.glob("lib/python3*/site-packages"))
    (site_packages / "hang.pth").write_text("import time; time.sleep(3600)\n")
    env = {"PATH": f"{venv}/bin:/usr/bin:/bin", **({"TZ": tz} if tz else {})}
    runtime = RuntimeEnv("python3", (str(venv), PREFIX), env)
    box = backend.open(request(runtime=runtime))
    mnt = os.readlink(f"/proc/{box.init_pid}/ns/mnt")
    assert wait_until(lambda: len(_templates(mnt)) == 1, timeout=60), "no template started"  # (a loaded machine)
    try:
        if end == "init died":
            os.kill(box.init_pid, signal.SIGKILL)
        else:
            box.close()
        assert wait_until(lambda: not _templates(mnt), timeout=60), _templates(mnt)
    finally:
        box.close()


def test_warm_commands_of_a_pooled_sandbox_run_at_normal_priority():
    # A pooled sandbox is set up at nice 10 and put back to 0 as it is handed out; its template, made
    # while that happened, kept nice 10 for the sandbox's life (2 in 10 here): every warm command,
    # scored runs included, ran at a lower priority than a cold one. The pauses hand out sandboxes
    # as their successors' set-up starts (the zygote refills once no open came for 10 ms).
    import time
    b = NamespaceBackend(pool_size=1, warm=True)
    command = "python -c 'import os; print(os.getpriority(os.PRIO_PROCESS, 0))'"
    found = []
    try:
        for pause in (0.0, 0.012, 0.015, 0.02, 0.03) * 6:
            with b.open(request()) as box:
                warm, cold = box.exec(command), box.exec("exec " + command)
                found.append((warm.start, warm.stdout.strip(), cold.stdout.strip()))
            time.sleep(pause)
    finally:
        b.close()
    assert any(start == "warm" for start, _, _ in found), found
    assert [f for f in found if f[1:] != ("0", "0")] == [], found


def test_a_template_starts_with_the_writable_entries_of_the_runtimes_path_left_out(tmp_path):
    # An evaluation sandbox's template starts as the host copies the agent's files in: a sitecustomize
    # package there, on the runtime's PYTHONPATH (every synthesized task's is /app), ran in the template
    # as `site` started, hence in every warm command, the scored pytest run too, and rewrote the judge
    # as it loaded: an unsolved task at 1.0 one try in three (red team, stop 40). `adopt` runs `site`
    # on the read-only entries alone and puts the others back after.
    (tmp_path / "sitecustomize").mkdir()
    (tmp_path / "sitecustomize" / "__init__.py").write_text("print('the planted sitecustomize ran')\n")
    (tmp_path / "site.py").write_text("print('the planted site ran')\n")
    program = ("import json, os, sys\n"
               f"sys.path.insert(0, {os.path.dirname(namespace.__file__)!r})\n"
               "import _nswarm\n"
               "sys.path.pop(0)\n"
               f"_nswarm.adopt(sys.executable, {{'PYTHONPATH': {str(tmp_path)!r}, 'PATH': os.environ['PATH']}})\n"
               "print(json.dumps({'path': sys.path[:2], 'customized': 'sitecustomize' in sys.modules}))\n")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "planted" not in done.stdout, done.stdout
    assert json.loads(done.stdout.splitlines()[-1]) == {"path": ["", str(tmp_path)], "customized": False}, done.stdout


def test_a_command_that_would_find_a_sitecustomize_on_its_path_starts_cold(backend):
    runtime = RuntimeEnv(RUNTIME.name, RUNTIME.mounts, {**RUNTIME.env, "PYTHONPATH": "/app/lib"})
    with backend.open(request(runtime=runtime)) as box:
        box.write_file("lib/sitecustomize.py", b"import sys\nsys.planted = True\n")
        done = box.exec(["python", "-c", "import sys; print(getattr(sys, 'planted', False))"])
        assert done.stdout.strip() == "True" and done.start.startswith("cold") and "would run at start-up" in done.start, done


def test_an_execd_templates_program_fits_one_message():
    """init sends a template it execs (a runtime's Python that no seed serves) its program, the warm
    module and the trusted judge, in one message of a SOCK_SEQPACKET pair, which a socket's default
    send buffer caps (212,992 bytes): the program grew past it (stop 41) and every sandbox of such a
    runtime died as it started. It goes compressed, and fits with room to spare."""
    import socket
    import zlib

    source = namespace.warm_source().encode()
    payload = zlib.compress(source, 9)
    assert len(payload) < 150_000, f"the exec'd template's program is {len(payload)} bytes compressed"
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with ours, theirs:
        ours.send(payload)
        assert zlib.decompress(theirs.recv(1 << 20)) == source
