"""Agent actions are untrusted input: whatever an agent sends, ``env.step()`` answers it in the
observation (``[invalid action: ...]`` for what cannot be done), never raises into the training
loop, never ends the episode as an infrastructure failure, bounds the host's work, and a refused
action changes nothing (issue 11)."""

import dataclasses
import hashlib
import json
import os
import time
import uuid

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv
from agentenv import ActionError, CodingEnv, load_task
from agentenv.builtin import actions as builtin_actions
from _paths import EXAMPLES, example

TASK = "agentenv/examples.bank_transfer-v0"
WORKSPACE = os.path.join(EXAMPLES, "bank_transfer", "workspace")
FILES = ["bank/__init__.py", "bank/accounts.py", "bank/ledger.py", "tests/test_bank.py"]


@pytest.fixture(scope="module")
def shared_env():
    env = gym.make(TASK, mode="agentic", max_rounds=10_000)
    yield env
    env.close()


@pytest.fixture
def env(shared_env):
    shared_env.reset()  # a fresh sandbox (cheap): each test starts from the task's workspace
    return shared_env


def step(env, action):
    """One step that must not end the episode: (output, info)."""
    obs, reward, terminated, truncated, info = env.step(action)
    assert isinstance(obs["output"], str)
    assert not info["reward_masked"], info["infra_error"]
    assert not (terminated or truncated), obs["output"][-2000:]
    return obs["output"], info


def refused(env, action, *words):
    output, info = step(env, action)
    assert output.startswith("[invalid action: "), output[:2000]
    for word in words:
        assert word in output, (word, output[:2000])
    return output


def listing(env):
    output, _ = step(env, {"action": "list_files"})
    return output.splitlines()


def nested(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def sh(env, command):
    output, _ = step(env, {"action": "run_command", "command": command})
    return output


# --------------------------------------------------------------------------- run_command

BAD_TIMEOUTS = ["abc", "5", [1], {"s": 1}, float("nan"), float("inf"), float("-inf"), -1, 0, 0.0, True, False, None,
                10 ** 400, -10 ** 5000]


def test_a_bad_timeout_is_refused_before_the_command_runs_and_a_good_one_is_capped(env):
    for timeout in BAD_TIMEOUTS:
        refused(env, {"action": "run_command", "command": "touch ran_it", "timeout_s": timeout}, "timeout_s")
    assert "ran_it" not in listing(env)
    for timeout in (1, 0.5, 1e9):
        output, _ = step(env, {"action": "run_command", "command": "echo ok", "timeout_s": timeout})
        assert output == "$ echo ok\n[exit code 0]\nok", output


def test_cwd_is_honoured_relative_to_the_workspace_and_path_is_its_alias(env):
    for field in ("cwd", "path"):
        output, _ = step(env, {"action": "run_command", "command": "pwd", field: "bank"})
        assert output == "$ pwd\n[exit code 0]\n/app/bank", output
    output, _ = step(env, {"action": "run_command", "command": "pwd", "cwd": "/app/tests"})
    assert output.endswith("\n/app/tests"), output
    output, _ = step(env, {"action": "run_command", "command": "pwd", "cwd": "."})
    assert output.endswith("\n/app"), output
    output, _ = step(env, {"action": "run_command", "command": "pwd", "cwd": "no_such_dir"})
    assert "[exit code 0]" not in output and "no_such_dir" in output and not output.endswith("/app"), output
    for bad in ("..", "../etc", "/", "/tmp", "a\0b", "", 7):
        refused(env, {"action": "run_command", "command": "pwd", "cwd": bad}, "cwd")
    refused(env, {"action": "run_command", "command": "pwd", "cwd": "bank", "path": "tests"}, "cwd")


def test_a_command_no_shell_can_run_is_refused(env):
    for command in ("echo a\0b", "echo \ud800", "", "   ", None, 3, ["ls"]):
        refused(env, {"action": "run_command", "command": command}, "command")


# --------------------------------------------------------------------------- overwrite_file

BAD_PATHS = [".", "", "/", "/app", "/app/", "./", "bank/..", "x" * 5000, "a/" + "y" * 300, "a\0b", "\ud800", "bank",
             "bank/", "bank/__init__.py/x", "bank/__init__.py/sub/x", "../x", "/etc/x", 5, None]


def test_overwrite_file_refuses_bad_paths_and_deletes_nothing(env):
    before = listing(env)
    assert set(FILES) <= set(before)
    for path in BAD_PATHS:
        refused(env, {"action": "overwrite_file", "path": path, "content": "x"}, "path")
        assert listing(env) == before, path


def test_overwrite_file_content_is_bounded_by_max_file_size_mb(env):
    limit = env.unwrapped.task.limits.max_file_size_mb
    before = listing(env)
    refused(env, {"action": "overwrite_file", "path": "big", "content": "x" * (100 << 20)}, "max_file_size_mb", f"{limit} MB")
    refused(env, {"action": "overwrite_file", "path": "big", "content": "é" * ((limit << 20) // 2 + 1)}, "max_file_size_mb")
    refused(env, {"action": "overwrite_file", "path": "s", "content": "\ud800"}, "content")
    refused(env, {"action": "overwrite_file", "path": "s", "content": 5}, "content")
    assert listing(env) == before
    output, _ = step(env, {"action": "overwrite_file", "path": "ok.txt", "content": "fine\n"})
    assert output == "wrote ok.txt (5 characters)"


# --------------------------------------------------------------------------- read_file, list_files

def test_read_and_list_refuse_bad_paths(env):
    for action in ({"action": "read_file", "path": "a\0b"}, {"action": "read_file", "path": "\ud800"},
                   {"action": "read_file", "path": "x" * 5000}, {"action": "read_file", "path": "."},
                   {"action": "list_files", "path": "a\0b"}, {"action": "list_files", "path": "x" * 5000}):
        refused(env, action, "path")


# --------------------------------------------------------------------------- apply_patch

def one_line_patch(name, old="x", new="y"):
    return f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-{old}\n+{new}\n"


def test_apply_patch_refuses_what_is_not_a_text_file(env):
    sh(env, "printf '\\377\\376x\\n' > bin.txt; mkdir -p adir/sub; echo keep > adir/sub/f; mkfifo fifo")
    before = listing(env)
    refused(env, {"action": "apply_patch", "patch": one_line_patch("bin.txt")}, "bin.txt", "UTF-8")
    refused(env, {"action": "apply_patch", "patch": one_line_patch("adir")}, "adir", "directory")
    refused(env, {"action": "apply_patch", "patch": one_line_patch("fifo")}, "fifo")
    # creating a file where a directory or a file stands replaces nothing
    create = "--- /dev/null\n+++ b/{}\n@@ -0,0 +1 @@\n+new\n"
    refused(env, {"action": "apply_patch", "patch": create.format("adir")}, "adir")
    refused(env, {"action": "apply_patch", "patch": create.format("bank/ledger.py")}, "exists")
    refused(env, {"action": "apply_patch", "patch": create.format("bank/ledger.py/x")}, "below a file")
    assert listing(env) == before
    assert sh(env, "cat adir/sub/f").endswith("\nkeep")


MALFORMED_PATCHES = [
    "--- \n+++ \n@@ -1 +1 @@\n-x\n+y\n",
    "--- a/\n+++ b/\n@@ -1 +1 @@\n-x\n+y\n",
    "--- a/.\n+++ b/.\n@@ -1 +1 @@\n-x\n+y\n",
    "--- /dev/null\n+++ /dev/null\n@@ -0,0 +1 @@\n+a\n",
    "--- a/bank/ledger.py\n+++ b/bank/ledger.py\n@@ -" + "1" * 5000 + " +1 @@\n-x\n+y\n",
    "--- a/bank/ledger.py\n+++ b/bank/ledger.py\n",
    "--- a/bank/ledger.py\n+++ b/bank/ledger.py\n@@ -1,3 +1,3 @@\n not in the file\n",
    "--- a/a\0b\n+++ b/a\0b\n@@ -1 +1 @@\n-x\n+y\n",
    "--- a/\ud800\n+++ b/\ud800\n@@ -1 +1 @@\n-x\n+y\n",
    "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n",
    "just some text",
    "@@ -1 +1 @@\n-x\n+y\n",
]


def test_a_malformed_patch_is_refused_and_changes_nothing(env):
    before = listing(env)
    ledger = sh(env, "md5sum bank/ledger.py")
    for patch in MALFORMED_PATCHES:
        refused(env, {"action": "apply_patch", "patch": patch})
        assert listing(env) == before and sh(env, "md5sum bank/ledger.py") == ledger


def test_apply_patch_edits_the_same_file_twice_and_keeps_other_line_separators(env):
    sh(env, "printf 'a\\nb\\fc\\nd\\n' > two.txt")
    patch = ("--- a/two.txt\n+++ b/two.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\fc\n"
             "--- a/two.txt\n+++ b/two.txt\n@@ -3 +3 @@\n-d\n+D\n")
    output, _ = step(env, {"action": "apply_patch", "patch": patch})
    assert output == "patched two.txt", output
    assert step(env, {"action": "read_file", "path": "two.txt"})[0] == "A\nb\fc\nD\n"


def test_apply_patch_on_a_400k_line_file_is_fast_for_the_caller(env):
    sh(env, "seq 1 400000 > big.txt")
    hunks = []
    for i in range(100):
        n = 4000 * i + 2
        hunks.append(f"@@ -{n - 1},3 +{n - 1},3 @@\n {n - 1}\n-{n}\n+changed {n}\n {n + 1}\n")
    patch = "--- a/big.txt\n+++ b/big.txt\n" + "".join(hunks)
    cpu, wall = time.process_time(), time.monotonic()
    output, _ = step(env, {"action": "apply_patch", "patch": patch})
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    assert output == "patched big.txt", output
    assert cpu < 1.5 and wall < 5, (cpu, wall)
    assert sh(env, "grep -c changed big.txt").endswith("\n100")
    assert sh(env, "sed -n '4002p' big.txt").endswith("\nchanged 4002")
    # hunks written with wrong line numbers still find their place, nearest first
    wrong = "--- a/big.txt\n+++ b/big.txt\n@@ -1,3 +1,3 @@\n 199999\n-200000\n+moved\n 200001\n"
    assert step(env, {"action": "apply_patch", "patch": wrong})[0] == "patched big.txt"
    assert sh(env, "sed -n '200000p' big.txt").endswith("\nmoved")


def test_apply_patch_work_is_bounded(env):
    bounds = builtin_actions
    # many candidate places, none matching: refused within a bounded time
    sh(env, "yes a | head -n 400000 > same.txt; python -c \"print('a\\nb\\n' * 200000, end='')\" > ab.txt")
    for name, old in (("same.txt", [" a", " a", "-b"]), ("ab.txt", [" a", "-a"] * 50)):
        patch = f"--- a/{name}\n+++ b/{name}\n" + "".join(
            f"@@ -{k},3 +{k},3 @@\n" + "\n".join(old) + "\n+new\n" for k in range(1, 400000, 4000))
        cpu = time.process_time()
        refused(env, {"action": "apply_patch", "patch": patch}, name)
        assert time.process_time() - cpu < 1.5
    # the bounds, each said in the observation
    refused(env, {"action": "apply_patch", "patch": "--- a/same.txt\n+++ b/same.txt\n"
                  + "@@ -1 +1 @@\n-a\n+b\n" * (bounds.MAX_PATCH_HUNKS + 1)}, "hunks", str(bounds.MAX_PATCH_HUNKS))
    refused(env, {"action": "apply_patch", "patch": "--- a/same.txt\n+++ b/same.txt\n@@ -1 +1 @@\n-a\n+"
                  + "b" * bounds.MAX_PATCH_CHARS + "\n"}, "characters", str(bounds.MAX_PATCH_CHARS))
    sh(env, f"head -c {bounds.MAX_PATCH_TARGET_BYTES + 1} /dev/zero | tr '\\0' 'a' > huge.txt")
    refused(env, {"action": "apply_patch", "patch": one_line_patch("huge.txt")}, "huge.txt", str(bounds.MAX_PATCH_TARGET_BYTES))
    sh(env, f"seq 1 {bounds.MAX_PATCH_TARGET_LINES + 1} > long.txt")
    refused(env, {"action": "apply_patch", "patch": one_line_patch("long.txt", "1", "x")}, "long.txt",
            str(bounds.MAX_PATCH_TARGET_LINES))


def test_the_search_for_hunks_has_a_budget():
    text = "a\nb\n" * 50_000 + "a\na\n"
    hunks = builtin_actions.parse_unified_diff("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-a\n+z\n")[0].hunks
    assert builtin_actions.apply_hunks(text, hunks, "f").endswith("a\nb\na\nz\n")  # found after 50000 places
    with pytest.raises(ActionError, match="line comparisons"):
        builtin_actions.apply_hunks(text, hunks, "f", budget=[10_000])


# --------------------------------------------------------------------------- fields, checked in one place

@pytest.fixture
def no_execute(monkeypatch):
    """Every built-in action's execute fails the test: what the central check refuses never gets there."""
    def execute(self, ctx, action):
        raise AssertionError(f"execute ran for {action!r:.200}")
    for cls in (builtin_actions.RunCommand, builtin_actions.OverwriteFile, builtin_actions.ReadFile,
                builtin_actions.ListFiles, builtin_actions.ApplyPatch, builtin_actions.Submit):
        monkeypatch.setattr(cls, "execute", execute)


def test_unknown_fields_are_refused_with_a_did_you_mean(env, no_execute):
    for action, hint in (({"action": "run_command", "comand": "touch ran_it"}, "did you mean 'command'"),
                         ({"action": "run_command", "command": "ls", "timeout": 3}, "did you mean 'timeout_s'"),
                         ({"action": "run_command", "command": "ls", "cdw": "bank"}, "did you mean 'cwd'"),
                         ({"action": "overwrite_file", "path": "ran_it", "contents": "x"}, "did you mean 'content'"),
                         ({"action": "overwrite_file", "path": "ran_it", "content": "x", "mode": 0o777}, "'mode'"),
                         ({"action": "apply_patch", "pach": "x"}, "did you mean 'patch'"),
                         ({"action": "submit", "reason": "done"}, "'reason'"),
                         ({"action": "read_file", "path": "x", "x" * 100_000: 1}, "read_file"),
                         ({"action": "run_command", "command": "ls", 5: "x"}, "5")):
        assert len(refused(env, action, hint)) < 1000


def test_wrong_field_types_are_refused_before_execute(env, no_execute):
    for action, words in (({"action": "read_file", "path": 5}, ["'path'", "string"]),
                          ({"action": "read_file"}, ["'path'"]),
                          ({"action": "overwrite_file", "path": "x", "content": ["x" * 100_000]}, ["'content'", "string"]),
                          ({"action": "overwrite_file", "path": "x", "content": b"x"}, ["'content'", "string"]),
                          ({"action": "overwrite_file", "path": "x", "content": nested(5000)}, ["'content'", "string"]),
                          ({"action": "run_command", "command": {"x": 1}}, ["'command'", "string"]),
                          ({"action": "run_command", "command": ""}, ["'command'", "empty"]),
                          ({"action": "run_command", "command": "ls", "timeout_s": "3"}, ["'timeout_s'", "number"]),
                          ({"action": "run_command", "command": "ls", "timeout_s": -10 ** 5000}, ["'timeout_s'"]),
                          ({"action": "run_command", "command": "ls", "path": 3}, ["'path'", "string"]),
                          ({"action": "apply_patch", "patch": None}, ["'patch'", "string"]),
                          ({"action": "list_files", "path": ["a"]}, ["'path'", "string"])):
        assert len(refused(env, action, *words)) < 1000


def test_the_field_check_serves_plugin_actions():
    class Greet(agentenv.ActionType):
        name = "greet"
        fields_schema = {"properties": {"who": {"type": "string"}, "times": {"type": "integer", "minimum": 1}},
                         "required": ["who"]}
        field_aliases = {"name": "who"}

        def execute(self, ctx, action):
            raise AssertionError("not reached")

    greet = Greet()
    greet.check_fields({"action": "greet", "who": "you", "times": 2})
    greet.check_fields({"action": "greet", "name": "you"})
    for action, words in (({"action": "greet", "woh": "you"}, ["'woh'", "'who'"]),
                          ({"action": "greet", "who": 1}, ["'who'", "string"]),
                          ({"action": "greet", "name": 1}, ["'name'", "string"]),
                          ({"action": "greet", "who": "x" * 10 ** 6, "times": 0}, ["'times'"]),
                          ({"action": "greet", "who": "x", "times": True}, ["'times'", "integer"]),
                          ({"action": "greet"}, ["'who'"])):
        with pytest.raises(ActionError) as err:
            greet.check_fields(action)
        assert all(w in str(err.value) for w in words) and len(str(err.value)) < 500, str(err.value)

    class Anything(agentenv.ActionType):  # declares no fields: every field is the plugin's business
        name = "anything"

        def execute(self, ctx, action):
            raise AssertionError("not reached")

    Anything().check_fields({"action": "anything", "x": [1, {"y": float("nan")}]})


def test_pathological_action_objects_are_refused(env):
    for action in ('{"action": "submit", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
                   '{"action": "submit", "x": ' + "1" * 5000 + "}", "[" * 100_000, b"\xff\xfe{",
                   {"action": "x" * 100_000}, {"action": "run_command", "command": "ls", "timeout_s": 10 ** 400}):
        assert len(refused(env, action)) < 2000


def test_a_deeply_nested_tool_call_is_refused_and_recorded_when_a_trajectory_is_kept(tmp_path):
    # arguments nested 500 deep (json.loads takes them) were refused without a trajectory, but recording
    # the action raised RecursionError out of env.step with one, after the action had run (red team, stop 39)
    from agentenv.wrappers import ChatEnv

    nest = "[" * 500 + "]" * 500
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "run_command", "arguments": '{"command": "echo hi", "x": %s}' % nest}}]}
    trajectory = tmp_path / "trajectory.jsonl"
    env = ChatEnv(gym.make("agentenv/examples.bank_transfer-v0", mode="agentic", trajectory=str(trajectory)))
    try:
        env.reset(seed=0)
        messages, reward, terminated, truncated, info = env.step(call)
        assert messages[0]["content"].startswith("[invalid action: run_command has no field 'x'")
        assert (reward, terminated, truncated) == (0.0, False, False)
    finally:
        env.close()
    step = [r for r in agentenv.read_jsonl(trajectory) if r["type"] == "step"][-1]
    assert json.dumps(step["action"]).count("[") < 100 and "left out" in json.dumps(step["action"]), step["action"]


def test_a_single_shot_program_that_is_not_unicode_is_refused_and_the_batch_goes_on():
    # a lone surrogate (JSON text carries one: half an emoji, "\\ud83d") raised UnicodeEncodeError out of
    # env.step, ChatEnv.step and RolloutPool.score, which lost every completion of the batch (red team, stop 37)
    with open(os.path.join(EXAMPLES, "fizzbuzz", "solution", "fizzbuzz.py")) as f:
        reference = f.read()
    env = gym.make("agentenv/examples.fizzbuzz-v0")
    try:
        env.reset()
        obs, reward, terminated, _, info = env.step("x = '\ud83d'\n")
        assert obs["output"] == "[the program text is not valid Unicode (a lone surrogate at character 5)]"
        assert (reward, terminated, info["reward_masked"]) == (0.0, True, False)
    finally:
        env.close()
    pool = agentenv.RolloutPool(concurrency=2)
    rewards = [r.reward for r in pool.score_sync("examples.fizzbuzz", [f"```python\n{reference}```",
                                                                      "```python\nx = '\ud83d'\n```"])]
    assert rewards == [1.0, 0.0]


# --------------------------------------------------------------------------- arbitrary actions

CANARY = f"agentenv-fuzz-{uuid.uuid4().hex[:12]}"
KNOWN = ["run_command", "overwrite_file", "read_file", "list_files", "apply_patch", "submit"]
FIELD_NAMES = ["command", "timeout_s", "cwd", "path", "content", "patch", "comand", "timeout", "pth", "", "action "]
SPECIAL = ["x" * 1_000_000, "\0", "a\0b", "\ud800", "..", ".", "/", "/app", "/app/", "../..", f"/tmp/{CANARY}",
           f"../tmp/{CANARY}", "bank", "bank/ledger.py", "fifo", "tests/test_bank.py", "/proc/1/fd/1", "/dev/stdin"]
COMMANDS = ["ls -la", "pwd", "echo hi", "mkfifo fifo", f"touch /tmp/{CANARY}", f"echo x > /tmp/{CANARY}",
            "printf '\\377' > bin.txt", "mkdir -p d", "rm -rf /app/*", "kill -9 -1", "ln -s / root_link",
            "ln -s /proc/1/fd/1 log_link", "cat /etc/hostname", "seq 1 100000 > lines.txt", "chmod 000 bank"]
PATCHES = [one_line_patch("bank/ledger.py"), one_line_patch("bin.txt"), one_line_patch("fifo"), one_line_patch("d"),
           one_line_patch("root_link/etc/passwd"), one_line_patch("log_link"),
           "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n", "--- a/lines.txt\n+++ b/lines.txt\n"
           + "".join(f"@@ -{k} +{k} @@\n-{k}\n+x\n" for k in range(1, 100000, 999))]

leaves = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10 ** 300, max_value=10 ** 400)
          | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30) | st.sampled_from(SPECIAL))
json_values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=12)



deep = st.integers(min_value=1, max_value=5000).map(nested)
flat_values = json_values | st.sampled_from(COMMANDS) | st.sampled_from(PATCHES)


def objects(values):
    return st.builds(lambda name, fields: {"action": name, **fields},
                     st.sampled_from(KNOWN) | st.text(max_size=20) | json_values,
                     st.dictionaries(st.sampled_from(FIELD_NAMES) | st.text(max_size=8), values, max_size=4))


random_objects = objects(flat_values | deep)
path_values = st.sampled_from(SPECIAL) | st.text(max_size=20) | json_values
typed_objects = st.one_of(
    st.fixed_dictionaries({"action": st.just("run_command"), "command": st.sampled_from(COMMANDS) | st.text(max_size=30)},
                          optional={"timeout_s": leaves, "cwd": path_values, "path": path_values}),
    st.fixed_dictionaries({"action": st.just("overwrite_file"), "path": path_values, "content": leaves}),
    st.fixed_dictionaries({"action": st.just("read_file"), "path": path_values}),
    st.fixed_dictionaries({"action": st.just("list_files")}, optional={"path": path_values}),
    st.fixed_dictionaries({"action": st.just("apply_patch"), "patch": st.sampled_from(PATCHES) | leaves}),
    st.fixed_dictionaries({"action": st.just("submit")}))
not_objects = (st.integers() | st.binary(max_size=40) | st.lists(json_values, max_size=3) | st.text(max_size=40)
               | st.sampled_from(["{", '{"action": 1}', "[" * 50_000, '{"action": "submit", "x": ' + "9" * 5000 + "}",
                                  "NaN", "null", '"submit"'])
               | objects(flat_values).map(lambda a: json.dumps(a, default=repr)[:200_000])
               | objects(flat_values).map(lambda a: json.dumps(a, default=repr).encode("utf-8", "surrogatepass")))
any_action = st.one_of(typed_objects, typed_objects, random_objects, not_objects)


def tree_digest(root):
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            full = os.path.join(dirpath, name)
            st_ = os.lstat(full)
            digest.update(f"{os.path.relpath(full, root)}|{st_.st_mode}|{st_.st_size}|{st_.st_mtime_ns}\n".encode())
            if os.path.isfile(full) and not os.path.islink(full):
                digest.update(open(full, "rb").read())
    return digest.hexdigest()


def test_arbitrary_actions_never_raise_and_leave_the_host_alone(tmp_path):
    task = load_task(example("bank_transfer"))
    task = dataclasses.replace(task, limits=dataclasses.replace(task.limits, wall_time_s=5))  # a stray `yes` is cut short
    env = CodingEnv(task, mode="agentic", max_rounds=10_000)
    canary = tmp_path / "canary"
    canary.write_text("untouched")
    watched = [WORKSPACE, env._workspace_dir]
    before = [tree_digest(d) for d in watched] + [tree_digest(tmp_path)]
    app_existed = os.path.exists("/app")
    env.reset()
    steps = []

    @settings(max_examples=60, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example])
    @given(st.lists(any_action, min_size=1, max_size=3))
    def run(actions):
        for action in actions:
            steps.append(action)
            obs, reward, terminated, truncated, info = env.step(action)
            assert isinstance(obs["output"], str) and isinstance(reward, float)
            assert not info["reward_masked"], (info["infra_error"], repr(action)[:500])
            if terminated or truncated:
                env.reset()

    try:
        run()
    finally:
        env.close()
    assert steps
    assert [tree_digest(d) for d in watched] + [tree_digest(tmp_path)] == before
    assert canary.read_text() == "untouched"
    assert not os.path.exists(f"/tmp/{CANARY}")
    assert os.path.exists("/app") == app_existed
