"""The docker backend for real: containers, limits, warm pool, faults, images, parity with namespace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import gymnasium as gym
import pytest

import agentenv
from agentenv import Limits, SandboxError, SandboxRequest

RUNTIME = "python3.11"  # the base image the tests need (conftest checks it exists)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
FIZZBUZZ = "agentenv/examples.fizzbuzz-v0"


def _request(tmp_path, **limits) -> SandboxRequest:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "hello.txt").write_text("hi\n")
    (ws / "pkg").mkdir(exist_ok=True)
    (ws / "pkg" / "mod.py").write_text("X = 1\n")
    spec = agentenv.load_task(os.path.join(REPO, "tasks/examples/fizzbuzz/task.json"))
    runtime = agentenv.registry().runtime_for(spec.environment.runtime).prepare(spec.environment)
    return SandboxRequest(runtime, str(ws), "/app",
                          Limits(**{"wall_time_s": 20, "memory_mb": 256, "max_processes": 64, **limits}),
                          {"agentenv.task": "test"})


def test_daemon_unreachable_is_a_clear_error_at_make(tmp_path):
    code = textwrap.dedent(f"""
        import gymnasium as gym, agentenv
        try:
            gym.make({FIZZBUZZ!r}, backend="docker")
        except agentenv.BackendUnavailable as exc:
            print("ERROR:", exc)
        else:
            print("NO ERROR")
    """)
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "ERROR: sandbox backend 'docker' cannot run here: cannot reach the Docker daemon" in out.stdout, out
    assert "DOCKER_HOST" in out.stdout and "no-daemon.sock" in out.stdout



def test_importing_agentenv_leaves_the_docker_sdk_until_a_docker_sandbox_needs_it():
    code = textwrap.dedent("""
        import sys, agentenv
        print("registered:", "docker" in agentenv.registry().backends, "sdk:", "docker" in sys.modules)
        from agentenv_docker import backend
        backend.docker.errors.NotFound
        print("used:", "docker" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["registered:", "True", "sdk:", "False", "used:", "True"], out

def test_commands_files_and_confinement(backend, tmp_path):
    with backend.open(_request(tmp_path)) as box:
        assert box.isolation.backend == "docker"
        r = box.exec("id -u; pwd; cat hello.txt; python -c 'import pytest; print(pytest.__version__)'")
        assert r.ok and r.stdout.split() == ["65534", "/app", "hi", "8.3.5"], r
        assert box.exec(["cat"], stdin=b"piped").stdout == "piped"
        assert box.exec("exit 3").exit_code == 3
        assert box.list_files() == ["hello.txt", "pkg/mod.py"]
        box.write_file("new/deep/f.txt", b"data")
        assert box.read_file("/app/new/deep/f.txt") == b"data"
        box.remove("new")
        assert "new/deep/f.txt" not in box.list_files()
        with pytest.raises(FileNotFoundError):
            box.read_file("missing.txt")
        # a planted symlink is never followed: not on read, and a write replaces the link
        assert box.exec("ln -s /etc/passwd link").ok
        with pytest.raises(OSError):
            box.read_file("link")
        box.write_file("link", b"mine")
        assert box.exec("test -L link || echo regular; cat /etc/passwd | head -1").stdout.startswith("regular\nroot:")
        status = box.exec("grep -E '^(CapEff|NoNewPrivs)' /proc/self/status").stdout.split()
        assert status == ["CapEff:", "0000000000000000", "NoNewPrivs:", "1"]
        assert box.exec("touch /usr/x").exit_code != 0  # read-only root
        assert box.exec("touch /tmp/x && touch /app/y").ok
        ifaces = box.exec("tail -n +3 /proc/net/dev | cut -d: -f1").stdout.split()
        assert ifaces == ["lo"]
        mem = box.exec("cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max")
        assert int(mem.stdout) == 256 << 20
        forks = box.exec("for i in $(seq 200); do sleep 5 & done; wait", timeout_s=10)
        assert "fork" in forks.stderr.lower() or "resource" in forks.stderr.lower(), forks


def test_wall_time_kills_the_command_and_the_sandbox_stays_usable(backend, tmp_path):
    with backend.open(_request(tmp_path)) as box:
        r = box.exec("sleep 30 & sleep 30", timeout_s=1)
        assert r.timed_out and not r.ok
        procs = box.exec("cat /proc/[0-9]*/comm").stdout.split()
        assert "sleep" not in procs and "python3" in procs  # the helper survives, the command's tree is gone
        assert box.exec("echo still here").stdout == "still here\n"


def test_the_helper_is_out_of_the_commands_reach(backend, tmp_path):
    """The helper (pid 1) shares the commands' uid: a command opened /proc/1/fd/1, the stream its
    replies go out on, and wrote a reply of its own first (a wrong answer scored 1.0, a slow one
    reported 300 ms), and ``kill -INT 1`` ended it: a masked episode (red team, stop 30)."""
    with backend.open(_request(tmp_path)) as box:
        r = box.exec("ls /proc/1/fd >/dev/null 2>&1 && echo fd; head -c1 /proc/1/maps >/dev/null 2>&1 && echo maps; "
                     "sh -c ': > /proc/1/fd/1' 2>/dev/null && echo stream; for s in INT TERM HUP USR1; do kill -$s 1; done; "
                     "sleep 0.2; echo done")
        assert r.stdout == "done\n", r
        limit = box.exec("python3 -c 'import resource; resource.prlimit(1, resource.RLIMIT_CPU, (1, 1))'")
        assert "PermissionError" in limit.stderr, limit  # (a CPU limit of 1 s got it killed)
        assert box.exec("renice -n 19 -p 1").exit_code != 0 and box.exec("id -u; id -G").stdout == "65534\n65534\n"
        assert box.exec("echo alive").stdout == "alive\n"


def test_the_cpu_time_limit_is_each_commands_not_the_helpers(backend, tmp_path):
    """``cpu_time_s`` bounds each command, as on the namespace backend; the helper (pid 1) has no CPU
    limit. As a container-wide ulimit it bound the helper too, and a command that kept it reading a
    flood of output had it killed by that limit after ``cpu_time_s`` + 1 s of its own CPU: the
    episode masked (red team, stop 36)."""
    with backend.open(_request(tmp_path, cpu_time_s=2)) as box:
        limits = box.exec("grep 'Max cpu time' /proc/1/limits; ulimit -t")
        assert limits.ok and limits.stdout.split() == ["Max", "cpu", "time", "unlimited", "unlimited", "seconds", "3"], limits
        spin = box.exec("python3 -c 'while True: pass'", timeout_s=15)
        assert not spin.ok and not spin.timed_out and spin.cpu_ms >= 2500, spin  # (killed by its own limit)
        assert box.exec("echo alive").stdout == "alive\n"


def test_a_container_its_commands_ran_out_of_memory_says_it_was_their_doing(backend, engine, tmp_path):
    """As on the namespace backend: files in the container's tmpfs are memory under its limit, and
    filling them got the helper OOM-killed; the episode was masked (an infrastructure failure) where
    it is the agent's 0, after a command of its own was OOM-killed too (Docker's OOMKilled covers the
    container's whole life: a first command OOM-killed on purpose made the helper's death look like
    the machinery's, red team, stop 31). A container killed from outside is still the machinery's,
    even after a command of its own was OOM-killed."""
    fill = "for d in /tmp /app /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M count=200 2>/dev/null; done; echo done"
    for first in ("true", "python3 -c \"x = bytearray(400 << 20); x[::4096] = b'y' * len(x[::4096])\""):
        with backend.open(_request(tmp_path, memory_mb=64, max_file_size_mb=1024)) as box:
            assert box.exec(first).oom_killed == (first != "true")
            try:
                result = box.exec(fill)
            except SandboxError as exc:
                assert exc.agents_doing and "out of memory" in exc.agents_doing, (first, exc)
            else:  # (where the OOM killer took the command instead, the container lives and the command failed)
                assert not result.ok and box.alive, result
    with backend.open(_request(tmp_path, memory_mb=64)) as box:
        assert box.exec("python3 -c \"x = bytearray(400 << 20); x[::4096] = b'y' * len(x[::4096])\"").oom_killed
        threading.Timer(0.5, engine.containers.get(box.container_id).kill).start()
        with pytest.raises(SandboxError) as died:
            box.exec("sleep 20")
        assert died.value.agents_doing is None


def test_where_the_containers_cgroup_is_gone_the_engines_events_tell_its_oom_from_a_kill(backend, engine, tmp_path):
    """Where the engine has removed a dead container's cgroup before this host read its OOM count, its
    events decide: the helper OOM-killed is the agent's doing, a kill through the engine the
    machinery's, even after a command OOM-killed before (the engine stamps that command's OOM event
    as it hears of it, which can be after the helper's reply: such a late event made a container
    killed from outside look OOM-killed, CI of stop 35)."""
    hog = "python3 -c \"x = bytearray(400 << 20); x[::4096] = b'y' * len(x[::4096])\""
    fill = "for d in /tmp /app /dev/shm; do dd if=/dev/zero of=$d/fill bs=1M count=200 2>/dev/null; done; echo done"

    def without_its_cgroup(box):
        cgroups = box._box.cgroups
        os.close(cgroups.oom_fd)
        cgroups.oom_fd = None
        assert cgroups.oom_kills() is None
        return box

    with without_its_cgroup(backend.open(_request(tmp_path, memory_mb=64, max_file_size_mb=1024))) as box:
        assert box.exec(hog).oom_killed
        try:
            result = box.exec(fill)
        except SandboxError as exc:
            assert exc.agents_doing and "out of memory" in exc.agents_doing, exc
        else:
            assert not result.ok and box.alive, result
    for _ in range(3):
        with without_its_cgroup(backend.open(_request(tmp_path, memory_mb=64))) as box:
            assert box.exec(hog).oom_killed
            engine.containers.get(box.container_id).kill()
            with pytest.raises(SandboxError) as died:
                box.exec("echo alive")
            assert died.value.agents_doing is None, died.value


def test_the_image_digest_is_recorded_and_the_layer_reused(backend, engine, tmp_path):
    from agentenv_docker import images

    req = _request(tmp_path)
    image = backend.image_for(req)
    assert image.id == images.deps_image(engine, RUNTIME, req.runtime.fingerprint["dependencies"]).id
    assert images.packages_of(engine, image)["packages"]["pytest"] == "8.3.5"
    env = gym.make(FIZZBUZZ, backend="docker")
    try:
        _, info = env.reset()
        features = info["isolation"]["features"]
        assert features["image_id"] == image.id and features["image_id"].startswith("sha256:")
        assert features["image"].startswith("agentenv/deps:")
    finally:
        env.close()
    listed = subprocess.run([sys.executable, "-m", "agentenv", "images", "list", "--json"],
                            capture_output=True, text=True, timeout=120)
    rows = json.loads(listed.stdout)
    assert any(features["image"] in r["tags"] and "pytest==8.3.5" in r["dependencies"] for r in rows), rows
    assert any(r["kind"] == "base" and "agentenv/base:python3.11" in r["tags"] for r in rows)


def test_warm_pool_hands_out_prestarted_containers(engine, tmp_path):
    from agentenv_docker import DockerBackend

    b = DockerBackend(pool_size=2)
    try:
        req = _request(tmp_path)
        b.open(req).close()  # first use of this configuration: cold, then the pool fills
        assert b.wait_warm(120)
        seen = set()
        for _ in range(4):
            box = b.open(req)
            assert box.isolation.features["pool"] == "warm"
            assert box.list_files() == ["hello.txt", "pkg/mod.py"]  # pristine, never a used container
            box.write_file("dirty.txt", b"x")
            seen.add(box.container_id)
            box.close()
            assert b.wait_warm(120)
        assert len(seen) == 4  # recycled, not returned
    finally:
        b.close()
    left = engine.containers.list(all=True, filters={"id": list(seen)}) if seen else []
    assert [c.name for c in left if c.id in seen] == []


def test_container_killed_mid_episode_is_masked_and_the_env_recovers(engine):
    env = gym.make(FIZZBUZZ, backend="docker", mode="agentic")
    try:
        env.reset()
        engine.containers.get(env.unwrapped._sandbox.container_id).kill()
        _, reward, terminated, _, info = env.step({"action": "run_command", "command": "python -m pytest -q"})
        assert info["reward_masked"] is True and reward == 0.0 and terminated
        assert "died" in info["infra_error"]
        _, info = env.reset()
        assert info["reward_masked"] is False
        obs, _, _, _, info = env.step({"action": "run_command", "command": "echo recovered"})
        assert "recovered" in obs["output"] and info["reward_masked"] is False
    finally:
        env.close()


def test_gc_removes_containers_of_dead_owners(engine, tmp_path):
    code = textwrap.dedent(f"""
        import os, agentenv
        from agentenv_docker import DockerBackend
        import sys; sys.path.insert(0, {os.path.dirname(__file__)!r})
        from test_docker_backend import _request
        import pathlib
        box = DockerBackend(pool_size=0).open(_request(pathlib.Path({str(tmp_path)!r})))
        print(box.container_name, flush=True)
        os._exit(0)  # dies without closing anything
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    name = out.stdout.strip().splitlines()[-1]
    assert engine.containers.get(name).labels["agentenv"] == "1"
    gc = subprocess.run([sys.executable, "-m", "agentenv", "sandbox", "gc"], capture_output=True, text=True,
                        timeout=120)
    assert gc.returncode == 0 and f"removed {name}" in gc.stdout, gc
    assert not engine.containers.list(all=True, filters={"name": name})


def _parity(task_ids):
    differences = []
    for task_id in task_ids:
        for agent_name in ("reference", "noop"):
            rewards = {}
            for backend in ("namespace", "docker"):
                env = gym.make(f"agentenv/{task_id}-v0", backend=backend, mode="agentic")
                try:
                    agent = agentenv.make_agent(agent_name, env.unwrapped.task, "agentic")
                    result = agentenv.run_episode(env, agent)
                finally:
                    env.close()
                assert not result.reward_masked, (task_id, backend, result.infra_error)
                rewards[backend] = (round(result.reward, 6), result.success)
            if rewards["namespace"] != rewards["docker"]:
                differences.append((task_id, agent_name, rewards))
    return differences


def test_same_rewards_as_namespace_on_an_example(engine):
    assert _parity(["examples.fizzbuzz"]) == []


@pytest.mark.slow
def test_same_rewards_as_namespace_on_the_suites(engine):
    ids = [t.task_id for t in agentenv.installed_suites()["examples"].load()]
    assert len(ids) >= 5
    ids += ["pybugs.lru_cache_eviction", "pybugs.csv_quoted_fields", "pybugs.shell_rotate_logs",
            "pybugs.dotenv_parser"]
    assert _parity(ids) == []


def test_the_docker_backend_keeps_the_sandbox_contract(backend, tmp_path):
    """The same contract the namespace backend and a stranger's backend keep (agentenv.testing)."""
    from agentenv.testing import check_backend

    runtime = _request(tmp_path).runtime
    checked = check_backend(backend, runtime)
    assert {"lifecycle", "workspace", "files", "exec", "timeout", "isolation_between_sandboxes", "usage"} <= set(checked)
    with backend.open(_request(tmp_path)) as box:  # (the engine is this host's: its cgroups are readable here)
        # so the usage clause checked that peak_memory_mb counts files kept in the container's tmpfs
        assert "memory cgroup" in box.isolation.features["peak_memory"], box.isolation.features
