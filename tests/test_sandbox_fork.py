"""Forking a live namespace sandbox and a CodingEnv episode (issue 17): the workspace's changes are
branched, the task's files shared, processes and /tmp not carried; the branches diverge."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

import agentenv
from agentenv import CodingEnv
from agentenv._sandbox import Limits, RuntimeEnv, SandboxRequest
from agentenv._workspace import materialize
from agentenv.builtin.namespace import NamespaceBackend

_AVAILABLE = NamespaceBackend.availability()
pytestmark = pytest.mark.skipif(not _AVAILABLE.ok, reason=f"namespace backend unavailable: {_AVAILABLE.reason}")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIX = sys.base_prefix
RUNTIME = RuntimeEnv("python3", tuple(p for p in (PREFIX,) if not p.startswith("/usr")),
                     {"PATH": f"{PREFIX}/bin:/usr/local/bin:/usr/bin:/bin"})
TASK_FILES = {"keep.txt": b"task file\n", "gone.txt": b"deleted later\n", "dir/inner.txt": b"in a dir\n",
              "pkg/mod.py": b"X = 1\n"}


@pytest.fixture(scope="module")
def backend():
    b = NamespaceBackend(pool_size=1)
    yield b
    b.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return materialize(TASK_FILES, str(tmp_path_factory.mktemp("cache")))


def view(box) -> dict:
    """What a command sees of the workspace: every path with its kind, mode and content."""
    out = box.exec("cd /app && find . -mindepth 1 | sort | while read p; do "
                   "if [ -L \"$p\" ]; then echo \"$p link $(readlink \"$p\")\"; "
                   "elif [ -d \"$p\" ]; then echo \"$p dir $(stat -c %a \"$p\")\"; "
                   "elif [ -p \"$p\" ]; then echo \"$p fifo\"; "
                   "else echo \"$p file $(stat -c %a \"$p\") $(md5sum < \"$p\" | cut -c1-8)\"; fi; done")
    assert out.ok, out
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


def test_a_fork_branches_the_workspace_and_the_branches_diverge(backend, pristine):
    with backend.open(SandboxRequest(RUNTIME, pristine, "/app", Limits(wall_time_s=30.0))) as parent:
        parent.write_file("new/deep/file.bin", os.urandom(300_000))
        parent.write_file("keep.txt", b"changed\n", mode=0o600)
        parent.remove("gone.txt")
        parent.remove("dir")
        parent.write_file("dir", b"a file where a directory was\n")
        setup = parent.exec("cd /app && ln -s keep.txt link && mkfifo pipe && mkdir -p pkg/sub && "
                            "rm -r pkg && mkdir pkg && echo Y=2 > pkg/other.py && chmod 750 new && "
                            "echo scratch > /tmp/scratch && (sleep 1000 &) ; echo ok")
        assert setup.stdout == "ok\n", setup
        before = view(parent)
        assert "./gone.txt" not in before and "./pkg/mod.py" not in before  # (a replaced dir is opaque)

        child = parent.fork()
        try:
            assert "fork" in parent.capabilities and child.alive
            assert view(child) == before
            assert child.read_file("new/deep/file.bin") == parent.read_file("new/deep/file.bin")
            assert child.exec("cat /tmp/scratch").exit_code != 0  # /tmp is not carried over
            assert child.exec("pgrep -c sleep || true").stdout.strip() == "0"  # nor processes
            assert child.exec("cat pkg/other.py; cat keep.txt", cwd="/app").stdout == "Y=2\nchanged\n"

            child.write_file("keep.txt", b"child\n")
            child.remove("new")
            parent.write_file("only-parent.txt", b"p\n")
            assert parent.read_file("keep.txt") == b"changed\n" and child.read_file("keep.txt") == b"child\n"
            assert "new/deep/file.bin" in parent.list_files() and "new/deep/file.bin" not in child.list_files()
            assert "only-parent.txt" not in child.list_files()
            after = view(parent)
            assert after == {**before, "./only-parent.txt": after["./only-parent.txt"]}

            grandchild = child.fork()  # a branch of a branch starts from the branch
            with grandchild:
                assert grandchild.read_file("keep.txt") == b"child\n"
        finally:
            child.close()
        assert parent.exec("cat keep.txt", cwd="/app").stdout == "changed\n"


def test_a_fork_that_fails_leaves_no_sandbox_behind(backend, pristine):
    # the new sandbox opens while the parent's layer is read: a snapshot that fails must close it
    with backend.open(SandboxRequest(RUNTIME, pristine, "/app", Limits(wall_time_s=30.0))) as parent:
        assert parent.exec("echo changed > keep.txt", cwd="/app").ok
        held = backend.open_count()
        os.kill(parent.init_pid, signal.SIGKILL)  # (its snapshot request finds it dead)
        with pytest.raises(agentenv.SandboxError):
            parent.fork()
        deadline = time.monotonic() + 10
        while backend.open_count() != held - 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert backend.open_count() == held - 1  # (the parent is gone too)


def test_what_the_agent_made_unreadable_is_forked_with_its_mode(backend, pristine):
    """``chmod 000`` on a folder of the agent's made the fork raise PermissionError (init could not
    read it), which a trainer branching the episode did not expect (red team, stop 30)."""
    with backend.open(SandboxRequest(RUNTIME, pristine, "/app", Limits(wall_time_s=30.0))) as parent:
        made = parent.exec("mkdir -p secret/deep lookonly && echo hidden > secret/deep/x && echo no > shut && "
                           "echo in > lookonly/f && chmod 000 secret/deep/x shut && chmod 000 secret/deep secret && "
                           "chmod 400 lookonly && echo ok", cwd="/app")
        assert made.stdout == "ok\n", made
        before = parent.exec("stat -c '%n %a' secret shut lookonly", cwd="/app").stdout
        with parent.fork() as child:  # (a folder that can be read but not searched too)
            assert child.exec("stat -c '%n %a' secret shut lookonly", cwd="/app").stdout == before == \
                "secret 0\nshut 0\nlookonly 400\n"
            opened = child.exec("chmod -R u+rwx secret && cat secret/deep/x", cwd="/app")
            assert opened.stdout == "hidden\n", opened
        assert parent.exec("stat -c '%n %a' secret shut lookonly", cwd="/app").stdout == before


def test_a_sandbox_without_the_capability_says_so():
    class Plain(agentenv.Sandbox):
        root, alive = "/app", True
        exec = read_file = write_file = remove = list_files = close = lambda *a, **k: None

    with pytest.raises(agentenv.SandboxError, match="cannot fork"):
        Plain().fork()


def test_an_episode_forks_and_both_branches_go_on(backend):
    task = os.path.join(REPO, "tasks", "examples", "fizzbuzz", "task.json")
    with open(os.path.join(REPO, "tasks", "examples", "fizzbuzz", "solution", "fizzbuzz.py")) as f:
        solution = f.read()
    env = CodingEnv(task, backend=backend, mode="agentic")
    env.reset(seed=1)
    env.step({"action": "run_command", "command": "echo halfway > notes.txt"})
    branch = env.fork()
    try:
        assert branch._round == env._round == 1 and branch._sandbox.read_file("notes.txt") == b"halfway\n"
        fixed = branch.step({"action": "overwrite_file", "path": "fizzbuzz.py", "content": solution})[0]
        assert "fizzbuzz.py" in fixed["output"]
        _, good, terminated, _, info = branch.step({"action": "submit"})
        assert terminated and good == 1.0, info
        obs, bad, terminated, _, _ = env.step({"action": "submit"})  # the parent still has the bug
        assert terminated and bad == 0.0
    finally:
        branch.close()
        env.close()
    with pytest.raises(Exception, match="reset"):
        env.fork()


def test_a_workspace_larger_than_a_fork_copies_is_refused_and_the_episode_goes_on(backend, pristine):
    """The snapshot is held in the sandbox's server, whose memory the workspace's files share: 138 MB
    written in a 512 MB sandbox had the OOM killer take the server mid-fork, and the episode's next
    step found it dead and was masked (red team, stop 33). A fork copies at most a quarter of the
    memory, as the evaluation does; past that it raises and the sandbox lives."""
    with backend.open(SandboxRequest(RUNTIME, pristine, "/app", Limits(wall_time_s=30.0, memory_mb=512,
                                                                          max_file_size_mb=128))) as parent:
        assert parent.exec("head -c 100M /dev/zero > a && head -c 40M /dev/zero > b", cwd="/app").ok
        with pytest.raises(OSError, match="more than 128 MiB, more than a fork copies") as refused:
            parent.fork()
        assert "Errno 27] [Errno" not in str(refused.value)
        assert parent.alive and parent.exec("rm b && echo ok", cwd="/app").stdout == "ok\n"
        with parent.fork() as child:  # (100 MB fits)
            assert child.exec("stat -c %s a", cwd="/app").stdout == f"{100 << 20}\n"


def test_a_tree_nested_deeper_than_a_fork_copies_is_refused_by_name_and_the_sandbox_lives(backend, pristine):
    """1,200 nested folders, or 20 of 250-character names, raised RecursionError and ENAMETOOLONG out of
    the fork's walk (red team, stop 37): the fork now says what it does not copy, as for a workspace
    too large."""
    with backend.open(SandboxRequest(RUNTIME, pristine, "/app", Limits(wall_time_s=30.0))) as parent:
        for make in ("for i in $(seq 1200); do mkdir d && cd d || exit 1; done",
                     "python3 -c \"import os\nfor _ in range(20):\n    os.mkdir('a' * 250)\n    os.chdir('a' * 250)\""):
            assert parent.exec(make, cwd="/app").ok
            with pytest.raises(OSError, match="nested deeper than 256 or a path longer than 3072 bytes"):
                parent.fork()
            assert parent.alive and parent.exec("rm -rf d a* && echo ok", cwd="/app").stdout == "ok\n"
        assert parent.exec("mkdir -p x/y/z", cwd="/app").ok
        with parent.fork() as child:
            assert child.exec("ls -d x/y/z", cwd="/app").stdout == "x/y/z\n"

