"""The extra built-in agents (random, replay, command, openai), each playing real episodes."""

from __future__ import annotations

import http.server
import json
import os
import sys
import textwrap
import threading

import pytest

import agentenv
from agentenv import CodingEnv, InfrastructureError, make_agent, run_episode
from agentenv import load_task
from agentenv import AgentError
from agentenv.builtin.agents_extra import MAX_JSON_CANDIDATES, extract_action, extract_code, parse_openai_spec
from agentenv import bundled_dir

EXAMPLES = os.path.join(bundled_dir("tasks"), "examples")
FIZZ = load_task(os.path.join(EXAMPLES, "fizzbuzz", "task.json"))  # single-shot
BANK = load_task(os.path.join(EXAMPLES, "bank_transfer", "task.json"))  # agentic only
DISK = load_task(os.path.join(EXAMPLES, "disk_report", "task.json"))  # shell runtime: fast episodes


def play(task, spec, mode, seed=None, trajectory=None):
    env = CodingEnv(task, mode=mode, trajectory=trajectory)
    try:
        return run_episode(env, make_agent(spec, task, mode), seed=seed)
    finally:
        env.close()


def test_every_extra_agent_is_registered_with_help():
    agents = agentenv.registry().agents
    for name in ("random", "replay", "command", "openai", "reference", "noop"):
        assert name in agents and agents[name].help


# --------------------------------------------------------------------------- random

def test_random_agent_is_reproducible_from_the_seed_and_plays_both_modes():
    runs = [play(DISK, "random", "agentic", seed=s) for s in (5, 5)]
    assert [s["action"] for s in runs[0].steps] == [s["action"] for s in runs[1].steps]
    assert runs[0].steps[-1]["action"] == {"action": "submit"}
    assert not runs[0].success and not runs[0].reward_masked
    shot = play(FIZZ, "random:3", "single_shot")
    assert shot.rounds == 1 and not shot.success and not shot.reward_masked


def test_random_agent_rejects_a_seed_that_is_not_an_integer():
    with pytest.raises(AgentError, match="random:7"):
        make_agent("random:abc", FIZZ, "single_shot")


# --------------------------------------------------------------------------- replay

def test_replay_plays_a_recorded_trajectory_back_to_success(tmp_path):
    records = []
    original = play(BANK, "reference", "agentic", trajectory=records.append)
    assert original.success
    path = tmp_path / "actions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))  # reset records are skipped
    replayed = play(BANK, f"replay:{path}", "agentic")
    assert replayed.success and replayed.rounds == original.rounds


def test_replay_of_plain_action_lines_submits_when_they_run_out(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"action": {"action": "list_files"}}) + "\n")
    result = play(BANK, f"replay:{path}", "agentic")
    assert [s["action"]["action"] for s in result.steps] == ["list_files", "submit"]


def test_replay_errors_name_the_file_and_line(tmp_path):
    with pytest.raises(AgentError, match="cannot read .*missing.jsonl"):
        make_agent(f"replay:{tmp_path}/missing.jsonl", BANK, "agentic")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"action": {"action": "submit"}}\nnot json\n{"action": 1}\n')
    with pytest.raises(AgentError, match=r"bad.jsonl:2: not JSON"):
        make_agent(f"replay:{bad}", BANK, "agentic")
    # a crafted recording ended `agentenv run` in a traceback (red team, stop 37)
    submit = '{"action": {"action": "submit"}}\n'
    for line, why in (("[" * 100_000, "nested too deeply"), ('{"action": 1, "sample": ' + "9" * 5000 + "}", "digits"),
                      ('{"action": 1, "sample": [1]}', "must be numbers or text")):
        crafted = tmp_path / "crafted.jsonl"
        crafted.write_text(line + "\n" + submit)
        with pytest.raises(AgentError, match=rf"crafted.jsonl:1: .*{why}"):
            make_agent(f"replay:{crafted}", BANK, "agentic")
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"task_id": "someone.else", "action": {"action": "submit"}}) + "\n")
    with pytest.raises(AgentError, match="no actions for task 'examples.bank_transfer'"):
        make_agent(f"replay:{other}", BANK, "agentic")


# --------------------------------------------------------------------------- command

POLICY = textwrap.dedent("""
    import json, sys
    log = open(sys.argv[1], "a")
    solution = open(sys.argv[2]).read() if len(sys.argv) > 2 else None
    for line in sys.stdin:
        msg = json.loads(line)
        log.write(line); log.flush()
        if msg["mode"] == "single_shot":
            print(json.dumps(solution), flush=True)
        elif msg["round"] == 0:
            print(json.dumps({"action": "run_command", "command": "echo hello-from-policy"}), flush=True)
        else:
            print(json.dumps({"action": "submit"}), flush=True)
""")


def test_command_agent_speaks_json_lines_with_an_external_program(tmp_path):
    script, log = tmp_path / "policy.py", tmp_path / "log.jsonl"
    script.write_text(POLICY)
    solution = os.path.join(EXAMPLES, "fizzbuzz", "solution", "fizzbuzz.py")
    shot = play(FIZZ, f"command:{sys.executable} {script} {log} {solution}", "single_shot")
    assert shot.success and shot.reward == 1.0
    agentic = play(BANK, f"command:{sys.executable} {script} {log}", "agentic")
    assert "hello-from-policy" in agentic.steps[0]["output"]
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    assert messages[0]["type"] == "observation" and messages[0]["task_id"] == "examples.fizzbuzz"
    assert messages[0]["new_episode"] is True and "FizzBuzz" in messages[0]["prompt"]
    assert [m["new_episode"] for m in messages[1:]] == [True, False]
    assert messages[2]["output"].startswith("$ echo hello-from-policy")


def test_command_agent_reports_a_program_that_answers_garbage_or_dies(tmp_path):
    agent = make_agent(f"command:{sys.executable} -c \"print('hello')\"", BANK, "agentic")
    agent.reset(BANK, "agentic")
    with pytest.raises(AgentError, match="not JSON: 'hello"):
        agent.act({"prompt": "p", "output": "", "round": 0}, {})
    agent.close()
    dead = make_agent(f"command:{sys.executable} -c pass", BANK, "agentic")
    dead.reset(BANK, "agentic")
    with pytest.raises(AgentError, match="(closed its stdout|exited)"):
        dead.act({"prompt": "p", "output": "", "round": 0}, {})
    with pytest.raises(AgentError, match="cannot start 'no-such-program-xyz'"):
        missing = make_agent("command:no-such-program-xyz", BANK, "agentic")
        missing.reset(BANK, "agentic")
        missing.act({"prompt": "p", "output": "", "round": 0}, {})


# --------------------------------------------------------------------------- openai

class ChatServer:
    """A tiny OpenAI-compatible /v1/chat/completions server on 127.0.0.1, answering from a script."""

    def __init__(self, replies, status=200):
        self.replies, self.status, self.requests = list(replies), status, []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                if server.status != 200:
                    self.send_response(server.status)
                    self.end_headers()
                    self.wfile.write(b"overloaded")
                    return
                content = server.replies.pop(0) if server.replies else '{"action": "submit"}'
                data = json.dumps({"id": "x", "object": "chat.completion", "model": body["model"],
                                   "choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def test_openai_agent_solves_single_shot_from_a_fenced_reply(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    solution = open(os.path.join(EXAMPLES, "fizzbuzz", "solution", "fizzbuzz.py")).read()
    with ChatServer([f"Here is the fix:\n```python\n{solution}```\nDone."]) as server:
        result = play(FIZZ, f"openai:{server.url}#tiny-coder&temperature=0.2", "single_shot", seed=11)
    assert result.success
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "tiny-coder" and body["temperature"] == 0.2 and body["seed"] == 11
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "fizzbuzz.py" in body["messages"][1]["content"]


def test_openai_agent_keeps_the_conversation_in_agentic_mode():
    replies = ['I will look first: {"action": "run_command", "command": "echo probe-123"}', "submit now",
               '```json\n{"action": "submit"}\n```']
    with ChatServer(replies) as server:
        result = play(BANK, f"openai:{server.url}#m", "agentic")
    assert "probe-123" in result.steps[0]["output"]
    assert "invalid action" in result.steps[1]["output"]  # the model sees why "submit now" was refused
    assert result.steps[2]["action"] == {"action": "submit"} and result.terminated
    last = server.requests[-1]["body"]["messages"]
    assert [m["role"] for m in last] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "probe-123" in last[3]["content"]


def test_openai_agent_turns_a_failing_endpoint_into_an_infrastructure_error():
    with ChatServer([], status=503) as server:
        agent = make_agent(f"openai:{server.url}#m", BANK, "agentic")
        agent.retries = 2
        agent.reset(BANK, "agentic")
        with pytest.raises(InfrastructureError, match="failed 2 times; last: HTTP 503"):
            agent.act({"prompt": "p", "output": "", "round": 0}, {})
    assert len(server.requests) == 2


def test_openai_spec_and_reply_parsing():
    assert parse_openai_spec("http://h:1/v1#m&max_tokens=9&stop=END") == ("http://h:1/v1", "m",
                                                                        {"max_tokens": 9, "stop": "END"})
    for bad in (None, "http://h/v1", "h/v1#m", "http://h/v1#m&oops"):
        with pytest.raises(AgentError):
            parse_openai_spec(bad)
    assert extract_code("no fence") == "no fence"
    assert extract_action('x {"a": 1} {"action": "read_file", "path": "p"}') == {"action": "read_file", "path": "p"}
    assert extract_action("nothing") == "nothing"


def test_a_reply_nested_past_the_recursion_limit_costs_one_round_not_the_episode():
    """``extract_action`` caught only JSONDecodeError: JSON nested deeper than the recursion limit
    raised RecursionError out of ``act`` and the episode ended as the agent's error."""
    deep = '{"a": ' * 3000
    assert extract_action(deep) == deep
    with ChatServer([deep, '{"action": "submit"}']) as server:
        result = play(BANK, f"openai:{server.url}#m", "agentic")
    assert "invalid action" in result.steps[0]["output"]  # answered as one invalid action
    assert result.steps[1]["action"] == {"action": "submit"} and result.terminated


def test_extract_action_tries_a_bounded_number_of_candidates():
    action = '{"action": "submit"}'
    assert extract_action("{" * (MAX_JSON_CANDIDATES - 1) + action) == {"action": "submit"}
    assert extract_action("{" * MAX_JSON_CANDIDATES + action) == "{" * MAX_JSON_CANDIDATES + action
    fenced = "{" * MAX_JSON_CANDIDATES + f"\n```json\n{action}\n```"  # fenced blocks are tried first
    assert extract_action(fenced) == {"action": "submit"}
