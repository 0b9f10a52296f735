"""Build the logs suite from fixed seeds: logs, expected answers, reference solutions, task documents.

    python tasks/logs/build.py                # rewrite every task (deterministic)
    python tasks/logs/build.py --check        # exit 1 when an inlined check program is stale
    python tasks/logs/build.py --inline-only  # rewrite only the inlined check programs

Two kinds of task (README.md): *questions* about the logs in the workspace, answered in
``answers.json`` (agentic), and *scripts* that must compute the answers from any log of the same
shape, scored only on hidden logs (single-shot or agentic). Answers come from the events the
generator (``logsim.py``) planted, and the build checks that each reference script reproduces them
on every log set and that every hidden answer differs from the visible log's (so an answer written
down for the visible log earns nothing).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "_harness"))
sys.path.insert(0, HERE)
import buildlib  # noqa: E402
import logsim  # noqa: E402

QUESTIONS = {
    "total_requests": "the number of requests in access.log (an integer)",
    "status_classes": 'responses per status class, e.g. {"2xx": 1200, "4xx": 30, "5xx": 4} (classes that occur only)',
    "server_errors": "the number of 5xx responses",
    "error_rate": "5xx responses / all requests, rounded to 4 decimals",
    "distinct_clients": "the number of distinct client IP addresses",
    "top_client": "the client IP address with the most requests (ties: the alphabetically first)",
    "first_error_rid": "the request id (rid=) of the first 5xx response in the log",
    "first_error_time": 'the time of that response, "YYYY-MM-DDTHH:MM:SSZ" (UTC)',
    "top_error_endpoint": "the endpoint with the most 5xx responses (ties: the alphabetically first)",
    "errors_by_endpoint": "5xx responses per endpoint, as an object",
    "top_error_clients": "the three client IPs with the most 5xx responses, most first (ties: alphabetical)",
    "root_cause": "the component in app.log that failed first and caused the failed requests (its component= value)",
    "incident_start": 'the time of that component\'s first WARN or ERROR line, "YYYY-MM-DDTHH:MM:SSZ"',
    "affected_services": "the services (service= values, not infra) that logged errors from that component, sorted",
    "deploy_time": 'the time of the deployment logged in app.log, "YYYY-MM-DDTHH:MM:SSZ"',
    "first_error_after_deploy": "the request id of the first 5xx response after the deployment",
    "regressed_endpoint": "the endpoint with the most 5xx responses after the deployment",
    "slowest_endpoint": "the endpoint with the highest p95 latency (ties: alphabetically first)",
    "slowest_endpoint_p95_ms": "that p95 latency in milliseconds (an integer)",
    "p95_ms": "p95 latency in milliseconds per endpoint, as an object",
    "rate_limited_client": "the client IP address that received 429 responses",
    "rate_limited_requests": "the number of 429 responses",
    "error_signatures": "the three most frequent ERROR messages of app.log with every digit run replaced by N, "
                        'with their counts, most first (ties: alphabetical): [["message", count], ...]',
    "failed_logins": 'the number of "Failed password" lines',
    "attackers": "the source IPs with at least 10 failed logins, most failures first (ties: alphabetical)",
    "top_attacker": "the source IP with the most failed logins",
    "top_attacker_failures": "its number of failed logins",
    "compromised_user": "the account an attacking IP (>= 10 failures) then logged into with a password, or null",
    "compromise_source": "the IP address that logged in that way, or null",
    "invalid_users": 'the number of distinct user names in "invalid user" lines',
    "oom_process": "the name of the process the kernel's OOM killer killed",
    "oom_pid": "its pid (an integer)",
    "oom_service": "the systemd unit it belonged to",
    "oom_time": 'the syslog timestamp of the "Out of memory: Killed process" line, as written there',
    "oom_anon_rss_kb": "the killed process's anon-rss in kB (an integer)",
}
CONVENTIONS = ("An endpoint is the method and the path with the query string dropped and every path segment or "
               "dot-separated part made only of digits, or of 8 or more hex digits, written {id}, e.g. "
               "\"GET /api/orders/{id}\". Latency is the rt= field; p95 is the nearest-rank 95th percentile over "
               "the requests that did not fail (status < 500) of endpoints with at least 20 of them. ")


def web_set(**kw):
    return lambda seed: logsim.web(seed, **kw)


def auth_set(**kw):
    return lambda seed: logsim.auth(seed, **kw)


def sys_set(**kw):
    return lambda seed: logsim.system(seed, **kw)


# name: (kind, generator, files shipped, fields, seed(s), difficulty, the situation)
QUESTION_TASKS = {
    "web_traffic_summary": (web_set(), ["access.log"], ["total_requests", "status_classes", "distinct_clients",
                                                        "top_client"], 101, "easy",
                            "Product wants a traffic summary of the last half hour of our edge nginx."),
    "web_first_failure": (web_set(incident="payment-gw"), ["access.log"], ["server_errors", "first_error_rid",
                                                                           "first_error_time", "top_error_endpoint"],
                          102, "easy", "Checkout alerts fired; support needs the first failing request to trace it."),
    "incident_root_cause": (web_set(incident="db-pool"), ["access.log", "app.log"],
                            ["root_cause", "incident_start", "affected_services", "server_errors"], 103, "medium",
                            "Orders and checkout failed for a few minutes; write the incident timeline's key facts."),
    "cache_outage": (web_set(incident="redis-cache"), ["access.log", "app.log"],
                     ["root_cause", "affected_services", "top_error_endpoint", "error_signatures"], 104, "medium",
                     "Cart and catalog errors this afternoon; the post-mortem needs the cause and the error signatures."),
    "deploy_regression": (web_set(deploy=True), ["access.log", "app.log"],
                          ["deploy_time", "first_error_after_deploy", "regressed_endpoint"], 105, "medium",
                          "500s started after today's release; find which endpoint regressed and the first bad request."),
    "slow_endpoint": (web_set(), ["access.log"], ["slowest_endpoint", "slowest_endpoint_p95_ms", "total_requests"], 106,
                      "medium", "The latency SLO dashboard is broken; compute the p95 of the slowest endpoint by hand."),
    "rate_limit_abuse": (web_set(rate_limit_ip=True), ["access.log"],
                         ["rate_limited_client", "rate_limited_requests", "top_client"], 107, "easy",
                         "Someone hammered the product API and got rate-limited; identify them."),
    "ssh_bruteforce": (auth_set(), ["auth.log"], ["failed_logins", "top_attacker", "top_attacker_failures",
                                                  "compromised_user", "compromise_source"], 108, "medium",
                       "The bastion host is being password-guessed; did anyone get in?"),
    "ssh_invalid_users": (auth_set(attackers=3, compromise=False), ["auth.log"],
                          ["attackers", "invalid_users", "compromised_user"], 109, "medium",
                          "Security asks for the list of guessing sources to block, and whether any succeeded."),
    "oom_kill": (sys_set(), ["syslog"], ["oom_process", "oom_pid", "oom_service", "oom_time", "oom_anon_rss_kb"], 110,
                 "easy", "A service restarted overnight; the kernel killed something. Which process and unit?"),
    "tls_expiry": (web_set(incident="tls-proxy"), ["access.log", "app.log"],
                   ["root_cause", "incident_start", "server_errors", "first_error_rid"], 111, "medium",
                   "Logins failed this morning; find what broke first and when."),
}

# name: (generator per seed, files, fields, reference script, seeds [visible, hidden...], difficulty, situation)
SCRIPT_TASKS = {
    "script_status_report": (web_set(incident="payment-gw"), ["access.log"],
                             ["total_requests", "status_classes", "server_errors", "error_rate"], "status_report.py",
                             [201, 202, 203], "easy", "a status-class report our on-call bot posts every hour"),
    "script_error_endpoints": (None, ["access.log"],
                               ["errors_by_endpoint", "top_error_endpoint", "top_error_clients"], "error_endpoints.py",
                               [211, 212, 213], "medium", "the 'which endpoints and clients get 5xx' report"),
    "script_root_cause": (None, ["access.log", "app.log"], ["root_cause", "incident_start", "affected_services"],
                          "root_cause.py", [221, 222, 223], "hard",
                          "a first-responder script that names the root-cause component of an incident"),
    "script_ssh_attackers": (auth_set(), ["auth.log"], ["attackers", "compromised_user", "compromise_source"],
                             "ssh_attackers.py", [231, 234, 235], "medium",
                             "the nightly report of password-guessing sources and compromised accounts"),
    "script_latency_p95": (web_set(), ["access.log"], ["p95_ms", "slowest_endpoint"], "latency_p95.py",
                           [241, 246, 248], "medium", "the p95 latency table of the SLO dashboard"),
    "script_oom_report": (sys_set(), ["syslog"], ["oom_process", "oom_pid", "oom_service"], "oom_report.sh",
                          [251, 252, 253], "easy", "a shell helper for the OOM-kill runbook"),
}
# a different cause in each log set (for the error report too: under one cause the endpoint that fails
# most had two possible values, so the hidden sets' answer was the one the sample did not give)
ROOT_CAUSE_INCIDENTS = ["db-pool", "redis-cache", "search-index"]


OTHER_INCIDENTS = ("script_root_cause", "script_error_endpoints")


def _logset(name, generator, seed, index):
    if name in OTHER_INCIDENTS:
        return logsim.web(seed, incident=ROOT_CAUSE_INCIDENTS[index])
    return generator(seed)


def _reset(folder: str, keep_solution: bool = False) -> None:
    for sub in ("workspace", "hidden") + (() if keep_solution else ("solution",)):
        shutil.rmtree(os.path.join(folder, sub), ignore_errors=True)


def _base_doc(name: str, description: str, difficulty: str, tags: list[str], program: str, runtime: str) -> dict:
    return {
        "task_id": f"logs.{name}", "version": 0, "description": description,
        "environment_config": {"runtime": runtime, "dependencies": buildlib.PYTHON_DEPS},
        "workspace": {"root": "/app", "directory": "workspace"},
        "hidden_files": {"directory": "hidden", "files": buildlib.check_files(HERE, [program, "compare.py"])},
        "protected_paths": [".check/**", "logs/**"],
        "execution_steps": [buildlib.reward_step(program)],
        "reward_logic": {"type": "composite", "rules": [{"metric": "report_score", "weight": 1.0, "aggregation": "last"}]},
        "limits": {"wall_time_s": 60, "memory_mb": 512},
        "max_rounds": 30,
        "reference_solution": {"directory": "solution"},
        "tags": tags, "difficulty": difficulty, "expected_duration_s": 1.0,
    }


def _field_list(fields):
    return "".join(f"\n- `{f}`: {QUESTIONS[f]}" for f in fields)


def build_question(name):
    generator, files, fields, seed, difficulty, situation = QUESTION_TASKS[name]
    folder = os.path.join(HERE, name)
    _reset(folder)
    logset = generator(seed)
    for f in files:
        buildlib.write(os.path.join(folder, "workspace", "logs", f), logset.files[f])
    expected = {f: logset.facts[f] for f in fields}
    buildlib.write(os.path.join(folder, "hidden", ".check", "expected.json"), buildlib.dump(expected))
    buildlib.write(os.path.join(folder, "solution", "answers.json"), buildlib.dump(expected))
    shown = ", ".join(f"`logs/{f}`" for f in files)
    description = (f"{situation} Read {shown} and write `answers.json` in the workspace root: one JSON object with "
                   f"these keys:{_field_list(fields)}\n\n{CONVENTIONS}Each answer is checked exactly; the score is "
                   "the share of right answers.")
    doc = _base_doc(name, description, difficulty, ["logs", "log-analysis", "questions"], "check_answers.py", "python3.11")
    doc["metadata"] = {"generator": "tasks/logs/build.py", "seed": seed, "kind": "questions"}
    buildlib.write(os.path.join(folder, "task.json"), buildlib.dump(doc))
    return f"{name}: {len(fields)} questions"


def build_script(name):
    generator, files, fields, reference, seeds, difficulty, situation = SCRIPT_TASKS[name]
    folder = os.path.join(HERE, name)
    _reset(folder, keep_solution=True)
    shell = reference.endswith(".sh")
    script = "analyze.sh" if shell else "analyze.py"
    source = buildlib.read(os.path.join(folder, "solution", script))  # hand-written: the build only checks it
    sets = [_logset(name, generator, seed, i) for i, seed in enumerate(seeds)]
    expected = [{f: s.facts[f] for f in fields} for s in sets]
    # a field is graded on a hidden set only where its answer differs from the visible log's: an answer
    # written down for the visible log then earns exactly nothing
    graded = [{f: v for f, v in e.items() if v != expected[0][f]} for e in expected[1:]]
    for f in fields:
        if not any(f in g for g in graded):
            raise SystemExit(f"{name}: field {f} is the same in every log set; pick other seeds")
        answers = [json.dumps(g[f], sort_keys=True) for g in graded if f in g]
        if len(set(answers)) < len(answers):  # a constant would earn it on more than one set
            raise SystemExit(f"{name}: field {f} has the same answer on two hidden sets; pick other seeds")
    for i, s in enumerate(sets):  # the reference must compute every answer from the log alone
        got = _run_reference(source, shell, files, s.files)
        if got != expected[i]:
            raise SystemExit(f"{name}: the reference script gives {got} on set {i}, expected {expected[i]}")
    rels = [f"logs/{f}" for f in files]
    for f in files:
        buildlib.write(os.path.join(folder, "workspace", "logs", f), sets[0].files[f])
    for n, s in enumerate(sets[1:], start=1):
        for f in files:
            buildlib.write(os.path.join(folder, "hidden", ".check", "sets", str(n), f + ".gz"),
                           gzip.compress(s.files[f].encode(), mtime=0))
    command = ["bash", script] if shell else ["python", script]
    cfg = {"command": command, "timeout_s": 20, "sets": [{"files": rels, "expected": g} for g in graded]}
    buildlib.write(os.path.join(folder, "hidden", ".check", "script.json"), buildlib.dump(cfg))
    stub = ("#!/bin/bash\n# " + f"usage: bash {script} {' '.join(rels)}\n" + "echo '{}'\n") if shell else \
        (f'"""usage: python {script} {" ".join(rels)}"""\nimport json\nimport sys\n\nprint(json.dumps({{}}))\n')
    buildlib.write(os.path.join(folder, "workspace", script), stub)
    call = f"`{' '.join(command + rels)}`"
    description = (f"Write {situation}: `{script}` in the workspace root, called as {call}, must print one JSON "
                   f"object with these keys:{_field_list(fields)}\n\n{CONVENTIONS}`logs/` holds a sample; the script "
                   f"is scored only on other logs of the same format and shape that you do not see (a different day, "
                   f"other numbers{', a different incident' if name in OTHER_INCIDENTS else ''}), each field "
                   "checked exactly (a field counts on a log where its answer differs from the sample's). Standard library only" + (" (bash, coreutils, grep, sed, awk)." if shell else "."))
    doc = _base_doc(name, description, difficulty, ["logs", "log-analysis", "script", "hidden-inputs"],
                    "check_script.py", "shell" if shell else "python3.11")
    doc["execution_steps"].insert(0, {"action": "overwrite_file", "path": f"/app/{script}",
                                      "content": "<model_generated_code>"})
    doc["metadata"] = {"generator": "tasks/logs/build.py", "seeds": seeds, "kind": "script", "hidden_sets": len(sets) - 1}
    buildlib.write(os.path.join(folder, "task.json"), buildlib.dump(doc))
    return f"{name}: {len(fields)} fields x {len(sets) - 1} hidden log sets"


def _run_reference(source, shell, files, contents):
    import json
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            buildlib.write(os.path.join(tmp, "logs", f), contents[f])
        buildlib.write(os.path.join(tmp, "analyze"), source)
        cmd = ["bash", "analyze"] if shell else [sys.executable, "analyze"]
        out = subprocess.run(cmd + [f"logs/{f}" for f in files], cwd=tmp, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)


def main(argv):
    done = buildlib.maintenance(HERE, argv)
    if done is not None:
        return done
    for name in QUESTION_TASKS:
        print(build_question(name))
    for name in SCRIPT_TASKS:
        print(build_script(name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
