"""Harbor task directories in and out: ``agentenv import harbor DIR --out DIR`` and
``agentenv export SOURCE --format harbor --out DIR``.

A Harbor task (the layout Terminal-Bench 2 and Harbor's registry use) is a folder::

    task.toml            schema_version/version, [task], [metadata], [verifier] timeout_sec/env,
                         [agent] timeout_sec, [environment] cpus/memory_mb/storage_mb/gpus/
                         docker_image/allow_internet/..., [solution] env
    instruction.md       the prompt
    environment/         Dockerfile (or docker-compose.yaml) and its build context
    tests/test.sh        run after the agent with tests/ at /tests; writes /logs/verifier/reward.txt
                         (a number) or reward.json ({"reward": x, ...}); Harbor reads reward.json first
    solution/solve.sh    the oracle, with solution/ at /solution

Import converts what agentenv can express and refuses the rest, one reason per task:

* the Dockerfile may only choose a Python or Debian base, set ``WORKDIR``/``ENV``, ``COPY`` build
  context into the working directory, and install packages: ``pip install`` becomes the runtime's
  dependencies; ``apt-get install`` is accepted when the package is installed on this host (the
  sandbox sees the host's ``/usr``), refused with the ``apt-get`` line otherwise. Anything else
  (``docker_image``, docker-compose, GPUs, other ``RUN`` commands) is refused.
* tests/ become hidden files under ``/app/.harbor/tests`` and ``/tests`` is rewritten to it; the
  verifier runs under a small wrapper (``.harbor/verify.py``, hidden) that takes the reward pipe from
  the environment before ``test.sh`` runs, so neither test.sh nor the code it tests can write the
  score except through ``/logs/verifier/reward.{txt,json}`` (rewritten to a scratch folder that the
  wrapper makes anew, once every process the agent left is gone, just before test.sh, and reads after
  every other process is gone). Only the reward file the tests name is read (tests naming both or
  neither are refused), so code under test cannot answer for test.sh in the other file, and a
  test.sh that exits non-zero (its own write refused, say) scores 0, and so does a run that leaves the
  reward file or its folder unwritable (a later line of test.sh would hide the failed write). The
  wrapper reads test.sh once and hands bash the text (bash reads a script file as it goes, so code
  under test could have written its remaining lines), and a run in which a file of the tests changed
  scores 0. Installs in test.sh (uv, pip) move to the runtime's dependencies; any other download in
  test.sh is refused (sandboxes have no network).
* test.sh runs in /app, among the agent's files, so none of them may run in its place: virtual
  environments' ``bin/activate`` lines are dropped (the runtime holds the packages), its Python runs
  with ``PYTHONSAFEPATH`` (``python -``, ``-c`` and ``-m`` do not import from /app; Python 3.11 or
  later, older bases are refused), and pytest on the hidden tests runs with their configuration and
  rootdir (``-c .harbor/agentenv-pytest.ini --rootdir .harbor/tests``), never a pytest.ini or
  conftest.py in /app.
* a test.sh of the standard shape (pytest on the hidden tests, then 1 or 0 to reward.txt by its exit
  status, as Terminal-Bench writes them) is not run at all: the task runs that pytest under agentenv's
  trusted judge and scores ``test_pass_rate`` (1 when every test passes). test.sh's own pytest runs the
  code under test in its process, as the same user, where it can end the run or write the score.
* ``[verifier] timeout_sec`` -> ``limits.wall_time_s``, ``memory_mb`` -> ``limits.memory_mb``,
  ``[metadata]`` difficulty/tags, the rest under ``metadata.harbor``.
* the oracle: ``solve.sh`` runs once, at import, in a real sandbox of the converted task; the files
  it changes in the working directory become the reference solution, and the converted task must
  then score 1 with it and 0 without (otherwise the task is refused with the scores measured).

Export writes the reverse for tasks whose reward the verifier can compute without agentenv:
rules on ``test_pass_rate`` (step, threshold 1: the command's exit status), ``command_succeeded``
and ``report_score`` (reward-file checks), with aggregations over the scored commands.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field
from typing import Any, Callable

import agentenv
from agentenv import PLACEHOLDER, TaskSpec, ToolError

HIDDEN = ".harbor"
# The mark of a test.sh that agentenv's exporter wrote. It copies the tests into /app before any agent
# code runs and never reads them again, and its checks (tasks/_harness/guard.py) reset /app between
# the runs of agent code, rewriting the hidden folder there: verify.py does not watch the tests of
# such a test.sh (each reset would count as a change), and compares them before and after only.
EXPORT_MARK = "(written by agentenv export --format harbor)"
TESTS = f"/app/{HIDDEN}/tests"
LOGS = "/tmp/.harbor-logs/verifier"
SOLUTION = "/tmp/.harbor-solution"
DEFAULT_DEPS = ("pytest==8.3.5",)
# How test.sh's pytest runs the hidden tests: its configuration and rootdir are theirs, never the workspace's
# (a pytest.ini in /app made /app the rootdir, and pytest then loaded the agent's conftest.py), and no
# cache is written. PYTHONSAFEPATH (set by verify.py) keeps an /app/pytest.py from standing in for pytest.
PYTEST_INI = f"/app/{HIDDEN}/agentenv-pytest.ini"  # a name pytest does not look for: only -c reads it
PYTEST = f"python -m pytest -c {PYTEST_INI} --rootdir {TESTS} -p no:cacheprovider"
_KNOWN_SECTIONS = {"version", "schema_version", "task", "metadata", "verifier", "agent", "environment", "solution",
                   "source"}

# The wrapper that runs test.sh inside the sandbox (standard library only). It takes the reward pipe
# before any test code runs and writes the score last, after every other process is gone.
VERIFY = r'''"""Runs a Harbor task's tests/test.sh and hands its reward to agentenv (written by agentenv import harbor)."""
import ctypes, json, os, select, signal, stat as st, struct, subprocess, sys, threading, time

pipe = os.environ.pop("AGENTENV_REWARD_FILE", "")
if not pipe or not os.path.lexists(pipe) or not st.S_ISFIFO(os.lstat(pipe).st_mode):
    sys.exit("verify.py: no reward pipe (this backend cannot keep test code from writing the score)")
fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
os.unlink(pipe)
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/<this>/fd is closed to the tests
logs, test_sh, verifier_env, cwd, reward_name = sys.argv[1:6]
watched = sys.argv[6:7] != ["unwatched"]  # (see EXPORT_MARK)
tests = os.path.dirname(test_sh)


def files(top):
    """path -> contents of every regular file below *top*."""
    out = {}
    for folder, _, names in os.walk(top):
        for name in names:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and not os.path.islink(path):
                out[path] = open(path, "rb").read()
    return out


def stat(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return ["X", "0"]


keep = {os.getpid(), 1}
pid = os.getppid()
while pid > 1:
    keep.add(pid)
    pid = int(stat(pid)[1])


def kill_the_rest():
    for _ in range(100):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep and stat(p)[0] not in "ZX"]
        if not others:
            return
        for p in others:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


# Nothing the agent left running may wait for the reward folder, and nothing it left there counts:
# whatever holds the folder's path now is moved aside (a rename needs no access to what is inside)
# and the folder is made anew, by this process alone, just before test.sh runs.
kill_the_rest()
top = os.path.dirname(logs)
if os.path.lexists(top):
    os.rename(top, f"{top}.stale-{os.urandom(8).hex()}")
os.mkdir(top, 0o700)
os.mkdir(logs, 0o700)
env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTENV_")}
env.update(json.loads(verifier_env))
env["PYTHONSAFEPATH"] = "1"  # python -, -c and -m in test.sh: the agent's working directory is not on sys.path


class Watch:
    """Every change below the task's hidden folder (the tests, the pytest configuration test.sh's pytest
    takes) while test.sh runs, as the kernel reports it (inotify).

    Comparing the files before and after test.sh missed a change that was put back: code under
    test that test.sh ran first swapped a check that it ran later for one that restored the original
    and wrote reward 1 (red team). Here any write to a file of the tests (through any link to it),
    any entry made, removed or renamed anywhere below the folder (a conftest.py, a forged .pyc in a
    __pycache__ that pytest would load), and any rename of a folder on the way to it, counts;
    Python writes no bytecode there in test.sh (PYTHONDONTWRITEBYTECODE). Events are read by a
    thread while test.sh runs; more than the kernel queues (an overflow) counts as a change too."""

    FILE = 0x2 | 0x8 | 0x400 | 0x800  # IN_MODIFY, IN_CLOSE_WRITE, IN_DELETE_SELF, IN_MOVE_SELF
    NAMES = 0x40 | 0x80 | 0x100 | 0x200  # IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE

    def __init__(self, top):
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(0o4000 | 0o2000000)  # IN_NONBLOCK, IN_CLOEXEC
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.watched, self.changes, self.done = {}, [], False
        path = top
        while os.path.dirname(path) != path:  # the folders above: only the name on the way down
            self.add(os.path.dirname(path), self.NAMES, os.path.basename(path))
            path = os.path.dirname(path)
        for folder, _, names in os.walk(top):
            self.add(folder, self.NAMES | self.FILE, None)
            for name in names:
                self.add(os.path.join(folder, name), self.FILE, None)
        self.thread = threading.Thread(target=self.follow, daemon=True)
        self.thread.start()

    def add(self, path, mask, only):
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), mask | 0x20000000)  # IN_DONT_FOLLOW
        if wd < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {path}")
        self.watched[wd] = (path, only)

    def follow(self):
        while not self.done:
            select.select([self.fd], [], [], 0.05)
            self.read()

    def read(self):
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            at = 0
            while at + 16 <= len(data):
                wd, mask, _, size = struct.unpack_from("iIII", data, at)
                name = data[at + 16:at + 16 + size].split(b"\0", 1)[0].decode("utf-8", "replace")
                at += 16 + size
                if mask & 0x4000:  # IN_Q_OVERFLOW
                    self.changes.append("more changes than the kernel could queue")
                    continue
                path, only = self.watched.get(wd, ("?", None))
                if mask & ~0x8000 and (only is None or name == only):  # (IN_IGNORED: a watch that went)
                    self.changes.append(os.path.join(path, name) if name else path)

    def stop(self):
        self.done = True
        self.thread.join()
        self.read()
        return sorted(set(self.changes))


# bash reads a script file as it runs it, so code under test could write test.sh's remaining lines;
# the text is read here, once, and given to bash whole. The tests' other files are read now too:
# code under test that rewrites one test.sh runs later finds its run scored 0.
script, before = open(test_sh, encoding="utf-8").read(), files(tests)
env["PYTHONDONTWRITEBYTECODE"] = "1"  # (no __pycache__ written into the tests' folder: see Watch)
try:  # the tests and what else test.sh's checks read from beside them (the pytest configuration)
    watch = Watch(os.path.dirname(tests)) if watched else None
except OSError as exc:
    sys.exit(f"verify.py: cannot follow changes to the tests while test.sh runs ({exc}): not scored")
code = subprocess.call(["bash", "-c", script, test_sh], cwd=cwd, env=env, close_fds=True, start_new_session=True)
kill_the_rest()
after = files(tests)
changed = sorted({p for p, data in before.items() if after.get(p) != data} | set(watch.stop() if watch else ()))
if changed:
    print(f"the tests' files changed while test.sh ran: {', '.join(changed)[:300]}")
    code = code or 1
# Only the file test.sh writes is read (chosen at import): a reward.json or reward.txt that code
# under test wrote beside it is not. A test.sh that failed (its own write refused, say) scores 0.
score = None
path = os.path.join(logs, reward_name)


def tampered():
    """How the reward folder or file was made to refuse test.sh's write (a write that failed leaves the
    code under test's score in place, and a later line of test.sh hides the failed status), or None."""
    for folder in (top, logs):  # (a check may empty /tmp and make them again: not a finding)
        if not os.path.lexists(folder):
            continue
        info = os.lstat(folder)
        if not st.S_ISDIR(info.st_mode) or info.st_mode & 0o700 != 0o700:
            return f"{folder} is not a writable folder"
    if os.path.lexists(path) and (not st.S_ISREG(os.lstat(path).st_mode) or not os.lstat(path).st_mode & st.S_IWUSR):
        return f"{path} is not a writable file"
    return None


why = tampered()
if why:
    print(f"while test.sh ran, {why}: reward 0")
    score = 0
elif code != 0:
    score = 0
elif os.path.isfile(path) and not os.path.islink(path):
    text = open(path, encoding="utf-8", errors="replace").read().strip()
    if reward_name == "reward.json":
        try:
            doc = json.loads(text)
            score = doc.get("reward", next(iter(doc.values()), None)) if isinstance(doc, dict) else doc
        except ValueError:
            score = None
    else:
        score = text.split()[0] if text.split() else None
print(f"test.sh exited {code}; {reward_name}: reward {score}")
if score is not None:
    os.write(fd, f"{score}\n".encode())
'''


@dataclass
class ImportReport:
    written: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (task dir, reason)


class Refusal(Exception):
    """This Harbor task cannot be expressed as an agentenv task (the message says why)."""


# --------------------------------------------------------------------------- import

def find_tasks(path: str) -> list[str]:
    """*path* itself when it holds task.toml, else its sub-folders that do (a dataset)."""
    if os.path.isfile(os.path.join(path, "task.toml")):
        return [path]
    if not os.path.isdir(path):
        raise ToolError(f"{path}: not a folder; give a Harbor task folder (with task.toml) or a folder of them")
    found = sorted(os.path.join(path, d) for d in os.listdir(path) if os.path.isfile(os.path.join(path, d, "task.toml")))
    if not found:
        raise ToolError(f"{path}: no task.toml here or in its sub-folders; a Harbor task folder holds task.toml, "
                        "instruction.md, environment/ and tests/test.sh")
    return found


def _read_text(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _files_below(top: str) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, names in os.walk(top):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".git")]
        for name in names:
            full = os.path.join(dirpath, name)
            if os.path.islink(full):
                raise Refusal(f"{os.path.relpath(full, os.path.dirname(top))} is a link; only regular files are converted")
            with open(full, "rb") as f:
                out[os.path.relpath(full, top).replace(os.sep, "/")] = f.read()
    return out


def _parse_dockerfile(text: str, context: dict[str, bytes]) -> dict[str, Any]:
    """Python version, pip and apt packages, working directory, environment and copied files of a Dockerfile."""
    lines, buf = [], ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        buf += stripped[:-1] + " " if stripped.endswith("\\") else stripped
        if not stripped.endswith("\\"):
            lines.append(buf)
            buf = ""
    out: dict[str, Any] = {"python": "3.11", "pip": [], "apt": [], "workdir": "/app", "env": {}, "files": {}}
    for line in lines:
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            image = rest.split()[0]
            m = re.match(r"(?:docker\.io/)?(?:library/)?python:(\d+\.\d+)", image)
            if m:
                out["python"] = m.group(1)
            elif not re.match(r"(?:docker\.io/)?(?:library/)?(?:debian|ubuntu)(?::|$)", image):
                raise Refusal(f"FROM {image}: only python:3.X and debian/ubuntu bases are converted (the sandbox "
                              "runs on this host's system and a Python runtime)")
        elif word == "WORKDIR":
            out["workdir"] = rest.strip()
        elif word == "ENV":
            pairs = re.findall(r'(\w+)=("[^"]*"|\S+)', rest) or [tuple(rest.split(None, 1))]
            for key, value in pairs:
                out["env"][key] = value.strip('"')
        elif word in ("COPY", "ADD"):
            args = [a for a in shlex.split(rest) if not a.startswith("--")]
            if word == "ADD" and any(a.startswith(("http://", "https://")) for a in args):
                raise Refusal(f"{line}: downloads at build time; the sandbox has no network")
            *sources, dest = args
            for src in sources:
                src = "" if src in (".", "./") else src.removeprefix("./").rstrip("/")
                matched = {rel: data for rel, data in context.items() if not src or rel == src or rel.startswith(src + "/")}
                if not matched:
                    raise Refusal(f"{line}: {src or '.'} is not in environment/")
                for rel, data in matched.items():
                    tail = rel[len(src):].lstrip("/") if src and rel != src else os.path.basename(rel)
                    into_folder = dest.endswith("/") or dest in (".", "./") or len(sources) > 1 or rel != src
                    target = os.path.join(dest, tail) if into_folder else dest
                    out["files"][target] = data
        elif word == "RUN":
            for command in re.split(r"\s*(?:&&|;)\s*", rest):
                _run_instruction(command.strip(), out, line)
        elif word in ("CMD", "ENTRYPOINT", "EXPOSE", "LABEL", "USER", "SHELL", "ARG", "STOPSIGNAL", "HEALTHCHECK",
                      "VOLUME", "ONBUILD"):
            continue  # how a container starts or is described, not what the task needs
        else:
            raise Refusal(f"Dockerfile instruction {word} is not converted")
    return out


def _run_instruction(command: str, out: dict[str, Any], line: str) -> None:
    if not command or re.fullmatch(r"(?:apt-get|apt) (?:-\S+ )*(?:update|clean|autoremove.*)|rm -rf /var/lib/apt/lists.*|"
                                   r"pip install (?:-\S+ )*--upgrade pip|true", command):
        return
    m = re.fullmatch(r"(?:DEBIAN_FRONTEND=\S+ )?(?:apt-get|apt) (?:-\S+ )*install (.*)", command)
    if m:
        out["apt"] += [p.split("=")[0] for p in m.group(1).split() if not p.startswith("-")]
        return
    m = re.fullmatch(r"(?:python3? -m )?(?:uv )?pip3? install (.*)", command)
    if m:
        packages = [p for p in shlex.split(m.group(1)) if not p.startswith("-")]
        if any(flag in m.group(1) for flag in ("-r ", "--requirement", "-e ", "--editable")):
            raise Refusal(f"RUN {command}: requirement files and editable installs are not converted; list the packages")
        out["pip"] += packages
        return
    raise Refusal(f"RUN {command}: only package installs (pip, apt-get) are converted")


# Setup lines that only make a place for installs the runtime already holds. A virtual environment's
# activate script is dropped wherever it lives: test.sh runs in /app, so one in the workspace
# (Terminal-Bench's ``.tbench-testing``) is the agent's shell code, run by the verifier.
_UV_NOISE = re.compile(r"^\s*(?:curl\s.*astral\.sh/uv.*|(?:source|\.)\s+\$HOME/\.local/bin/env.*|"
                       r"uv\s+venv.*|uv\s+init.*|python3?\s+-m\s+venv\s.*|(?:source|\.)\s+\S*bin/activate\b.*|"
                       r"export\s+PATH=\"?\$HOME/\.local/bin.*)\s*$")
# pytest however test.sh starts it (uvx, uv run, python -m, or a command of its own on the line).
_PYTEST = re.compile(r"\buvx\s+pytest\b|\buv\s+run\s+(?:--\S+\s+)*pytest\b|\bpython3?\s+-m\s+pytest\b|"
                     r"(?:^|(?<=[;&|(!])|(?<=\bif)|(?<=\bthen)|(?<=\bdo)|(?<=\belse)|(?<=\btime)|(?<=\bexec))"
                     r"(?P<lead>\s*)pytest(?=\s|$)")
_INSTALL = re.compile(r"^\s*(?:uv\s+pip|python3?\s+-m\s+pip|pip3?|uv)\s+(?:install|add)\s+(.*)$")
_NETWORK = re.compile(r"\b(?:curl|wget|git\s+clone|apt-get|apt\s+install|npm\s+install|pip\s+download)\b")


def _convert_test_script(text: str) -> tuple[str, list[str]]:
    """(test.sh for the sandbox, the packages its installs need); installs move to the runtime."""
    packages, lines = [], []
    for line in text.splitlines():
        if _UV_NOISE.match(line):
            continue
        m = _INSTALL.match(line)
        if m:
            packages += [p for p in shlex.split(m.group(1)) if not p.startswith("-")]
            continue
        if _NETWORK.search(line.split("#", 1)[0]):
            raise Refusal(f"tests/test.sh downloads at verification time ({line.strip()[:80]}); agentenv sandboxes "
                          "have no network: install it in environment/Dockerfile instead")
        line = _rewrite_paths(line)
        line = _PYTEST.sub(lambda m, line=line: (m.group("lead") or "") + _pytest_command(m.group(0), line), line)
        lines.append(re.sub(r"\buv\s+run\s+(?:--\S+\s+)*python\b", "python", line))
    return "\n".join(lines) + "\n", packages


def _pytest_command(spelled: str, line: str) -> str:
    """What runs pytest as *spelled* on *line*. A run of the hidden tests gets :data:`PYTEST`. Any
    other run is of tests in the workspace, which import the agent's code into pytest anyway: it keeps
    pytest's own configuration, and ``python -m pytest`` keeps its working directory on sys.path (the
    tests import the solution from there); uvx and uv run had not put it there."""
    if TESTS in line or "TEST_DIR" in line:
        return PYTEST
    if re.match(r"python3?\s", spelled):
        return f"env PYTHONSAFEPATH= {spelled}"  # an empty PYTHONSAFEPATH is unset
    return "python -m pytest" if spelled.startswith("uv") else spelled.strip()


_TEST_PATH = rf"{re.escape(TESTS)}(?:/[\w.-]+)*"
_STANDARD = re.compile(
    rf"{re.escape(PYTEST)}(?P<args>(?:\s+(?:{_TEST_PATH}|-rA|-q|-v+|-x|-s|--tb=\w+))*)\s*\n"
    rf"if\s+\[\s+\$\?\s+(?:-eq|==?)\s+0\s+\];?\s*then\s+echo\s+1\s*>\s*{re.escape(LOGS)}/reward\.txt\s+"
    rf"else\s+echo\s+0\s*>\s*{re.escape(LOGS)}/reward\.txt\s+fi\s*")


def _judged_pytest(script: str) -> str | None:
    """The pytest command that stands for a converted test.sh of the standard shape (pytest on the
    hidden tests, then reward 1 when it exits 0, else 0), or None. Under agentenv's pytest judge, code
    under test cannot end the run, replace the tests or report for them; test.sh's pytest could not
    keep it from any of that (the same user, and the tests' own process where they import it), nor
    from writing the reward file while test.sh still runs."""
    body = "\n".join(line for line in script.splitlines() if line.strip() and not line.lstrip().startswith("#"))
    m = _STANDARD.fullmatch(body)
    if not m or TESTS not in m.group("args") or "/.." in m.group("args"):
        return None
    return f"pytest -p no:cacheprovider{m.group('args')}"


def _reward_file(script: str, tests: dict[str, bytes]) -> str:
    """The one reward file the tests write, reward.txt or reward.json: the verifier reads only that
    one, so a second file that code under test writes beside it is never read."""
    text = script + "".join(data.decode("utf-8", "replace") for rel, data in tests.items() if rel != "test.sh")
    named = [name for name in ("reward.txt", "reward.json") if re.search(rf"\b{re.escape(name)}\b", text)]
    if len(named) != 1:
        raise Refusal(f"tests/ write {'both reward.txt and reward.json' if named else 'neither reward.txt nor reward.json'}"
                      ": the verifier reads one reward file, the one the tests name")
    return named[0]


def _rewrite_paths(text: str) -> str:
    text = re.sub(r"(?<![\w./-])/logs/verifier\b", LOGS, text)
    text = re.sub(r"(?<![\w./-])/tests\b", TESTS, text)
    return re.sub(r"(?<![\w./-])/solution\b", SOLUTION, text)


def convert(task_dir: str, suite: str, out_dir: str, *, run_oracle: bool = True,
            backend: str = "auto") -> str:
    """Write one converted task under *out_dir*; return its task file. Raises :class:`Refusal`."""
    name = re.sub(r"[^A-Za-z0-9_.]", "_", os.path.basename(os.path.normpath(task_dir)))
    try:
        config = tomllib.loads(_read_text(os.path.join(task_dir, "task.toml")))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise Refusal(f"task.toml cannot be read: {exc}") from None
    unknown = sorted(set(config) - _KNOWN_SECTIONS)
    if unknown:
        raise Refusal(f"task.toml has sections agentenv does not know: {', '.join(unknown)}")
    env_cfg, verifier = config.get("environment", {}), config.get("verifier", {})
    if env_cfg.get("docker_image"):
        raise Refusal(f"[environment] docker_image = {env_cfg['docker_image']!r}: a prebuilt image cannot be rebuilt "
                      "here; give an environment/Dockerfile")
    if int(env_cfg.get("gpus", 0) or 0) > 0:
        raise Refusal("[environment] gpus > 0: agentenv sandboxes have no GPU")
    if env_cfg.get("mcp_servers"):
        raise Refusal("[environment] mcp_servers: MCP servers are not converted")
    envdir = os.path.join(task_dir, "environment")
    if any(os.path.exists(os.path.join(envdir, n)) for n in ("docker-compose.yaml", "docker-compose.yml", "compose.yaml")):
        raise Refusal("environment/docker-compose.yaml: multi-container environments are not converted")
    dockerfile = os.path.join(envdir, "Dockerfile")
    if not os.path.isfile(dockerfile):
        raise Refusal("environment/Dockerfile is missing")
    context = {k: v for k, v in _files_below(envdir).items() if k != "Dockerfile"}
    docker = _parse_dockerfile(_read_text(dockerfile), context)
    test_sh = os.path.join(task_dir, "tests", "test.sh")
    if not os.path.isfile(test_sh):
        raise Refusal("tests/test.sh is missing")
    for pkg in docker["apt"]:
        if subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True).stdout \
                .find("install ok installed") < 0:
            raise Refusal(f"the Debian package {pkg} is not installed on this host (the sandbox uses the host's "
                          f"system): apt-get install -y {pkg}, then import again")
    if tuple(int(n) for n in docker["python"].split(".")) < (3, 11):
        raise Refusal(f"FROM python:{docker['python']}: the verifier keeps the agent's working directory off the "
                      "sys.path of test.sh's Python with PYTHONSAFEPATH, which Python 3.11 added; use python:3.11 "
                      "or later")
    script, test_packages = _convert_test_script(_read_text(test_sh))
    workdir = docker["workdir"].rstrip("/") or "/"
    if workdir != "/app":
        raise Refusal(f"WORKDIR {workdir}: converted tasks work in /app (rewriting other working directories is "
                      "not supported yet)")
    workspace = {}
    for target, data in docker["files"].items():
        target = target if target.startswith("/") else os.path.join(workdir, target)
        target = os.path.normpath(target)
        if not target.startswith("/app/"):
            raise Refusal(f"COPY into {target}: only files copied into the working directory /app are converted")
        workspace[target[len("/app/"):]] = data
    tests = _files_below(os.path.join(task_dir, "tests"))
    hidden = {f"{HIDDEN}/tests/{rel}": data for rel, data in tests.items() if rel != "test.sh"}
    for rel, data in list(hidden.items()):
        try:
            hidden[rel] = _rewrite_paths(data.decode("utf-8")).encode()
        except UnicodeDecodeError:
            pass
    reward_name = _reward_file(script, tests)
    hidden[f"{HIDDEN}/tests/test.sh"] = script.encode()
    hidden[f"{HIDDEN}/verify.py"] = VERIFY.encode()
    # the task's own pytest.ini, when its tests carry one, else an empty one (pytest's defaults)
    hidden[PYTEST_INI[len("/app/"):]] = hidden.get(f"{HIDDEN}/tests/pytest.ini", b"[pytest]\n")
    deps = _dedupe_requirements([*docker["pip"], *test_packages, *DEFAULT_DEPS])
    meta = config.get("metadata", {})
    verifier_env = {k: _rewrite_paths(str(v)) for k, v in (verifier.get("env") or {}).items()}
    timeout = float(verifier.get("timeout_sec", 600.0))
    command = (f"exec python -I /app/{HIDDEN}/verify.py {LOGS} {TESTS}/test.sh "
               f"{shlex.quote(json.dumps(verifier_env))} /app {reward_name}"
               + (" unwatched" if EXPORT_MARK in script else ""))
    judged = _judged_pytest(script)
    doc: dict[str, Any] = {
        "task_id": f"{suite}.{name}", "version": 0,
        "description": _read_text(os.path.join(task_dir, "instruction.md")).strip(),
        "environment_config": {"runtime": f"python{docker['python']}", "dependencies": deps,
                               **({"env": docker["env"]} if docker["env"] else {})},
        "workspace": {"root": "/app", "directory": "workspace"},
        "hidden_files": {"directory": "hidden"},
        "protected_paths": [f"{HIDDEN}/**"],
        "execution_steps": [{"action": "run_command", "command": command, "timeout_s": timeout,
                             "report": {"format": "reward_file"}}],
        "reward_logic": {"type": "composite", "rules": [{"metric": "report_score", "weight": 1.0, "aggregation": "last"}]},
        "limits": {"wall_time_s": timeout, "memory_mb": int(env_cfg.get("memory_mb", 2048))},
        "max_rounds": 50,
        "tags": ["harbor", *[str(t) for t in meta.get("tags", [])]],
        "metadata": {"harbor": {"source": os.path.abspath(task_dir), "task": config.get("task"),
                                "agent_timeout_sec": config.get("agent", {}).get("timeout_sec"),
                                "cpus": env_cfg.get("cpus", 1), "storage_mb": env_cfg.get("storage_mb"),
                                "allow_internet": env_cfg.get("allow_internet", True),
                                "debian_packages": docker["apt"], "metadata": meta}},
    }
    if judged:  # the standard shape: agentenv's pytest judge decides, test.sh and verify.py do not run
        doc["execution_steps"] = [{"action": "run_command", "command": judged, "timeout_s": timeout}]
        doc["reward_logic"] = {"type": "composite", "rules": [{"metric": "test_pass_rate", "weight": 1.0,
                                                               "aggregation": "last", "threshold": 1.0,
                                                               "scoring": "step"}]}
    if meta.get("difficulty") in ("easy", "medium", "hard"):
        doc["difficulty"] = meta["difficulty"]
    folder = os.path.join(out_dir, name)
    shutil.rmtree(folder, ignore_errors=True)
    for rel, data in workspace.items():
        _write(os.path.join(folder, "workspace", rel), data)
    os.makedirs(os.path.join(folder, "workspace"), exist_ok=True)
    for rel, data in hidden.items():
        _write(os.path.join(folder, "hidden", rel), data)
    solve = os.path.join(task_dir, "solution", "solve.sh")
    path = os.path.join(folder, "task.json")
    _write(path, (json.dumps(doc, indent=1) + "\n").encode())
    if os.path.isfile(solve) and run_oracle:
        try:
            reference = _run_oracle(path, _files_below(os.path.join(task_dir, "solution")), backend)
            doc["reference_solution"] = {"directory": "solution"}
            for rel, data in reference.items():
                _write(os.path.join(folder, "solution", rel), data)
            _write(path, (json.dumps(doc, indent=1) + "\n").encode())
            _verify_reference(path, backend)
        except Refusal:
            shutil.rmtree(folder, ignore_errors=True)
            raise
    return path


def _dedupe_requirements(deps: list[str]) -> list[str]:
    """One requirement a distribution: a pinned one wins over a bare name."""
    by_name: dict[str, str] = {}
    for dep in deps:
        key = re.split(r"[=<>!~\[ @]", dep, maxsplit=1)[0].lower().replace("_", "-")
        if key not in by_name or not re.search(r"[=<>!~@]", by_name[key]):
            by_name[key] = dep
    return sorted(by_name.values(), key=str.lower)


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def _run_oracle(task_path: str, solution: dict[str, bytes], backend: str) -> dict[str, bytes]:
    """The files solve.sh changes in the working directory, run in a sandbox of the converted task."""
    task = agentenv.load_task(task_path)
    runtime = agentenv.registry().runtime_for(task.environment.runtime).prepare(task.environment, agentenv.cache_dir())
    pristine = task.workspace.read()
    workspace = agentenv.materialize(pristine, agentenv.cache_dir())
    with agentenv.get_backend(backend).open(agentenv.SandboxRequest(runtime, workspace, task.root, task.limits)) as box:
        for rel, data in solution.items():
            try:
                data = _rewrite_paths(data.decode("utf-8")).encode()
            except UnicodeDecodeError:
                pass
            box.write_file(f"{SOLUTION}/{rel}", data)
        result = box.exec(f"bash {SOLUTION}/solve.sh", timeout_s=task.limits.wall_time_s, cwd=task.root)
        if not result.ok:
            raise Refusal(f"solution/solve.sh failed in the sandbox (exit {result.exit_code}): "
                          f"{(result.stderr or result.stdout)[-300:].strip()}")
        changed = {}
        for rel in box.list_files(task.root):
            if rel.startswith(HIDDEN + "/"):
                continue
            data = box.read_file(rel)
            if pristine.get(rel) != data:
                changed[rel] = data
    if not changed:
        raise Refusal("solution/solve.sh changed no file in /app; its effect cannot be expressed as reference files")
    return changed


def _verify_reference(task_path: str, backend: str) -> None:
    task = agentenv.load_task(task_path)
    env = agentenv.CodingEnv(task, backend=backend, mode=agentenv.AGENTIC)
    try:
        ref = agentenv.run_episode(env, agentenv.make_agent("reference", task, agentenv.AGENTIC))
        noop = agentenv.run_episode(env, agentenv.make_agent("noop", task, agentenv.AGENTIC))
    finally:
        env.close()
    if ref.reward_masked or noop.reward_masked:
        raise Refusal(f"the sandbox failed while checking the converted task: {ref.infra_error or noop.infra_error}")
    if ref.score < 1.0 or noop.score > 0.0:
        raise Refusal(f"after conversion the oracle scores {ref.score:g} and the unchanged workspace {noop.score:g} "
                      "(expected 1 and 0): the oracle's effect lies outside /app, or the tests need what the "
                      "sandbox lacks")


def import_harbor(path: str, out: str, *, suite: str | None = None, run_oracle: bool = True, backend: str = "auto",
                  progress: Callable[[str], None] | None = None) -> ImportReport:
    say = progress or (lambda message: None)
    suite = re.sub(r"[^A-Za-z0-9_.]", "_", suite or os.path.basename(os.path.normpath(out)))
    report = ImportReport()
    for task_dir in find_tasks(path):
        try:
            report.written.append(convert(task_dir, suite, out, run_oracle=run_oracle, backend=backend))
            say(f"  converted {task_dir}")
        except Refusal as exc:
            report.refused.append((task_dir, str(exc)))
            say(f"  refused {task_dir}: {exc}")
    if report.written:
        _write(os.path.join(out, "suite.json"), (json.dumps(
            {"name": suite, "version": "1.0.0", "description": f"Harbor tasks imported from {os.path.abspath(path)}",
             "tasks": ["*/task.json"]}, indent=1) + "\n").encode())
    return report


# --------------------------------------------------------------------------- export

_EXPORTABLE = {"test_pass_rate", "command_succeeded", "report_score"}

REDUCE = r'''import json, sys
rules, runs = json.loads(sys.argv[1]), [json.loads(l) for l in sys.argv[2].splitlines() if l.strip()]
total = weight = 0.0
for rule in rules:
    values = [r[rule["metric"]] for r in runs if r.get(rule["metric"]) is not None]
    weight += rule["weight"]
    if not values:
        continue
    how = rule.get("aggregation", "last")
    v = {"max": max, "min": min, "mean": lambda x: sum(x) / len(x), "first": lambda x: x[0], "last": lambda x: x[-1]}[how](values)
    t = rule.get("threshold")
    score = (1.0 if v >= (t if t is not None else 1.0) else 0.0) if rule.get("scoring") == "step" else max(0.0, min(1.0, v / (t or 1.0)))
    total += rule["weight"] * score
print(round(total / weight, 6) if weight else 0.0)
'''


def exportable(task: TaskSpec) -> str | None:
    """Why *task* cannot be exported, or None when it can."""
    for rule in task.reward.rules:
        if rule.reward_model is not None:
            return f"reward model {rule.reward_model!r}: Harbor's verifier cannot call agentenv's reward models"
        if rule.metric not in _EXPORTABLE:
            return f"a rule on {rule.metric!r}: only test_pass_rate, command_succeeded and report_score are exported"
        if rule.metric == "test_pass_rate" and (rule.scoring != "step" or (rule.threshold or 1.0) < 1.0):
            return "a linear test_pass_rate rule: the exported verifier sees the exit status, not the pass rate"
        if rule.gate is not None:
            return "a gated rule is not exported"
    if task.environment.runtime not in ("shell", "bash", "python3") and not re.fullmatch(r"python3\.\d+", task.environment.runtime):
        return f"runtime {task.environment.runtime!r} has no Docker base image here"
    if task.workspace.sdist is not None:
        return "a workspace from an sdist: export the unpacked files instead"
    return None


def export_harbor(task: TaskSpec, out: str) -> str:
    """Write *task* as a Harbor task folder ``out/<name>``; return its path. Raises ToolError."""
    why = exportable(task)
    if why:
        raise ToolError(f"{task.task_id}: cannot export to Harbor: {why}")
    name = re.sub(r"[^a-z0-9-]", "-", task.task_id.lower()).strip("-")
    folder = os.path.join(out, name)
    shutil.rmtree(folder, ignore_errors=True)
    runtime = task.environment.runtime
    python = runtime[len("python"):] if runtime.startswith("python3.") else "3.11"
    pristine = task.workspace.read()
    hidden = task.hidden_files.read() if task.hidden_files else {}
    protected = {rel: data for rel, data in pristine.items() if agentenv.matches_any(rel, task.protected_paths)}
    for rel, data in pristine.items():
        _write(os.path.join(folder, "environment", "app", rel), data)
    deps = " ".join(shlex.quote(d) for d in task.environment.dependencies)
    dockerfile = [f"FROM python:{python}-slim", "WORKDIR /app"]
    if deps:
        dockerfile.append(f"RUN pip install --no-cache-dir {deps}")
    dockerfile += [f"ENV {k}={json.dumps(v)}" for k, v in task.environment.env.items()]
    dockerfile.append("COPY app/ /app/")
    _write(os.path.join(folder, "environment", "Dockerfile"), ("\n".join(dockerfile) + "\n").encode())
    for rel, data in protected.items():
        _write(os.path.join(folder, "tests", "protected", rel), data)
    for rel, data in hidden.items():
        _write(os.path.join(folder, "tests", "hidden", rel), data)
    lines = ["#!/bin/bash", f"# the verifier of agentenv task {task.task_id} {EXPORT_MARK}",
             "# each scored command's metrics, one JSON line each, kept in this shell (a check may empty /tmp)",
             "runs=''", "cd /app"]
    if protected:
        lines.append("cp -a /tests/protected/. /app/   # the task's own tests, as they were")
    if hidden:
        lines.append("cp -a /tests/hidden/. /app/      # hidden tests and checks")
    rules = [r.to_json() for r in task.reward.rules]
    scored = 0
    for step in task.execution_steps:
        if step["action"] != "run_command":
            if PLACEHOLDER in json.dumps(step) or step["action"] == "submit":
                continue  # the agent writes its files itself in Harbor
            raise ToolError(f"{task.task_id}: cannot export to Harbor: the evaluation step {step['action']!r} "
                            "has no shell form")
        scored += 1
        report = step.get("report") or {}
        if report.get("format") == "reward_file":
            lines += ["fifo=$(mktemp -u); mkfifo \"$fifo\"; exec 3<>\"$fifo\"",
                      f"(cd /app && AGENTENV_REWARD_FILE=\"$fifo\" {step['command']}); code=$?",
                      "score=$(timeout 1 head -n1 <&3 || true); exec 3>&-; rm -f \"$fifo\"",
                      "runs+=\"$(python3 -c 'import json,sys; print(json.dumps({\"command_succeeded\": float(sys.argv[1] == \"0\"), "
                      "\"report_score\": float(sys.argv[2]) if sys.argv[2] else 0.0}))' \"$code\" \"$score\")\"$'\\n'"]
        elif report:
            raise ToolError(f"{task.task_id}: cannot export to Harbor: the report format {report.get('format')!r}")
        else:
            lines += [f"(cd /app && {step['command']}); code=$?",
                      "runs+=\"$(python3 -c 'import json,sys; ok = float(sys.argv[1] == \"0\"); print(json.dumps("
                      "{\"test_pass_rate\": ok, \"command_succeeded\": ok, \"report_score\": ok}))' \"$code\")\"$'\\n'"]
    lines += ["mkdir -p /logs/verifier",
              f"python3 - {shlex.quote(json.dumps(rules))} \"$runs\" > /logs/verifier/reward.txt <<'REDUCE'",
              REDUCE.rstrip("\n"), "REDUCE", "cat /logs/verifier/reward.txt"]
    _write(os.path.join(folder, "tests", "test.sh"), ("\n".join(lines) + "\n").encode())
    reference = task.reference_solution.read() if task.reference_solution is not None else {}
    if reference:
        solve = ["#!/bin/bash", "set -euo pipefail", "cd /app"]
        for rel in sorted(reference):
            data = reference[rel]
            solve += [f"mkdir -p {shlex.quote(os.path.dirname(rel) or '.')}",
                      f"base64 -d > {shlex.quote(rel)} <<'EOF'", base64.encodebytes(data).decode().rstrip("\n"), "EOF"]
        _write(os.path.join(folder, "solution", "solve.sh"), ("\n".join(solve) + "\n").encode())
    instruction = task.description.strip() + "\n"
    if task.single_shot_path:
        instruction += f"\nWrite your solution to `{task.root.rstrip('/')}/{task.single_shot_path}`.\n"
    _write(os.path.join(folder, "instruction.md"), instruction.encode())
    verifier_timeout = task.limits.wall_time_s * max(1, scored)
    toml = ['version = "1.0"', "", "[metadata]", f"agentenv_task_id = {json.dumps(task.task_id)}",
            f"difficulty = {json.dumps(task.difficulty or 'medium')}", f"tags = {json.dumps(list(task.tags))}", "",
            "[verifier]", f"timeout_sec = {float(verifier_timeout)}", "", "[agent]",
            f"timeout_sec = {float(max(600.0, (task.expected_duration_s or 60) * 10))}", "", "[environment]",
            "build_timeout_sec = 600.0", "cpus = 1", f"memory_mb = {task.limits.memory_mb}",
            f"allow_internet = {'true' if task.limits.network else 'false'}"]
    _write(os.path.join(folder, "task.toml"), ("\n".join(toml) + "\n").encode())
    return folder


def export_tasks(source: str, out: str, progress: Callable[[str], None] | None = None) -> tuple[list[str], list[str]]:
    """Export a task file, a suite folder or an installed suite's name; return (written, refused reasons)."""
    say = progress or (lambda message: None)
    if os.path.isfile(source):
        paths = [source]
    else:
        paths = list(agentenv.find_suite(source).task_files)
    written, refused = [], []
    for path in paths:
        task = agentenv.load_task(path)
        try:
            written.append(export_harbor(task, out))
            say(f"  exported {task.task_id}")
        except ToolError as exc:
            refused.append(str(exc))
            say(f"  refused {exc}")
    return written, refused

