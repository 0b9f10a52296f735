"""Built-in report formats: pytest under the trusted judge, JUnit XML, pytest-json-report, reward files.

``pytest`` is chosen by itself for any command that runs pytest: the command runs under the trusted
judge (``_pytest_judge.py``), with the task's own configuration, and its authenticated report is
read through a fresh, unguessable named pipe (docs/architecture.md, docs/security.md). The other
formats are named by a step (``"report": {"format": "junit", "path": "/app/out.xml"}``) for test
runners that write a report file themselves (``go test`` through go-junit-report, jest, cargo
nextest) or for a check that writes a score (``reward_file``, Harbor's ``reward.txt``). Their
report is written by the command the task runs, so the command must be the task's own program
(a protected or hidden file), never the agent's: docs/security.md says what each guarantees.
A missing or unparsable report is a report with status "missing", never an exception.
"""

from __future__ import annotations

import abc
import hashlib
import hmac
import json
import os
import re
import secrets
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

import agentenv
from agentenv import ExecResult, ReportFormat, RuntimeEnv, ScoredCommand, ScoringContext, TestReport

_PYTEST = re.compile(r"(?:(?<=^)|(?<=[\s;&|(]))((?:\S*/)?(?:py\.test|pytest)|(?:\S*/)?python[\d.]*\s+(?:-\S+\s+)*?-m\s+pytest)(?=\s|$)")
_JSON_FILE = re.compile(r"--json-report-file[= ](\S+)")
_MARKER_OPTION = re.compile(r"(?<=\s)-m(?:\s+|=)?(?:'[^']*'|\"[^\"]*\"|[^\s;&|]+)")
_JUNIT_FILE = re.compile(r"--junit-?xml[= ](\S+)")
_STRIPPED_OPTIONS = re.compile(r"\s--json-report-file[= ]\S+|\s--json-report-(?:indent|omit|summary)(?:[= ]\S+)?"
                               r"|\s--json-report\b|\s--junit-?xml[= ]\S+|\s-o\s+junit_family=\S+")
_CONFIG_NAMES = (("pytest.ini", None), (".pytest.ini", None), ("pyproject.toml", "[tool.pytest.ini_options]"),
                 ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))
JUDGE_SOURCE = "_pytest_judge.py"
# Observations depend on the program only: the host's speed is in info["measurements"].
_PYTEST_DURATION = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?")
#: a step's report path: an absolute sandbox path (the report is read from there after the run)
_PATH_OPTION = {"type": "string", "pattern": "^/[^\\x00]*$", "maxLength": 4000}


def is_pytest_command(command: str) -> bool:
    """Whether *command* runs pytest (``pytest``, ``py.test``, ``python -m pytest``, with a path)."""
    return _PYTEST.search(command) is not None


def judge_source() -> bytes:
    with open(os.path.join(os.path.dirname(__file__), JUDGE_SOURCE), "rb") as f:
        return f.read()


#: the name under which a warm interpreter holds the judge it executed before any command (_nswarm)
JUDGE_MODULE = "agentenv_judge"
# The module a scored run names with ``-p``: it takes the judge from the warm interpreter when that
# one is this very source (its digest), else compiles the copy written beside it, and starts it.
# Nothing but pytest and its plugins named with -p has run when it is imported.
_JUDGE_ENTRY = '''"""PYTEST_DONT_REWRITE: agentenv's trusted judge, for one scored run."""
import sys as _sys

_judge = _sys.modules.pop("{module}", None)
if getattr(_judge, "DIGEST", None) != "{digest}":
    _judge = type(_sys)("{module}")
    with open(__file__[:-len("{entry}.py")] + "judge_core.py", "rb") as _f:
        exec(compile(_f.read(), "<judge>", "exec", dont_inherit=True), vars(_judge))
_judge.start(__file__)
globals().update((_n, getattr(_judge, _n)) for _n in dir(_judge) if _n.startswith("pytest_"))
'''


def judge_digest(source: bytes) -> str:
    """What an entry module compares with the digest of the warm interpreter's judge (both from here)."""
    return hashlib.sha256(source).hexdigest()


def judge_files(work: str, entry: str) -> dict[str, bytes]:
    """The files of a scored run's judge under *work*: the entry module *entry* and the judge."""
    source = judge_source()
    text = _JUDGE_ENTRY.format(module=JUDGE_MODULE, digest=judge_digest(source), entry=entry)
    return {f"{work}/{entry}.py": text.encode(), f"{work}/judge_core.py": source}


def trusted_config(files: Mapping[str, bytes]) -> tuple[str, bytes]:
    """The pytest configuration the task itself provides (pristine and hidden files), as pytest would
    pick it at the workspace root; an empty one where there is none."""
    for name, section in _CONFIG_NAMES:
        data = files.get(name)
        if data is not None and (section is None or section.encode() in data):
            return name, data
    return "pytest.ini", b"[pytest]\n"



# --------------------------------------------------------------------------- pytest, judged

#: a directory no one can create (procfs): Python finds no bytecode there and writes none
NO_BYTECODE_CACHE = "/proc/agentenv-no-bytecode-cache"


def _startup_path(runtime: RuntimeEnv) -> tuple[list[str], list[str]]:
    """The runtime's ``PYTHONPATH`` entries split in two: those inside its read-only trees, which stay
    in the scored run's environment, and the rest (the workspace, ``/tmp``, a relative entry), which
    the judge puts on ``sys.path`` itself once pytest and the judge are loaded. A folder the agent
    can write on the path at start-up ran its ``sitecustomize`` (a package escaped the protected
    names), or its ``_pytest.py``, ``iniconfig.py`` or ``json.py``, before the judge: such code
    rewrote the judge's source as it was compiled, and an unsolved task scored 1.0, integrity clean
    (red team, stop 40)."""
    kept, deferred = [], []
    trees = [os.path.join(os.path.normpath(m), "") for m in runtime.mounts]
    pythonpath = runtime.env.get("PYTHONPATH")
    for entry in pythonpath.split(":") if pythonpath else ():
        inside = os.path.isabs(entry) and any(os.path.join(os.path.normpath(entry), "").startswith(t) for t in trees)
        (kept if inside else deferred).append(entry)
    return kept, deferred


def _digests(ctx: ScoringContext) -> dict[str, str | None]:
    """Sandbox path -> SHA-256 of the task's bytes, for each file the task decides (protected and
    hidden): the judge refuses a test module or conftest whose source is not the task's."""
    prefix = ctx.root.rstrip("/") + "/"
    out: dict[str, str | None] = {}
    for path in sorted(ctx.trusted_paths):
        data = ctx.task_files.get(path[len(prefix):]) if path.startswith(prefix) else None
        out[path] = hashlib.sha256(data).hexdigest() if data is not None else None
    return out


class PytestFormat(ReportFormat):
    """pytest, decided by the trusted judge (not by its output or its own report files)."""

    name = "pytest"
    description = "pytest run under agentenv's trusted judge; chosen by itself for any pytest command"

    def matches(self, command: str) -> bool:
        return is_pytest_command(command)

    def instrument(self, command: str, ctx: ScoringContext) -> ScoredCommand:
        """Run pytest under the trusted judge (``_pytest_judge.py``): an explicit configuration taken
        from the task's own files (``-c``, ``--rootdir``), so nothing the agent writes
        (``.pytest.ini``, ``*.dist-info`` entry points, ``PYTEST_ADDOPTS``, planted ``__pycache__``)
        changes what pytest loads; the judge's report goes to a fresh, unguessable named pipe, line
        by line, each line authenticated with a key only the host and the judge know."""
        m = _PYTEST.search(command)
        if not m:
            return ScoredCommand(command)
        nonce, root = ctx.nonce, ctx.root
        head, tail = command[:m.end(1)], _STRIPPED_OPTIONS.sub("", command[m.end(1):])
        work = f"/tmp/.agentenv-{nonce}"
        name, config = trusted_config(ctx.task_files)
        ini = f"{root.rstrip('/')}/.agentenv-{nonce}-{name.lstrip('.')}"  # at the root: ini-relative paths hold
        module = f"agentenv_judge_{nonce}"
        key = secrets.token_bytes(32)
        report = f"{work}/report"
        settings = {"report": report, "root": root, "ini": ini, "pipe": ctx.pipes,
                    "prepend_cwd": bool(re.search(r"-m\s+pytest", head)), "trusted_files": _digests(ctx),
                    # every Python file the task ships, with the SHA-256 of its bytes: the judge runs a
                    # module of the task's from those bytes and holds what it defines (`_TaskLoader`)
                    "task_modules": {f"{root.rstrip('/')}/{rel}": hashlib.sha256(data).hexdigest()
                                     for rel, data in sorted(ctx.task_files.items()) if rel.endswith(".py")}}
        options = f" -p {module}"
        if not re.search(r"(?:^|\s)(?:-c|--config-file)[= ]", tail):
            options += f" -c {ini}"
        if "--rootdir" not in tail:
            options += f" --rootdir={root}"
        kept, deferred = _startup_path(ctx.runtime)
        settings["pythonpath"] = deferred
        env = {"PYTHONPATH": ":".join([work, *kept]), "PYTHONSAFEPATH": "1",
               "PYTHONNOUSERSITE": "1", "PYTEST_ADDOPTS": "", "PYTEST_PLUGINS": "",
               # never a __pycache__ of the workspace (the agent could plant one): the runtime's own
               # read-only bytecode cache where it has one, else none at all (a writable one would take
               # a .pyc that code under test planted for a module the tests import later)
               "PYTHONPYCACHEPREFIX": ctx.runtime.env.get("PYTHONPYCACHEPREFIX") or NO_BYTECODE_CACHE,
               "PYTHONDONTWRITEBYTECODE": "1"}
        files = {**judge_files(work, module), f"{work}/judge.key": key,
                 f"{work}/judge.json": json.dumps(settings).encode(), ini: config}
        return ScoredCommand(head + options + tail, report, env, files, state=key, pipe=ctx.pipes)

    def parse(self, scored: ScoredCommand, result: ExecResult, report: bytes | None) -> TestReport:
        parsed = parse_judge_report(report, scored.state or b"", result.exit_code)
        outcomes, error = parsed["outcomes"], parsed["error"]
        if parsed["integrity"]:
            first = parsed["integrity"][0]
            return TestReport(self.name, outcomes, {"type": "IntegrityViolation",
                                                    "message": f"{first['kind']}: {first['message']}"},
                              "tampered", tuple(parsed["integrity"]))
        if not parsed["complete"]:
            if parsed["started"]:
                return TestReport(self.name, outcomes, {"type": "IncompleteReport", "message": (
                    "the test run ended before the judge finished (os._exit, a crash, a kill or the time limit)")},
                    "incomplete")
            return TestReport(self.name, outcomes, parse_error(result.stderr + "\n" + result.stdout) or {
                "type": "NoReport", "message": "the test run produced no report"}, "missing")
        return TestReport(self.name, outcomes, error, xfailed=parsed["xfailed"], collected=parsed["collected"])

    def collect_command(self, command: str, marker: str | None = None) -> str | None:
        """The pytest command that only lists the tests *command* would run (with *marker*: the
        tests of the command's paths that carry it, whatever the command's own ``-m`` selects)."""
        m = _PYTEST.search(command)
        if not m:
            return None
        command = _JSON_FILE.sub("", _JUNIT_FILE.sub("", command)).replace("--json-report", "")
        if marker:
            command = command[:m.end(1)] + f" -m {shlex.quote(marker)}" + _MARKER_OPTION.sub("", command[m.end(1):])
        # node ids are listed one per line at verbosity -1 exactly: count the command's own -q / -v
        level = 0
        for token in command[m.end(1):].split():
            if re.fullmatch(r"-q+|-v+", token):
                level += len(token) - 1 if token[1] == "v" else -(len(token) - 1)
            elif token in ("--quiet", "--verbose"):
                level += 1 if token == "--verbose" else -1
        adjust = " -q" * max(0, level + 1) + " -v" * max(0, -1 - level)
        return command[:m.end(1)] + " --collect-only" + adjust + command[m.end(1):]

    def collected_tests(self, result: ExecResult) -> frozenset[str]:
        """The node ids ``--collect-only -q`` listed: a line that starts with a file's path and ``::``
        (a parameter id may hold spaces: ``test_x[Trailing bad characters!@#]``)."""
        lines = [line.rstrip() for line in result.stdout.splitlines()
                 if "::" in line and line[:1].strip() and " " not in line.partition("::")[0]
                 and line.partition("::")[0].endswith(".py")]
        return frozenset(lines) if result.exit_code == 0 else frozenset()

    def deselect(self, command: str, tests: Sequence[str]) -> str | None:
        m = _PYTEST.search(command)
        if not m:
            return None
        flags = "".join(f" --deselect {shlex.quote(t)}" for t in tests)
        return command[:m.end(1)] + flags + command[m.end(1):]

    def mask_output(self, text: str) -> str:
        return _PYTEST_DURATION.sub(" in <time>", text)


def verify_judge_report(data: bytes, key: bytes) -> tuple[list[dict[str, Any]], list[str]]:
    """The judge's records whose MAC verifies, in order, and the problems found in the channel."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for seq, line in enumerate(data.split(b"\n")[:-1] if data else [], start=1):
        text, _, mac = line.rpartition(b"\t")
        expected = hmac.new(key, str(seq).encode() + b":" + text, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(mac, expected):
            problems.append(f"line {seq} of the test report is not the judge's (forged or out of order)")
            break
        try:
            records.append(json.loads(text))
        except ValueError:
            problems.append(f"line {seq} of the test report is not JSON")
            break
    if data and not data.endswith(b"\n") and not problems:
        problems.append("the test report ends in a partial line")
    return records, problems


def parse_judge_report(data: bytes | None, key: bytes, exit_code: int) -> dict[str, Any]:
    """Outcomes, the first error, completeness and integrity findings of a judge report."""
    records, channel = verify_judge_report(data or b"", key)
    integrity = [{"kind": "report-forged", "message": p} for p in channel]
    outcomes: dict[str, str] = {}
    xfailed: set[str] = set()
    collected: frozenset[str] = frozenset()
    error = None
    end = None
    phases: dict[tuple[str, str], Any] = {}  # (node, when) -> the outcome first reported
    inner_needed: dict[str, bool] = {}  # node -> whether the judge must hear from the test function itself
    seen: set[tuple[str, str]] = set()
    for rec in records:
        t = rec.get("t")
        if end is not None:  # (the judge writes nothing after its last record: code under test that reached its
            # signer wrote "passed" for every test at exit, where a later record used to win; red team, stop 34)
            integrity.append({"kind": "report-forged", "message": "a record after the judge's last one"})
            break
        if t == "integrity":
            finding = (str(rec.get("kind")), str(rec.get("message")))
            if finding not in seen:  # (the judge sends a finding each time it sees it)
                seen.add(finding)
                integrity.append({"kind": finding[0], "message": finding[1]})
        elif t == "collected" and isinstance(rec.get("ids"), list):
            collected = frozenset(str(node) for node in rec["ids"])
        elif t == "end":
            end = rec
        elif t == "call":
            inner_needed[str(rec.get("nodeid"))] = bool(rec.get("inner"))
        elif t == "inner":
            phase = (str(rec.get("nodeid")), "inner")
            if phases.setdefault(phase, rec.get("outcome")) != rec.get("outcome"):
                integrity.append({"kind": "report-forged", "message": f"{phase[0]}: the test function was reported "
                                  f"{phases[phase]!s:.20} and then {rec.get('outcome')!s:.20}"})
        elif t in ("test", "collect"):
            node = str(rec.get("nodeid"))
            if t == "collect":
                node, outcome = f"{node}::<collection>", "error"
            else:
                phase = (node, str(rec.get("when")))
                if phases.setdefault(phase, rec.get("outcome")) != rec.get("outcome"):
                    integrity.append({"kind": "report-forged", "message": f"{node} ({phase[1]}) was reported "
                                      f"{phases[phase]!s:.20} and then {rec.get('outcome')!s:.20}"})
                outcome = _phase_outcome(rec, outcomes.get(node))
                if rec.get("when") == "call" and rec.get("xfail") and outcome == "passed":
                    xfailed.add(node)
            outcomes[node] = outcome
            if error is None and outcome in ("failed", "error") and rec.get("longrepr"):
                error = parse_error(str(rec["longrepr"]))
                if error is not None:
                    error["test"] = node
    for node, needed in inner_needed.items():
        passed = phases.get((node, "call")) == "passed" and node not in xfailed
        if needed and passed and phases.get((node, "inner")) != "returned":
            integrity.append({"kind": "report-forged", "message": f"{node}: reported as passed, but the test function "
                              f"{phases.get((node, 'inner')) or 'never ran where pytest calls it'}"})
    if end is not None and end.get("exitstatus") != exit_code and exit_code >= 0:
        integrity.append({"kind": "exit-status", "message": f"the judge saw exit status {end.get('exitstatus')}, "
                                                            f"the process exited {exit_code}"})
    return {"outcomes": outcomes, "error": error, "complete": end is not None and not channel,
            "integrity": integrity, "started": bool(records), "xfailed": frozenset(xfailed), "collected": collected}


def _phase_outcome(rec: Mapping[str, Any], before: str | None) -> str:
    when, outcome = rec.get("when"), rec.get("outcome")
    if when == "call":
        if rec.get("xfail"):
            return "passed" if outcome == "skipped" else "failed"
        return {"passed": "passed", "failed": "failed", "skipped": "skipped"}.get(str(outcome), "error")
    if outcome == "failed":
        return "error"
    if when == "setup":
        return "skipped" if outcome == "skipped" else (before or "error")  # "error" until the call reports
    return before or "error"



# --------------------------------------------------------------------------- report files a command writes

class _FileFormat(ReportFormat):
    """A report file the task's own command writes at a path the step names."""

    options_schema = {"type": "object", "additionalProperties": False, "required": ["path"],
                      "properties": {"path": _PATH_OPTION}}

    def instrument(self, command: str, ctx: ScoringContext) -> ScoredCommand:
        return ScoredCommand(command, str(ctx.options["path"]))

    def parse(self, scored: ScoredCommand, result: ExecResult, report: bytes | None) -> TestReport:
        parsed = self.read(report) if report else None
        if parsed is None:
            return TestReport(self.name, {}, parse_error(result.stderr + "\n" + result.stdout) or {
                "type": "NoReport", "message": f"no readable {self.name} report at {scored.report_path}"}, "missing")
        return TestReport(self.name, parsed["outcomes"], parsed["error"])

    @abc.abstractmethod
    def read(self, data: bytes) -> dict[str, Any] | None:
        """``{"outcomes", "error"}`` of a report file, or None when it is not one."""


class JUnitFormat(_FileFormat):
    name = "junit"
    description = "a JUnit XML file the command writes (go-junit-report, jest-junit, cargo nextest, ...)"

    def read(self, data: bytes) -> dict[str, Any] | None:
        return parse_junit(data)


class PytestJsonFormat(_FileFormat):
    name = "pytest_json"
    description = "a pytest-json-report file the command writes (outside the judge: only for trusted commands)"

    def read(self, data: bytes) -> dict[str, Any] | None:
        return parse_json_report(data)


class RewardFileFormat(ReportFormat):
    """A score the task's check writes: one number in [0, 1] (Harbor's ``reward.txt``) or
    ``{"reward": x}``. The check finds the path in ``$AGENTENV_REWARD_FILE``: a fresh named pipe where
    the sandbox can make one, so nothing written before the run counts.

    The score counts only when the check exits 0 and the file holds exactly one score: a second
    writer (code the check ran, writing a score of its own) spoils it, and the run is flagged.
    Code the check runs could still take the channel over (it runs as the same user), so a check
    must not run the agent's code in the scored step: run it in an earlier step and inspect what it
    left (docs/security.md).
    """

    name = "reward_file"
    description = "a score in [0, 1] that the task's check writes to $AGENTENV_REWARD_FILE"
    options_schema = {"type": "object", "additionalProperties": False, "properties": {"path": _PATH_OPTION}}

    def instrument(self, command: str, ctx: ScoringContext) -> ScoredCommand:
        fixed = ctx.options.get("path")
        path = str(fixed) if fixed else f"/tmp/.agentenv-{ctx.nonce}/reward"
        return ScoredCommand(command, path, {"AGENTENV_REWARD_FILE": path}, pipe=ctx.pipes and not fixed)

    def parse(self, scored: ScoredCommand, result: ExecResult, report: bytes | None) -> TestReport:
        where = f"(reward file {scored.report_path})"
        if not result.ok:
            why = "ran past its time limit" if result.timed_out else f"exited {result.exit_code}"
            return TestReport(self.name, {}, {"type": "IncompleteReport", "message": f"the check {why}; a reward "
                                              f"file counts only from a check that exits 0 {where}"}, "incomplete")
        scores = parse_rewards(report or b"")
        if len(scores) > 1:
            finding = {"kind": "reward-file", "message": f"the reward file holds {len(scores)} scores: something "
                                                         f"besides the check wrote to it {where}"}
            return TestReport(self.name, {}, {"type": "IntegrityViolation", "message": finding["message"]},
                              "tampered", (finding,))
        if not scores or scores[0] is None:
            why = "the check wrote no score" if not report else "the check's score is not a number in [0, 1]"
            return TestReport(self.name, {}, {"type": "NoReport", "message": f"{why} {where}"}, "missing")
        return TestReport(self.name, {}, None, score=scores[0])


def parse_rewards(data: bytes) -> list[float | None]:
    """The scores in a reward file: one per line (``{"reward": x}`` or a number), None for a line that
    is no number in [0, 1]. One good score is a valid file; anything else is not."""
    out: list[float | None] = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip():
            out.append(parse_reward(line))
    return out


def parse_reward(text: str) -> float | None:
    """One score: a number in [0, 1], or ``{"reward": x}`` with a number x in [0, 1]."""
    text = text.strip()
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):  # (a reward file is written by the code under test)
        return None
    if isinstance(doc, Mapping):
        doc = doc.get("reward")
    if not isinstance(doc, (int, float)) or isinstance(doc, bool):
        return None
    return float(doc) if 0.0 <= doc <= 1.0 else None


# (no lazy ``.*?`` before ``\s*$``: that tries every split of a line's trailing run, and a test's
# output of 20,000 spaces took seconds of the host's CPU; what follows is stripped instead)
_EXC_LINE = re.compile(r"^(E[ \t]+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failed|Warning))(?::([^\n]*))?[ \t]*$", re.M)


_ASSERT_LINE = re.compile(r"^E[ \t]+(assert\b[^\n]*)", re.M)


def parse_error(text: str) -> dict[str, str] | None:
    """Exception type and message of the first failure in a traceback or pytest long repr.

    pytest marks the explanation lines with ``E``; those win over other lines that look alike."""
    if not text:
        return None
    matches = list(_EXC_LINE.finditer(text))
    for m in sorted(matches, key=lambda m: (m.group(1) is None, m.start())):
        return {"type": m.group(2).split(".")[-1], "message": (m.group(3) or "").strip()[:500]}
    m = _ASSERT_LINE.search(text)
    if m:
        return {"type": "AssertionError", "message": m.group(1).rstrip()[:500]}
    return None


def parse_json_report(data: bytes) -> dict[str, Any] | None:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests", []), list):
        return None
    outcomes: dict[str, str] = {}
    error = None
    for test in doc.get("tests", []):
        if not isinstance(test, dict):
            continue
        node, outcome = str(test.get("nodeid", "?")), str(test.get("outcome", "error"))
        outcomes[node] = {"xfailed": "passed", "xpassed": "failed"}.get(outcome, outcome)
        if error is None and outcome in ("failed", "error"):
            for phase in ("setup", "call", "teardown"):
                stage = _mapping(test.get(phase))
                longrepr = stage.get("longrepr") or _mapping(stage.get("crash")).get("message")
                if longrepr:
                    error = parse_error(str(longrepr))
                    if error:
                        break
    collectors = doc.get("collectors")
    for coll in collectors if isinstance(collectors, list) else ():
        if isinstance(coll, dict) and coll.get("outcome") == "failed":
            outcomes[f"{coll.get('nodeid') or '<collection>'}::<collection>"] = "error"
            if error is None:
                error = parse_error(str(coll.get("longrepr", "")))
    return {"outcomes": outcomes, "error": error, "exitcode": doc.get("exitcode")}


def _mapping(value: Any) -> dict[str, Any]:
    """*value* where a report has an object, else an empty one: the file is the command's, and a
    ``"call": "x"`` or ``"collectors": 5`` in it raised out of ``env.step()`` (red team)."""
    return value if isinstance(value, dict) else {}


def parse_junit(data: bytes) -> dict[str, Any] | None:
    try:
        root = ET.fromstring(data)
    except ET.ParseError:
        return None
    outcomes: dict[str, str] = {}
    error = None
    for case in root.iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "?")
        node = f"{cls}::{name}" if cls else name
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                if error is None:
                    error = parse_error((child.text or "") + "\n" + (child.get("message") or ""))
                break
            if child.tag == "skipped":
                outcome = "skipped"
                if child.get("type") == "pytest.xfail":
                    outcome = "passed"
        outcomes[node] = outcome
    return {"outcomes": outcomes, "error": error}



@agentenv.hookimpl
def agentenv_add_report_formats(registry) -> None:
    for fmt in (PytestFormat(), JUnitFormat(), PytestJsonFormat(), RewardFileFormat()):
        registry.add_report_format(fmt)
