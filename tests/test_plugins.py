"""Plugins: hook contracts, meta-tests, and a real third-party distribution in a fresh venv."""

import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

import agentenv
from agentenv import hookspecs
from agentenv._plugins import PluginManager, hook_names

TESTS = os.path.dirname(os.path.abspath(__file__))


def test_every_hook_is_documented():
    for name in hook_names():
        doc = inspect.getdoc(getattr(hookspecs, name)) or ""
        assert len(doc) > 80 and "registry." in doc and "Called once" in doc, name


def test_every_hook_is_implemented_by_a_builtin():
    pm = PluginManager(autoload=False)
    for name in hook_names():
        assert getattr(pm.pm.hook, name).get_hookimpls(), f"no built-in implements {name}"


class EveryHook:
    """One plugin object implementing every hook; test_each_hook_reaches_the_registry checks each."""

    @agentenv.hookimpl
    def agentenv_add_runtimes(self, registry):
        registry.add_runtime(type("R", (agentenv.Runtime,), {"pattern": "zz-rt", "prepare": lambda s, c, d=None: None})())

    @agentenv.hookimpl
    def agentenv_add_sandbox_backends(self, registry):
        registry.add_backend(type("B", (agentenv.SandboxBackend,), {
            "name": "zz-backend", "availability": classmethod(lambda c: agentenv.Availability(False, "test")),
            "open": lambda s, r: None}))

    @agentenv.hookimpl
    def agentenv_add_executors(self, registry):
        registry.add_executor("zz-executor", lambda work, workers, address: None, "test executor")

    @agentenv.hookimpl
    def agentenv_add_actions(self, registry):
        registry.add_action(type("A", (agentenv.ActionType,), {"name": "zz_action", "execute": lambda s, c, a: None})())

    @agentenv.hookimpl
    def agentenv_add_report_formats(self, registry):
        registry.add_report_format(type("F", (agentenv.ReportFormat,), {
            "name": "zz_format", "instrument": lambda s, c, x: agentenv.ScoredCommand(c),
            "parse": lambda s, c, r, b: agentenv.TestReport("zz_format")})())

    @agentenv.hookimpl
    def agentenv_add_metrics(self, registry):
        registry.add_metrics(type("M", (agentenv.MetricProvider,), {
            "metrics": (agentenv.MetricInfo("zz_metric"),), "measure": lambda s, r: {}})())

    @agentenv.hookimpl
    def agentenv_add_reward_models(self, registry):
        registry.add_reward_model(type("RM", (agentenv.RewardModel,), {"name": "zz_model", "score": lambda s, e, o: 0.5})())

    @agentenv.hookimpl
    def agentenv_add_task_suites(self, registry):
        registry.add_suite("/nonexistent/zz-suite")

    @agentenv.hookimpl
    def agentenv_add_exporters(self, registry):
        registry.add_exporter("zz-format", "test format", lambda group: None, lambda args: 0)

    @agentenv.hookimpl
    def agentenv_add_agents(self, registry):
        registry.add_agent("zz-agent", lambda arg, task, mode: None, "test agent")

    @agentenv.hookimpl
    def agentenv_add_cli_commands(self, registry):
        registry.add_command("zz-command", "test command", lambda p: None, lambda a: 0)


def test_each_hook_reaches_the_registry():
    reg = PluginManager(autoload=False, plugins=[EveryHook()]).registry
    checks = {
        "agentenv_add_runtimes": lambda: reg.runtime_for("zz-rt"),
        "agentenv_add_sandbox_backends": lambda: reg.backends["zz-backend"],
        "agentenv_add_executors": lambda: reg.executor("zz-executor"),
        "agentenv_add_actions": lambda: reg.actions["zz_action"],
        "agentenv_add_report_formats": lambda: reg.report_formats["zz_format"],
        "agentenv_add_metrics": lambda: reg.metrics["zz_metric"],
        "agentenv_add_reward_models": lambda: reg.reward_models["zz_model"],
        "agentenv_add_task_suites": lambda: "/nonexistent/zz-suite" in reg.suites or None,
        "agentenv_add_exporters": lambda: reg.exporters["zz-format"],
        "agentenv_add_agents": lambda: reg.agents["zz-agent"],
        "agentenv_add_cli_commands": lambda: reg.commands["zz-command"],
    }
    assert sorted(checks) == sorted(hook_names()), "a hook was added without a test here"
    for name, check in checks.items():
        assert check() is not None, name
    schema = json.dumps(agentenv.task_schema(reg))
    assert "zz_action" in schema and "zz_metric" in schema and "zz-rt" in schema and "zz_model" in schema


def test_builtins_register_what_the_docs_promise():
    reg = PluginManager(autoload=False).registry
    assert {"overwrite_file", "run_command", "read_file", "list_files", "apply_patch", "submit"} <= set(reg.actions)
    assert {"test_pass_rate", "tests_passed", "tests_failed", "tests_errors", "exit_code", "execution_time_ms",
            "peak_memory_mb", "timed_out", "oom_killed"} <= set(reg.metrics)
    assert "namespace" in reg.backends and "reference_similarity" in reg.reward_models
    assert {"list", "validate", "schema", "run", "bench", "demo"} <= set(reg.commands)
    assert {"reference", "noop"} <= set(reg.agents)
    assert reg.runtime_for("python3.11") and reg.runtime_for("shell")
    with pytest.raises(agentenv.UnknownNameError, match="did you mean 'python3"):
        reg.runtime_for("pyhton3")


def test_hooks_are_asked_in_the_order_hookspecs_declares_them():
    order = list(hook_names())
    assert order[0] == "agentenv_add_runtimes" and order[-1] == "agentenv_add_cli_commands"
    # report formats before metrics: a metric reads what a format parsed
    assert order.index("agentenv_add_report_formats") < order.index("agentenv_add_metrics")


def _broken_distribution(tmp_path, monkeypatch):
    dist = tmp_path / "broken_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[agentenv]\nbroken = broken_plugin_mod_that_does_not_exist\n")
    monkeypatch.syspath_prepend(str(tmp_path))


def test_a_broken_entry_point_is_skipped_and_listed_with_its_cause(tmp_path, monkeypatch, caplog):
    _broken_distribution(tmp_path, monkeypatch)
    pm = PluginManager(autoload=True)  # one bad distribution does not break every command
    assert "submit" in pm.registry.actions
    [broken] = pm.broken
    assert (broken.name, broken.distribution, broken.status) == ("broken", "broken-plugin", "broken")
    assert "ModuleNotFoundError" in broken.detail and "broken_plugin_mod_that_does_not_exist" in broken.detail
    assert any("AGENTENV_DISABLE_PLUGINS=broken" in r.getMessage() for r in caplog.records)
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGIN_AUTOLOAD", "1")
    assert not PluginManager().broken  # autoload off: the broken plugin is not imported


def test_agentenv_plugins_lists_a_broken_plugin_and_fails(tmp_path, monkeypatch):
    _broken_distribution(tmp_path, monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "agentenv", "plugins"], capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stderr
    line = next(l for l in out.stdout.splitlines() if l.startswith("broken "))
    assert "broken-plugin" in line and "broken" in line.split()[2] and "ModuleNotFoundError" in line
    assert "agentenv.builtin.actions" in out.stdout and "AGENTENV_DISABLE_PLUGINS" in out.stderr
    env["AGENTENV_DISABLE_PLUGINS"] = "broken"
    out = subprocess.run([sys.executable, "-m", "agentenv", "plugins", "--json"], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["broken"]["status"] == "disabled" and rows["agentenv.builtin.actions"]["status"] == "loaded"


def test_plugins_are_blocked_one_by_one(monkeypatch):
    monkeypatch.setenv("AGENTENV_DISABLE_PLUGINS", "agentenv.builtin.audit, eval")
    pm = PluginManager(autoload=False)
    assert "audit" not in pm.registry.commands and "eval" not in pm.registry.commands
    assert "run" in pm.registry.commands and "leaderboard" not in pm.registry.commands
    assert {p.name for p in pm.plugins if p.status == "disabled"} == {"agentenv.builtin.audit", "agentenv.builtin.eval"}


def test_duplicate_registration_is_refused():
    reg = PluginManager(autoload=False).registry
    from agentenv.builtin.actions import Submit
    with pytest.raises(agentenv.PluginError, match="already registered"):
        reg.add_action(Submit())


PLUGIN_PY = '''
"""A third-party plugin: a runtime, an action and a metric, using only agentenv's public API."""
import agentenv


class HostShell(agentenv.Runtime):
    pattern = r"hostsh"
    examples = ("hostsh",)

    def prepare(self, config, cache_dir):  # the documented signature: the environment passes its cache
        assert isinstance(cache_dir, str) and cache_dir, cache_dir
        return agentenv.RuntimeEnv("hostsh", (), {"PATH": "/usr/bin:/bin"}, {"runtime": "hostsh", "shell": "/bin/sh"})


class Tap(agentenv.ReportFormat):
    """A third-party report format: Test Anything Protocol lines on the command's stdout."""

    name = "tap"

    def instrument(self, command, ctx):
        return agentenv.ScoredCommand(command)

    def parse(self, scored, result, report):
        outcomes = {}
        for line in result.stdout.splitlines():
            ok = line.startswith("ok ")
            if ok or line.startswith("not ok "):
                outcomes[line.split(" - ", 1)[-1]] = "passed" if ok else "failed"
        if not outcomes:
            return agentenv.TestReport("tap", status="missing", error={"type": "NoReport", "message": "no TAP"})
        return agentenv.TestReport("tap", outcomes)


class AppendLine(agentenv.ActionType):
    name = "append_line"
    fields_schema = {"properties": {"path": {"type": "string"}, "line": {"type": "string"}}, "required": ["path", "line"]}

    def execute(self, ctx, action):
        path = ctx.sandbox.resolve(action["path"])
        try:
            old = ctx.sandbox.read_file(path)
        except FileNotFoundError:
            old = b""
        ctx.sandbox.write_file(path, old + action["line"].encode() + b"\\n")
        return agentenv.ActionOutcome("appended")


class StdoutLines(agentenv.MetricProvider):
    metrics = (agentenv.MetricInfo("stdout_lines", "higher", "lines printed", bound=3.0),)

    def measure(self, run):
        return {"stdout_lines": float(len(run.result.stdout.splitlines()))}


@agentenv.hookimpl
def agentenv_add_runtimes(registry):
    registry.add_runtime(HostShell())


@agentenv.hookimpl
def agentenv_add_actions(registry):
    registry.add_action(AppendLine())


@agentenv.hookimpl
def agentenv_add_report_formats(registry):
    registry.add_report_format(Tap())


@agentenv.hookimpl
def agentenv_add_metrics(registry):
    registry.add_metrics(StdoutLines())
'''

TASK = {
    "task_id": "thirdparty.lines", "environment_config": {"runtime": "hostsh"},
    "workspace": {"files": {"notes.txt": "one\n"}},
    "execution_steps": [
        {"action": "append_line", "path": "notes.txt", "line": "two"},
        {"action": "append_line", "path": "notes.txt", "line": "<model_generated_code>"},
        {"action": "run_command", "command": "cat notes.txt"},
        {"action": "run_command", "command": "printf 'ok 1 - a\\nok 2 - b\\nnot ok 3 - c\\n'", "report": {"format": "tap"}}],
    "reward_logic": {"type": "composite", "rules": [{"metric": "stdout_lines", "weight": 1.0, "aggregation": "first"},
                                                    {"metric": "test_pass_rate", "weight": 1.0}]},
}

USE = '''
import json, sys
import agentenv_lines  # the plugin first: it imports agentenv at its top, and nothing breaks
import gymnasium as gym
import agentenv
env = gym.make("agentenv/Task-v0", task=sys.argv[1], mode="agentic")
env.reset()
env.step({"action": "append_line", "path": "notes.txt", "line": "three"})
_, reward, terminated, _, info = env.step({"action": "submit"})
schema = agentenv.task_schema()
print(json.dumps({"reward": reward, "pass_rate": info["metrics"]["test_pass_rate"],
                  "outcomes": info["metrics"]["test_outcomes"],
                  "action_in_schema": "append_line" in json.dumps(schema),
                  "metric_in_schema": "stdout_lines" in json.dumps(schema)}))
'''


@pytest.fixture(scope="session")
def clean_venv(tmp_path_factory, repo):
    """A fresh venv with agentenv installed from a wheel built from this checkout."""
    root = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(root / "dist"), repo],
                   check=True, capture_output=True)
    wheel = next((root / "dist").glob("agentenv-*.whl"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    out = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return py


@pytest.mark.slow
def test_wheel_in_a_clean_venv_finds_schemas_suites_and_builtins(clean_venv, tmp_path):
    cwd = str(tmp_path)  # away from the checkout: only the installed wheel is importable
    out = subprocess.run([clean_venv, "-c", textwrap.dedent('''
        import json, os, gymnasium as gym, agentenv
        from agentenv import bundled_dir
        print(json.dumps({"file": agentenv.__file__, "suites": sorted(agentenv.installed_suites()),
                          "schema": os.path.exists(os.path.join(bundled_dir("schemas"), "task.schema.json")),
                          "env": "agentenv/examples.fizzbuzz-v0" in gym.registry,
                          "actions": sorted(agentenv.registry().actions)}))''')],
                         capture_output=True, text=True, cwd=cwd)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout)
    assert "site-packages" in info["file"]
    assert {"examples", "pybugs"} <= set(info["suites"]) and info["schema"] and info["env"]
    assert "apply_patch" in info["actions"]
    run = subprocess.run([os.path.join(os.path.dirname(clean_venv), "agentenv"), "run", "examples.fizzbuzz",
                          "--agent", "reference"], capture_output=True, text=True, cwd=cwd)
    assert run.returncode == 0 and "reward=1.000" in run.stdout, run.stdout[-2000:] + run.stderr[-2000:]


@pytest.mark.slow
def test_a_third_party_plugin_distribution_extends_the_env_and_the_schema(clean_venv, tmp_path):
    pkg = tmp_path / "agentenv-lines"
    (pkg / "agentenv_lines").mkdir(parents=True)
    (pkg / "agentenv_lines" / "__init__.py").write_text(PLUGIN_PY)
    (pkg / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "agentenv-lines"
        version = "1.0"
        dependencies = ["agentenv"]
        [project.entry-points.agentenv]
        lines = "agentenv_lines"
        [tool.setuptools]
        packages = ["agentenv_lines"]
    '''))
    out = subprocess.run([clean_venv, "-m", "pip", "install", "-q", "--no-deps", str(pkg)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    task = tmp_path / "task.json"
    task.write_text(json.dumps(TASK))
    out = subprocess.run([clean_venv, "-c", USE, str(task)], capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # the evaluation starts from the agent's workspace (one, three), appends "two" and skips the
    # step that takes the model's code (agentic mode): 3 lines (the first run); the plugin's TAP
    # format reads the second run: 2 of 3 tests pass.
    assert result == {"reward": pytest.approx(1.0 + 2 / 3), "pass_rate": pytest.approx(2 / 3),
                      "outcomes": {"a": "passed", "b": "passed", "c": "failed"},
                      "action_in_schema": True, "metric_in_schema": True}
    validate = subprocess.run([os.path.join(os.path.dirname(clean_venv), "agentenv"), "validate", str(task)],
                              capture_output=True, text=True)
    assert validate.returncode == 0, validate.stderr


TEMPLATE = os.path.join(os.path.dirname(TESTS), "plugins", "agentenv-plugin-template")


@pytest.mark.slow
def test_the_plugin_template_builds_installs_and_passes_its_own_tests(clean_venv, tmp_path):
    """What a plugin author starts from: render the template (as cookiecutter would), install it in a
    fresh venv next to agentenv's wheel, and run the tests it ships."""
    out = subprocess.run([sys.executable, os.path.join(TEMPLATE, "render.py"), str(tmp_path),
                          "project_name=agentenv-greeter", "module=agentenv_greeter", "plugin_name=greeter"],
                         capture_output=True, text=True, check=True)
    project = out.stdout.strip()
    assert project == str(tmp_path / "agentenv-greeter")
    assert not [p for p in map(str, tmp_path.rglob("*")) if "cookiecutter" in p]  # every name rendered
    pip = [clean_venv, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    install = subprocess.run([*pip, f"{project}[test]"], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-3000:]
    try:
        agentenv_cli = os.path.join(os.path.dirname(clean_venv), "agentenv")
        listed = json.loads(subprocess.run([agentenv_cli, "plugins", "--json"], capture_output=True, text=True,
                                           check=True).stdout)
        assert {"name": "greeter", "distribution": "agentenv-greeter", "status": "loaded", "detail": ""} in listed
        run = subprocess.run([clean_venv, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], cwd=project,
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0 and "6 passed" in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
    finally:  # the venv is shared with the other tests of this session
        subprocess.run([clean_venv, "-m", "pip", "uninstall", "-y", "-q", "agentenv-greeter"], check=True)
