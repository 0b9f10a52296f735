"""The chat face of the environments: tools from action schemas, ChatEnv, chat export and reverify.

Real sandboxes throughout: every reward here comes from the task's own tests.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap

import gymnasium as gym
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv
from agentenv._chat import MAX_SCANNED_CHARS
from agentenv._cli import main
from agentenv.wrappers import ChatEnv, extract_code, fence, parse_reply, to_anthropic

from _paths import EXAMPLES, REPO, example

FIZZBUZZ = open(os.path.join(EXAMPLES, "fizzbuzz", "solution", "fizzbuzz.py")).read()


def call(name, arguments, call_id=None):
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"c_{name}", "type": "function", "function": {"name": name, "arguments": args}}


def assistant(*calls, content=""):
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


# --------------------------------------------------------------------------- tools

def test_every_action_is_a_tool_with_the_schema_it_declares():
    defs = agentenv.tools("examples.bank_transfer")
    by_name = {d["function"]["name"]: d["function"] for d in defs}
    assert set(by_name) == set(agentenv.registry().actions)
    for name, fn in by_name.items():
        kind = agentenv.registry().actions[name]
        params = fn["parameters"]
        assert params["type"] == "object" and fn["description"] == kind.description
        assert set(params["properties"]) == set(kind.fields_schema.get("properties", {}))
        assert params.get("additionalProperties") is False  # the env refuses unknown fields, so the tool says so
        assert all(p.get("description") for p in params["properties"].values())
        jsonschema.Draft202012Validator.check_schema(params)
    assert by_name["run_command"]["parameters"]["required"] == ["command"]
    assert "/app" in by_name["read_file"]["parameters"]["properties"]["path"]["description"]
    anthropic = agentenv.tools(format="anthropic")
    assert {t["name"] for t in anthropic} == set(by_name) and all("input_schema" in t for t in anthropic)
    with pytest.raises(agentenv.UnknownNameError, match="did you mean 'read_file'"):
        agentenv.tools(actions=["read_fiel"])


class CountLines(agentenv.ActionType):
    """A plugin's action: it becomes a tool with no code beyond the action itself."""

    name = "count_lines"
    description = "Count the lines of a workspace file."
    fields_schema = {"properties": {"path": {"type": "string", "minLength": 1, "description": "the file"}},
                     "required": ["path"]}

    def execute(self, ctx, action):
        lines = ctx.sandbox.read_file(ctx.task.relpath(action["path"])).count(b"\n")
        return agentenv.ActionOutcome(f"{action['path']}: {lines} lines")


@pytest.fixture
def plugin_action():
    registry = agentenv.registry()
    registry.add_action(CountLines())
    yield
    registry.actions.pop("count_lines")


def test_a_plugin_action_is_a_new_tool_that_chat_env_runs(plugin_action):
    tool = next(t["function"] for t in agentenv.tools() if t["function"]["name"] == "count_lines")
    assert tool["parameters"]["properties"]["path"]["description"] == "the file"
    env = ChatEnv(gym.make("agentenv/examples.bank_transfer-v0", mode="agentic"))
    env.reset(seed=0)
    assert "count_lines" in {t["function"]["name"] for t in env.tools}
    new, *_ = env.step(assistant(call("count_lines", {"path": "bank/ledger.py"})))
    assert new[0]["role"] == "tool" and new[0]["content"].startswith("bank/ledger.py: ")
    assert int(new[0]["content"].split(": ")[1].split()[0]) > 3
    env.close()


# --------------------------------------------------------------------------- ChatEnv, agentic

@pytest.fixture(scope="module")
def bank():
    env = ChatEnv(gym.make("agentenv/examples.bank_transfer-v0", mode="agentic", max_rounds=6))
    yield env
    env.close()


def test_agentic_chat_episode_with_openai_tool_calls(bank):
    messages, info = bank.reset(seed=0)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert "submit" in messages[0]["content"] and "bank/ledger.py" in messages[1]["content"]
    new, reward, terminated, truncated, info = bank.step(assistant(
        call("list_files", {}, "a1"), call("read_file", {"path": "bank/accounts.py"}, "a2")))
    assert [(m["role"], m["tool_call_id"]) for m in new] == [("tool", "a1"), ("tool", "a2")]
    assert "bank/accounts.py" in new[0]["content"] and "class Account" in new[1]["content"]
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert [c["ok"] for c in info["tool_calls"]] == [True, True]
    solution = os.path.join(EXAMPLES, "bank_transfer", "solution", "bank")
    writes = [call("overwrite_file", {"path": f"bank/{f}", "content": open(os.path.join(solution, f)).read()}, f"w{i}")
              for i, f in enumerate(("accounts.py", "ledger.py"))]
    new, reward, terminated, truncated, info = bank.step(assistant(*writes, call("submit", {}, "s"), call("list_files", {}, "late")))
    assert reward == 1.0 and terminated and info["success"]
    assert "[evaluation]" in new[2]["content"]
    assert new[3]["tool_call_id"] == "late" and "not run" in new[3]["content"]  # every call is answered
    roles = [m["role"] for m in bank.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant", "tool", "tool", "tool", "tool"]


DEEP_LIST = functools.reduce(lambda value, _: [value], range(5000), [])


@pytest.mark.parametrize("reply, why", [
    (assistant(call("read_file", "{not json")), "arguments are not valid JSON"),
    (assistant(call("read_file", "[1, 2]")), "arguments must be a JSON object"),
    (assistant(call("read_fiel", {"path": "x"})), "did you mean 'read_file'"),
    (assistant(call("read_file", {"path": "x", "mode": "rb"})), "has no field 'mode'"),
    (assistant(call("read_file", {"path": 7})), "must be a string"),
    ("I think the bug is in the ledger.", "no tool call"),
    ({"role": "user", "content": "hi"}, "must be an assistant message"),
    ({"role": "assistant", "content": 5}, "content must be text"),
    (12345, "a string or an object"),
    ({"role": "assistant", "tool_calls": "submit"}, "tool_calls must be a list"),
    # a client's objects that are not JSON data raised TypeError out of step (red team, stop 30)
    (assistant({"id": "b", "type": "function", "function": {"name": "overwrite_file",
                                                            "arguments": {"path": "a.py", "content": b"x"}}}),
     "must be JSON data"),
    (assistant({"id": "s", "type": "function", "function": {"name": "run_command", "arguments": {"command": {1, 2}}}}),
     "must be JSON data"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "list_files", "input": {(1, 2): "x"}}]},
     "must be JSON data"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "run_command",
                                        "input": {"command": "ls", "timeout_s": 10 ** 5000}}]}, "must be JSON data"),
    # a name no str() takes (an int past its digit limit, a nest past the recursion limit) raised too (stop 37)
    (assistant({"id": "n", "type": "function", "function": {"name": 10 ** 5000, "arguments": "{}"}}), "no function name"),
    ({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": DEEP_LIST, "input": {}}]},
     "no function name"),
])
def test_a_malformed_reply_is_an_observation_and_costs_a_round(bank, reply, why):
    bank.reset(seed=0)
    new, reward, terminated, truncated, info = bank.step(reply)
    assert why in new[0]["content"] and reward == 0.0 and not (terminated or truncated)
    assert info["round"] == 1


def test_garbage_until_the_budget_runs_out_truncates_with_an_evaluation(bank):
    bank.reset(seed=0)
    for _ in range(5):
        new, reward, terminated, truncated, info = bank.step("no tools from me")
        assert not truncated
    new, reward, terminated, truncated, info = bank.step(assistant(call("nope", "{}")))
    assert truncated and not terminated and reward == 0.0
    assert "[evaluation]" in new[0]["content"] and info["reward_breakdown"]


def test_anthropic_hermes_and_json_action_shapes_are_understood(bank):
    bank.reset(seed=0)
    anthropic = {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "bank/ledger.py"}}]}
    new, *_ = bank.step(anthropic)
    assert new[0]["tool_call_id"] == "toolu_1" and "def transfer" in new[0]["content"]
    hermes = 'Let me run the tests.\n<tool_call>\n{"name": "run_command", "arguments": {"command": "ls bank"}}\n</tool_call>'
    new, *_ = bank.step(hermes)
    assert new[0]["role"] == "tool" and "ledger.py" in new[0]["content"]
    assert bank.messages[-2]["tool_calls"][0]["id"] == new[0]["tool_call_id"]  # the transcript stays consistent
    new, *_ = bank.step('```json\n{"action": "read_file", "path": "bank/__init__.py"}\n```')
    assert new[0]["role"] == "tool" and "[invalid" not in new[0]["content"]
    system, converted = to_anthropic(bank.messages)
    assert "submit" in system and converted[1]["content"][-1]["type"] == "tool_use"
    assert converted[2]["content"][0] == {"type": "tool_result", "tool_use_id": "toolu_1",
                                          "content": bank.messages[3]["content"]}


def test_on_no_tool_call_submit_ends_the_episode():
    env = ChatEnv(gym.make("agentenv/examples.bank_transfer-v0", mode="agentic"), on_no_tool_call="submit")
    env.reset(seed=0)
    new, reward, terminated, truncated, info = env.step({"role": "assistant", "content": "Done, I think."})
    assert terminated and reward == 0.0 and "[evaluation]" in new[0]["content"]
    env.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
                        st.sampled_from(["role", "content", "tool_calls", "function", "name", "arguments", "type",
                                         "id", "input", "text"]), kids, max_size=5), max_leaves=20))
def test_parse_reply_never_raises(message):
    reply = parse_reply(message)
    assert isinstance(reply.message(), dict)
    json.dumps(reply.message(), default=str)


# --------------------------------------------------------------------------- ChatEnv, single-shot

def test_single_shot_takes_the_fenced_block_or_the_write_tool():
    env = ChatEnv(gym.make("agentenv/examples.fizzbuzz-v0"))
    messages, _ = env.reset(seed=0)
    assert env.tools == [] and "fizzbuzz.py" in messages[1]["content"]
    _, reward, terminated, _, info = env.step(f"Here is the fix:\n{fence(FIZZBUZZ, 'python')}\nDone.")
    assert reward == 1.0 and terminated and info["metrics"]["tests_passed"] == 4
    env.reset(seed=0)
    _, reward, *_ = env.step(assistant(call("overwrite_file", {"path": "/app/fizzbuzz.py", "content": FIZZBUZZ})))
    assert reward == 1.0
    env.reset(seed=0)
    new, reward, *_ = env.step({"role": "assistant", "content": "```python\ndef fizzbuzz(n):\n    return []\n```"})
    assert reward == 0.0 and new[0]["role"] == "user" and "failed" in new[0]["content"]
    env.close()


def test_fences_hold_code_that_contains_fences():
    code = 'DOC = """\n```\nnot the end\n```\n"""\n'
    assert extract_code("intro\n" + fence(code) + "\ntrailing") == code
    assert extract_code("```python\nx = 1```") == "x = 1"  # closed on the last line, as small models write
    assert extract_code("no code here") is None
    assert extract_code("~~~\nx = 1\n~~~ \t\nmore") == "x = 1\n"  # tildes; spaces may follow the closing fence
    assert extract_code("`````\nx = 1\n```\n") == "x = 1\n"  # a longer opening run closes on its longest match


def finished(code: str):
    """What *code* prints (JSON), run by a fresh interpreter on this checkout, failing the test unless it
    finishes within a generous minute: a regex that backtracks holds the GIL, so only a process that
    is stopped from outside can fail rather than hang the suite."""
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": REPO})
    except subprocess.TimeoutExpired:
        pytest.fail("still reading one reply after 60 s")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_reply_of_unclosed_tool_call_tags_at_the_size_cap_is_read_in_one_pass():
    """A regex rescanned the rest of the reply from every unclosed ``<tool_call>``: about 20 minutes
    for a reply at the cap, all of it holding the GIL; a JSON call after the tags still counts."""
    calls = finished("""
        import json
        from agentenv._chat import MAX_SCANNED_CHARS
        from agentenv.wrappers import parse_reply
        call = '{"name": "submit", "arguments": {}}'
        tags = "<tool_call>" * ((MAX_SCANNED_CHARS - len(call)) // len("<tool_call>"))
        print(json.dumps([[c.name, c.arguments, c.error] for c in parse_reply(tags + call).calls]))""")
    assert calls == [["submit", {}, None]]


def test_fences_that_never_close_at_the_size_cap_are_read_in_one_pass():
    """Opening fences that never close (each line "```a", a fence with an info string) and an opening
    run of half a million backticks: regexes rescanned the rest of the reply from each (from half an
    hour to hours at the cap); the answers are what they were."""
    found = finished("""
        import json
        from agentenv._chat import MAX_SCANNED_CHARS as CAP
        from agentenv.wrappers import extract_code
        print(json.dumps([extract_code("```a\\n" * (CAP // 5)), extract_code("~~~a\\n" * (CAP // 5)),
                          extract_code("`" * (CAP // 2) + "\\n" + "x" * (CAP // 2 - 10) + "```")]))""")
    assert found == ["", None, "x" * (MAX_SCANNED_CHARS // 2 - 10)]


# --------------------------------------------------------------------------- export and reverify

@pytest.fixture(scope="module")
def eval_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("eval") / "ref"
    assert main(["eval", "--suite", "examples", "--agent", "reference", "--tasks",
                 "examples.fizzbuzz,examples.bank_transfer", "--out", str(out), "-q"]) == 0
    return out


def test_export_chat_from_an_eval_run_loads_with_datasets(eval_run, tmp_path, capfd):
    out = tmp_path / "chat.jsonl"
    assert main(["export", str(eval_run), "--format", "chat", "-o", str(out)]) == 0
    assert "2 episodes written" in capfd.readouterr().err
    rows = {r["task_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    agentic, single = rows["examples.bank_transfer"], rows["examples.fizzbuzz"]
    assert agentic["reward"] == single["reward"] == 1.0 and agentic["success"] and not agentic["reward_masked"]
    assert [m["role"] for m in agentic["messages"][:4]] == ["system", "user", "assistant", "tool"]
    first_call = agentic["messages"][2]["tool_calls"][0]
    assert agentic["messages"][3]["tool_call_id"] == first_call["id"]
    assert json.loads(first_call["function"]["arguments"])["path"].startswith("bank/")
    assert {t["function"]["name"] for t in json.loads(agentic["tools"])} == set(agentenv.registry().actions)
    assert single["messages"][2]["content"].startswith("```python\n") and "def fizzbuzz" in single["messages"][2]["content"]
    assert json.loads(single["tools"]) == []
    assert agentic["runtime"]["hash"] and any(p.startswith("pytest==") for p in agentic["runtime"]["packages"])
    assert set(agentic) == set(single)  # one schema for every line
    datasets = pytest.importorskip("datasets", reason="datasets is not installed: the plain JSONL was checked above")
    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == 2 and set(loaded.column_names) == set(single)
    assert loaded[0]["messages"][0]["role"] == "system"


def test_export_from_an_env_trajectory_and_masked_episodes_are_left_out(tmp_path):
    path = tmp_path / "traj.jsonl"
    env = agentenv.CodingEnv(example("fizzbuzz"), trajectory=str(path))
    env.reset(seed=1)
    env.step(FIZZBUZZ)
    env.reset(seed=2)  # an episode never finished: not exported
    env.close()
    lines = path.read_text().splitlines()
    masked = json.loads(lines[0])
    masked.update(episode_id="masked1", reward_masked=True, infra_error="SandboxError: gone")
    path.write_text("\n".join(lines + [json.dumps(masked)]) + "\n")
    out = tmp_path / "chat.jsonl"
    assert main(["export", str(path), "--format", "chat", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["reward"] == 1.0
    assert main(["export", str(path), "--format", "chat", "-o", str(out), "--include-masked"]) == 0
    assert sorted(json.loads(line)["reward_masked"] for line in out.read_text().splitlines()) == [False, True]


def test_export_names_what_it_cannot_read(tmp_path, capfd):
    assert main(["export", str(tmp_path), "--format", "chat"]) == 1
    assert "trajectories.jsonl" in capfd.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "reset"}\nnot json\n{"type": "step"}\n')
    assert main(["export", str(bad), "--format", "chat"]) == 1
    assert "bad.jsonl:2: not a JSON line" in capfd.readouterr().err


def test_reverify_recomputes_a_changed_rule_from_stored_metrics(eval_run, tmp_path, capfd):
    logic = tmp_path / "logic.json"
    logic.write_text(json.dumps({"type": "composite", "rules": [
        {"metric": "test_pass_rate", "weight": 0.5, "threshold": 1.0, "scoring": "step"},
        {"metric": "tests_failed", "weight": 0.5, "threshold": 0.5, "scoring": "step"},
        {"metric": "tests_total", "weight": 1.0, "threshold": 1000}]}))
    out = tmp_path / "rescored.jsonl"
    assert main(["reverify", str(eval_run), "--reward-logic", str(logic), "-o", str(out)]) == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["method"] for r in results} == {"stored"} and all(r["changed"] for r in results)
    by_task = {r["task_id"]: r for r in results}
    assert by_task["examples.fizzbuzz"]["new_reward"] == pytest.approx(1.0 + 4 / 1000)
    assert "2 changed" in capfd.readouterr().err
    logic.write_text(json.dumps({"type": "composite", "rules": [{"metric": "test_pas_rate", "weight": 1}]}))
    assert main(["reverify", str(eval_run), "--reward-logic", str(logic)]) == 1
    err = capfd.readouterr().err
    assert str(logic) in err and "/rules/0/metric" in err and "did you mean 'test_pass_rate'" in err


def test_reverify_leaves_out_episodes_whose_records_it_cannot_read(eval_run, tmp_path, capfd):
    # a reward of "abc", scored runs of strings or ints, a metric of 10**400 raised out of reverify (red team, stop 37)
    lines = (eval_run / "trajectories.jsonl").read_text().splitlines()
    for crafted in ({"reward": "abc"}, {"scored_runs": "x"}, {"scored_runs": [1, 2]},
                    {"scored_runs": [{"test_pass_rate": 10 ** 400}]}):
        records = [json.loads(line) for line in lines]
        # (a step that holds scored runs, an evaluation's: an agentic episode's first steps hold none,
        # and which episode the file holds first depends on which finished first)
        target = next(r for r in records if r.get("type") == ("episode" if "reward" in crafted else "step")
                      and (r.get("scored_runs") or "reward" in crafted))
        target.update(crafted)
        run = tmp_path / "run.jsonl"
        run.write_text("".join(json.dumps(r) + "\n" for r in records))
        assert main(["reverify", str(run)]) == 0, crafted
        err = capfd.readouterr().err
        assert "1 episodes rescored" in err and "left out: 1 malformed" in err, (crafted, err)


def test_reverify_rerun_rescores_old_rollouts_against_a_fixed_task(tmp_path):
    task_dir = tmp_path / "fizz"
    shutil.copytree(os.path.join(EXAMPLES, "fizzbuzz"), task_dir)
    tests = task_dir / "workspace" / "tests" / "test_fizzbuzz.py"
    weak = tests.read_text()
    tests.write_text("from fizzbuzz import fizzbuzz\n\n\ndef test_first():\n    assert fizzbuzz(1) == ['1']\n")
    hack = "def fizzbuzz(n):\n    return ['1']\n"
    path = tmp_path / "traj.jsonl"
    env = agentenv.CodingEnv(str(task_dir / "task.json"), trajectory=str(path))
    rewards = []
    for code in (FIZZBUZZ, hack):
        env.reset(seed=0)
        rewards.append(env.step(code)[1])
    env.close()
    assert rewards == [1.0, 1.0]  # the weak test is fooled
    tests.write_text(weak)  # the task is fixed
    out = tmp_path / "rescored.jsonl"
    assert main(["reverify", str(path), "--rerun", "--task", str(task_dir / "task.json"), "-o", str(out)]) == 0
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["method"], r["old_reward"], r["new_reward"]) for r in results] == [("replay", 1.0, 1.0), ("replay", 1.0, 0.0)]
    assert results[0]["diverged_steps"] == 1  # the test output changed with the tests
    assert not results[0]["runtime_changed"]
