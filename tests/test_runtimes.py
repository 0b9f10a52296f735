"""Runtimes: real interpreters, content-addressed dependency environments built once."""

import json
import os
import re
import subprocess
import sys

import pytest

import agentenv
from agentenv._spec import EnvironmentConfig

BUILD = '''
import json, logging, sys
logging.basicConfig(level=logging.INFO, format="%(message)s")
import agentenv
from agentenv._spec import EnvironmentConfig
env = agentenv.registry().runtime_for("python3").prepare(EnvironmentConfig("python3", ("pytest-json-report==1.5.0", "pytest==8.3.5")))
print(json.dumps(dict(env.fingerprint)))
'''


def test_concurrent_builds_of_one_environment_build_it_once(tmp_path):
    env = {**os.environ, "AGENTENV_CACHE": str(tmp_path)}
    procs = [subprocess.Popen([sys.executable, "-c", BUILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(3)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-1500:] for o in outs]
    fingerprints = [json.loads(o[0].strip().splitlines()[-1]) for o in outs]
    assert len({f["hash"] for f in fingerprints}) == 1
    builds = sum(o[1].count("building runtime") for o in outs)
    assert builds == 1, [o[1] for o in outs]
    envs = [d for d in os.listdir(tmp_path / "runtimes") if not d.endswith(".lock")]
    assert envs == [fingerprints[0]["hash"]]
    assert fingerprints[0]["packages"]["pytest"] == "8.3.5" and fingerprints[0]["dependencies"] == [
        "pytest-json-report==1.5.0", "pytest==8.3.5"]


def test_the_environment_holds_only_the_declared_dependencies():
    env = agentenv.registry().runtime_for("python3.11").prepare(EnvironmentConfig("python3.11", ("pytest==8.3.5",)))
    packages = set(env.fingerprint["packages"])
    assert "pytest" in packages and "gymnasium" not in packages and "hypothesis" not in packages
    assert env.fingerprint["python"].startswith("3.11.")


def test_another_python_version_resolves_when_installed():
    try:
        env = agentenv.registry().runtime_for("python3.12").prepare(EnvironmentConfig("python3.12"))
    except agentenv.RuntimeBuildError as exc:
        pytest.skip(f"no python3.12 on this host: {exc}")
    assert env.fingerprint["python"].startswith("3.12.")


def test_shell_runtime_has_bash_and_python():
    env = agentenv.registry().runtime_for("shell").prepare(EnvironmentConfig("shell", ("pytest==8.3.5",)))
    assert env.shell == "/bin/bash" and env.fingerprint["bash"].startswith("5.")


def test_a_runtime_carries_a_read_only_bytecode_cache_and_never_reads_a_planted_one():
    spec = agentenv.load_task(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                           "tasks", "examples", "fizzbuzz", "task.json"))
    runtime = agentenv.registry().runtime_for(spec.environment.runtime).prepare(spec.environment, agentenv.cache_dir())
    prefix = runtime.env["PYTHONPYCACHEPREFIX"]
    assert os.path.basename(os.path.dirname(prefix)) == runtime.fingerprint["hash"] and os.path.isdir(prefix)
    with agentenv.get_backend("namespace").open(agentenv.SandboxRequest(runtime)) as box:
        box.write_file("mod.py", b"VALUE = 'source'\n")
        # bytecode that says otherwise, where Python would look without a prefix
        bad = compile("VALUE = 'planted'\n", "/app/mod.py", "exec")
        import importlib.util
        import marshal
        import time
        header = importlib.util.MAGIC_NUMBER + b"\0" * 4 + int(time.time()).to_bytes(4, "little") + (17).to_bytes(4, "little")
        box.write_file("__pycache__/mod.cpython-311.pyc", header + marshal.dumps(bad))
        r = box.exec("cd /app && python -c \"import json, mod; print(json.__cached__); print(mod.VALUE)\"")
        cached, value = r.stdout.split()
        assert cached.startswith(prefix) and value == "source", r
        # the runtime's packages are in it too (pytest is most of a scored run's start-up)
        r = box.exec("python -c \"import os, _pytest.main as m; print(m.__cached__, os.path.isfile(m.__cached__))\"")
        cached, present = r.stdout.split()
        assert cached.startswith(prefix) and present == "True", r
        r = box.exec(f"touch {prefix}/x 2>&1 || echo refused")
        assert "refused" in r.stdout, "the bytecode cache is read-only in a sandbox"


def test_a_runtime_holds_its_pytest_plugins_as_pytest_rewrites_them():
    """pytest rewrites, on import, every module of a distribution that declares a pytest11 entry
    point. The runtime's bytecode cache holds them rewritten, where pytest's hook looks first, so a
    run (warm, as scored runs start) loads them instead of parsing and rewriting them again; the
    workspace's test file is still rewritten by the run (the cache is read-only and never has it)."""
    config = EnvironmentConfig("python3", ("pytest-json-report==1.5.0", "pytest==8.3.5"))
    runtime = agentenv.registry().runtime_for("python3").prepare(config, agentenv.cache_dir())
    with open(os.path.join(runtime.env["PYTHONPYCACHEPREFIX"], "agentenv-pytest-plugins.json")) as f:
        outcome = json.load(f)
    assert outcome["failed"] == [] and outcome["written"] >= 15, outcome  # pytest_jsonreport's and pytest_metadata's
    with agentenv.get_backend("namespace").open(agentenv.SandboxRequest(runtime)) as box:
        box.write_file("test_a.py", b"def test_x():\n    assert 1 + 1 == 2\n")
        r = box.exec("python -m pytest -q -p no:cacheprovider test_a.py", env={"PYTEST_DEBUG": "1"}, cwd="/app")
    assert r.exit_code == 0 and "1 passed" in r.stdout, r
    assert r.start == "warm", r.start
    cached = set(re.findall(r"found cached rewritten pyc for (\S+)", r.stderr))
    rewritten = set(re.findall(r"rewriting (?:PosixPath\()?'([^']+)'", r.stderr))
    plugins = {p for p in cached if "/site-packages/pytest_jsonreport/" in p or "/site-packages/pytest_metadata/" in p}
    assert any(p.endswith("/pytest_jsonreport/plugin.py") for p in plugins) and len(plugins) >= 15, sorted(cached)
    assert rewritten == {"/app/test_a.py"}, sorted(rewritten)
