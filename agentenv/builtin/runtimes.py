"""Built-in runtimes: ``python3`` / ``python3.X`` and ``shell``.

A Python runtime resolves a real interpreter on the host (through pyenv shims too), then builds
the task's dependencies into a virtual environment under the cache, named by the content hash of
(runtime, interpreter version, dependency list). The build happens once even when many episodes
ask at once (an exclusive file lock, a build in a temp dir, an atomic rename). Sandboxes mount the
interpreter prefix and the environment read-only, at the same paths.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from packaging.requirements import InvalidRequirement, Requirement

import agentenv
from agentenv import Runtime, RuntimeBuildError, RuntimeEnv

log = logging.getLogger("agentenv.runtime")
_FINGERPRINT = "agentenv-runtime.json"
_BYTECODE = "bytecode"  # (was "pycache", which held the standard library only: never read again)
#: parts of the standard library no test imports (compiling them would only cost time and space),
#: and the interpreter's own site-packages (the host's packages, hidden in sandboxes); the
#: runtime's site-packages is compiled
_BYTECODE_SKIP = r"(/test/|/tests/|/idlelib/|/tkinter/|/turtledemo/|/lib2to3/|/ensurepip/|^{stdlib}/(site|dist)-packages/)"
_PROBE = ("import sys, json, sysconfig; print(json.dumps({'executable': sys.executable, "
          "'base_prefix': sys.base_prefix, 'version': sys.version.split()[0], "
          "'implementation': sys.implementation.name}))")
_LIST = ("import json, importlib.metadata as m; print(json.dumps(sorted({(d.metadata['Name'] or '?').lower(): "
         "d.version for d in m.distributions()}.items())))")
#: in the bytecode cache: says the pytest plugins' rewritten modules were written (see _rewrite_plugins)
_REWRITTEN = "agentenv-pytest-plugins.json"
#: run by the runtime's Python with ``-I -S -X pycache_prefix=<cache>``, its site-packages as
#: arguments: writes, for every module pytest rewrites on import because its distribution declares
#: a pytest11 entry point, the rewritten bytecode where pytest's import hook looks for it first.
#: Only pytest's rewriter is imported (no site, no ``.pth``, no plugin): it parses and compiles.
_REWRITE = r"""
import importlib.metadata, json, os, sys
from pathlib import Path
paths = sys.argv[1:]
sys.path[:0] = paths
try:
    from _pytest.assertion import rewrite
    from _pytest.config import _iter_rewritable_modules
except Exception as exc:
    print(json.dumps({"written": 0, "why": "no pytest to rewrite with (%s)" % type(exc).__name__}))
    raise SystemExit(0)
class State:
    def trace(self, *args):
        pass
written, failed = 0, []
for dist in importlib.metadata.distributions(path=paths):
    if not any(ep.group == "pytest11" for ep in dist.entry_points):
        continue
    files = [str(f) for f in dist.files or ()]
    names = set(_iter_rewritable_modules(files))
    for rel in files:
        module = rel[:-3].replace("/", ".")
        module = module[:-9] if module.endswith(".__init__") else module
        if not rel.endswith(".py") or not any(module == n or module.startswith(n + ".") for n in names):
            continue
        source = Path(dist.locate_file(rel))
        try:
            cache = rewrite.get_cache_dir(source)
            os.makedirs(cache, exist_ok=True)
            key, code = rewrite._rewrite_test(source, None)
            if not rewrite._write_pyc(State(), code, key, cache / (source.name[:-3] + rewrite.PYC_TAIL)):
                raise OSError("not written")
            written += 1
        except Exception as exc:
            failed.append("%s: %s" % (rel, type(exc).__name__))
print(json.dumps({"written": written, "failed": failed[:20], "pytest_tag": rewrite.PYTEST_TAG}))
"""
_lock = threading.Lock()
_prepared: dict[tuple, RuntimeEnv] = {}


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", name))


def _search_dirs() -> list[str]:
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.join(os.path.expanduser("~"), ".pyenv"))
    dirs += sorted(glob.glob(os.path.join(pyenv_root, "versions", "3.*", "bin")), key=_version_key, reverse=True)
    dirs += ["/usr/local/bin", "/usr/bin"]
    return [d for d in dict.fromkeys(dirs) if "shims" not in d.split(os.sep)]


def host_interpreters() -> dict[str, list[str]]:
    """``{"3.11": [executables...], ...}``: every ``python3.X`` on this host (PATH, pyenv's versions,
    /usr/local/bin, /usr/bin), the one place that says which runtimes exist here: resolving a
    runtime, its error message, ``agentenv validate`` and the names offered in errors all read it."""
    found: dict[str, list[str]] = {}
    for directory in _search_dirs():
        for path in glob.glob(os.path.join(directory, "python3.*")):
            minor = os.path.basename(path)[len("python"):]
            if re.fullmatch(r"3\.\d+", minor) and os.access(path, os.X_OK) and not os.path.isdir(path):
                found.setdefault(minor, []).append(path)
    return {v: found[v] for v in sorted(found, key=_version_key)}


def _candidates(version: str | None) -> list[str]:
    found = []
    if version is None:
        if not getattr(sys, "frozen", False):
            found.append(getattr(sys, "_base_executable", sys.executable))
        which = shutil.which("python3")
        if which:
            found.append(which)
        for paths in reversed(host_interpreters().values()):
            found += paths
    else:
        found += host_interpreters().get(version, [])
    return [p for p in dict.fromkeys(found) if os.path.exists(p)]


_resolved: dict[str, dict] = {}


def resolve_interpreter(runtime: str) -> dict:
    """``{"executable", "base_prefix", "version"}`` of a real interpreter for *runtime*."""
    if runtime in _resolved:
        return _resolved[runtime]
    m = re.fullmatch(r"python(3(?:\.\d+)?)?", runtime)
    version = m.group(1) if m and m.group(1) and "." in m.group(1) else None
    tried = []
    for exe in _candidates(version):
        try:
            out = subprocess.run([exe, "-I", "-c", _PROBE], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append(f"{exe} ({exc})")
            continue
        if out.returncode != 0:
            tried.append(f"{exe} (exit {out.returncode})")
            continue
        info = json.loads(out.stdout)
        if version and not info["version"].startswith(version + "."):
            tried.append(f"{exe} (is Python {info['version']})")
            continue
        _resolved[runtime] = info
        return info
    here = ", ".join(f"python{v}" for v in host_interpreters()) or "no python3.X"
    raise RuntimeBuildError(
        f"runtime {runtime!r}: no such interpreter on this host (tried: {', '.join(tried) or 'nothing found'}); "
        f"found here: {here}; install it (e.g. apt-get install {runtime} or pyenv install) or change "
        "environment_config.runtime")


def requirement_problem(requirement: str) -> str | None:
    """Why pip would refuse *requirement* (PEP 508: a name, extras, version specifiers, markers),
    or None. A task's dependencies are checked when it loads, not when its runtime is built."""
    try:
        Requirement(requirement)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0].rstrip(".")
        return (f"not a valid pip requirement ({reason}); write NAME, NAME==VERSION or NAME>=VERSION, "
                "e.g. 'pytest==8.3.5'")
    return None


class PythonRuntime(Runtime):
    pattern = r"python3(?:\.\d+)?"
    shell = "/bin/sh"
    kind = "python"

    @property
    def examples(self) -> tuple[str, ...]:  # type: ignore[override]
        """python3 and every python3.X on this host (the names an error offers)."""
        return ("python3", *(f"python{v}" for v in host_interpreters()))

    def dependency_problem(self, requirement: str) -> str | None:
        return requirement_problem(requirement)

    def unavailable(self, name: str) -> str | None:
        try:
            resolve_interpreter(self.interpreter_name(name))
        except RuntimeBuildError as exc:
            return str(exc)
        return None

    def prepare(self, config, cache_dir: str | None = None) -> RuntimeEnv:
        key = (type(self).__name__, config.runtime, tuple(config.dependencies), tuple(sorted(config.env.items())))
        with _lock:
            if key in _prepared:
                return _prepared[key]
        interp = resolve_interpreter(self.interpreter_name(config.runtime))
        deps = sorted(config.dependencies)
        digest = hashlib.sha256(json.dumps([interp["executable"], interp["version"], deps]).encode()).hexdigest()[:20]
        root = os.path.join(cache_dir or agentenv.cache_dir(), "runtimes")
        os.makedirs(root, exist_ok=True)
        env_dir = os.path.join(root, f"py{interp['version']}-{digest}")
        fingerprint = self._build(interp, deps, env_dir)
        fingerprint = {**fingerprint, "runtime": config.runtime, "kind": self.kind}
        env = {"PATH": f"{env_dir}/bin:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": env_dir, **config.env}
        bytecode = self._bytecode(interp, env_dir)
        if bytecode:
            env.setdefault("PYTHONPYCACHEPREFIX", bytecode)
        mounts = tuple(p for p in (interp["base_prefix"], env_dir) if not p.startswith("/usr"))
        prepared = RuntimeEnv(config.runtime, mounts, env, fingerprint, self.shell)
        with _lock:
            _prepared[key] = prepared
        return prepared

    def interpreter_name(self, runtime: str) -> str:
        return runtime

    def _bytecode(self, interp: dict, env_dir: str) -> str | None:
        """A bytecode cache of the interpreter's standard library and the environment's packages
        (``PYTHONPYCACHEPREFIX``), compiled once, read-only in sandboxes like the rest of the runtime.

        Commands never read a ``__pycache__`` of the workspace (the agent could plant one), so
        without this every run compiled the standard library and pytest from source (~350 ms of
        CPU a scored run). ``compileall`` only compiles. The cache also holds the pytest plugins'
        modules as pytest's assertion hook rewrites them (``_rewrite_plugins``), which every run
        rewrote again. None when it cannot be built (commands then compile as before)."""
        target = os.path.join(env_dir, _BYTECODE)
        if os.path.exists(os.path.join(target, _REWRITTEN)):
            return target
        version = ".".join(interp["version"].split(".")[:2])
        stdlib = os.path.join(interp["base_prefix"], "lib", f"python{version}")
        packages = [p for p in glob.glob(os.path.join(env_dir, "lib", "python*", "site-packages")) if os.path.isdir(p)]
        python = os.path.join(env_dir, "bin", "python")
        with open(env_dir + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.isdir(target):
                tmp = f"{target}.tmp-{os.getpid()}"
                shutil.rmtree(tmp, ignore_errors=True)
                try:
                    skip = _BYTECODE_SKIP.format(stdlib=re.escape(stdlib))
                    subprocess.run([python, "-I", "-X", f"pycache_prefix={tmp}", "-m", "compileall", "-q", "-j0",
                                    "-x", skip, *[p for p in (stdlib, *packages) if os.path.isdir(p)]],
                                   capture_output=True, timeout=600)  # a file that does not compile is just skipped
                except (OSError, subprocess.TimeoutExpired) as exc:
                    log.warning("no bytecode cache for %s (%s): commands compile from source", env_dir, exc)
                    shutil.rmtree(tmp, ignore_errors=True)
                    return None
                if not os.path.isdir(tmp):
                    return None
                _open_directories(tmp)
                os.rename(tmp, target)
            if not os.path.exists(os.path.join(target, _REWRITTEN)):
                _rewrite_plugins(python, target, packages)
            return target

    def _build(self, interp: dict, deps: list[str], env_dir: str) -> dict:
        stamp = os.path.join(env_dir, _FINGERPRINT)
        if os.path.exists(stamp):
            return json.load(open(stamp))
        with open(env_dir + ".lock", "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # another process builds it: wait for it (one builder), then find the stamp
                with _BuildProgress(f"python {interp['version']}", deps, waiting=True):
                    fcntl.flock(lock, fcntl.LOCK_EX)
            if os.path.exists(stamp):
                return json.load(open(stamp))
            tmp = f"{env_dir}.tmp-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            log.info("building runtime %s with %s (once; cached in %s)", interp["version"], deps or "no dependencies", env_dir)
            with _BuildProgress(f"python {interp['version']}", deps) as progress:
                progress.phase("creating the virtual environment")
                self._run([interp["executable"], "-m", "venv", "--without-pip", tmp], "create the virtual environment",
                          progress)
                # The venv must work at its final path: build at the final name's sibling, then fix paths.
                if deps:
                    progress.phase("pip install")
                    self._run([sys.executable, "-m", "pip", "--python", os.path.join(tmp, "bin", "python"), "install",
                               "--no-input", "--disable-pip-version-check", "--no-warn-script-location",
                               "--progress-bar", "off", *deps], f"install {' '.join(deps)}", progress)
            _relocate(tmp, env_dir)
            os.rename(tmp, env_dir)
            out = subprocess.run([os.path.join(env_dir, "bin", "python"), "-I", "-c", _LIST],
                                 capture_output=True, text=True, timeout=60)
            packages = dict(json.loads(out.stdout)) if out.returncode == 0 else {}
            fingerprint = {"python": interp["version"], "executable": interp["executable"],
                           "implementation": interp["implementation"], "dependencies": deps,
                           "packages": packages, "hash": os.path.basename(env_dir)}
            _open_directories(env_dir)
            with open(stamp + ".tmp", "w") as f:
                json.dump(fingerprint, f, indent=1, sort_keys=True)
            os.rename(stamp + ".tmp", stamp)
            return fingerprint

    @staticmethod
    def _run(argv: list[str], what: str, progress: "_BuildProgress") -> None:
        """Run one build command; its output lines feed the progress line, its tail the error."""
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace")
        except OSError as exc:
            raise RuntimeBuildError(f"could not {what}: {exc}") from exc
        watchdog = threading.Timer(_BUILD_TIMEOUT_S, proc.kill)
        watchdog.start()
        tail: list[str] = []
        try:
            for line in proc.stdout:
                line = line.rstrip()
                if line:
                    tail = (tail + [line])[-15:]
                    if not line.startswith(" "):  # "Collecting x", "Installing collected packages: ..."
                        progress.phase(line)
            status = proc.wait()
        finally:
            watchdog.cancel()
            proc.stdout.close()
        if status != 0:
            why = f"killed after {_BUILD_TIMEOUT_S} s" if status == -signal.SIGKILL else f"exit {status}"
            raise RuntimeBuildError(f"could not {what} ({why}):\n" + "\n".join(tail))


_BUILD_TIMEOUT_S = 1800


class _BuildProgress:
    """A status line on a terminal while a runtime builds: the first build of one with dependencies
    takes tens of seconds (pip), and silence looks like a hang. Nothing is written when stderr is
    not a terminal (logs, CI, captured output): there ``-v`` logs the build instead."""

    def __init__(self, interpreter: str, deps: list[str], waiting: bool = False, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        shown = ", ".join(deps[:2]) + (f" +{len(deps) - 2} more" if len(deps) > 2 else "")
        what = f"{interpreter} + {shown}" if deps else interpreter
        self.title = (f"agentenv: waiting for another process building runtime {what}" if waiting else
                      f"agentenv: first use: building runtime {what}")
        self.waiting = waiting
        self._phase = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.start = time.monotonic()

    def phase(self, text: str) -> None:
        self._phase = text

    def _draw(self, end: str = "") -> None:
        width = shutil.get_terminal_size((100, 20)).columns
        elapsed = time.monotonic() - self.start
        done = "" if self.waiting or self.title.find("failed") >= 0 else "; cached from now on"
        text = f"{self.title} ({elapsed:.1f} s{done})" if end else f"{self.title} {elapsed:.0f}s"
        if self._phase and not end:
            text += f": {self._phase}"
        try:
            self.stream.write("\r" + text[:max(width - 1, 20)] + "\x1b[K" + end)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the build goes on
            self.enabled = False

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self._draw()

    def __enter__(self) -> "_BuildProgress":
        if self.enabled:
            self._draw()
            self._thread = threading.Thread(target=self._tick, name="agentenv-runtime-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.enabled:
            if not self.waiting:
                self.title = self.title.replace("building", "built" if kind is None else "failed to build", 1)
            self._draw(end="\n")


def _rewrite_plugins(python: str, target: str, packages: list[str]) -> None:
    """Add to the bytecode cache *target* the modules of the runtime's pytest plugins (those of
    distributions with a pytest11 entry point) as pytest's assertion hook rewrites them, at the path
    it reads first (``get_cache_dir`` under ``sys.pycache_prefix``). A scored run then loads them as
    any pytest with a writable cache would, instead of parsing and rewriting them again (the 16
    modules of pytest-json-report and pytest-metadata: ~5 ms of CPU a run; hypothesis's 101: ~300).
    Written by the runtime's own pytest (the rewrite is version-specific), imported with ``-I -S``:
    no site, no ``.pth`` file, no plugin runs; it parses and compiles, as ``compileall`` does. The
    outcome is kept in ``_REWRITTEN``; whatever fails is left to pytest, which rewrites it per run."""
    try:
        out = subprocess.run([python, "-I", "-S", "-X", f"pycache_prefix={target}", "-c", _REWRITE, *packages],
                             capture_output=True, text=True, timeout=300)
        lines = out.stdout.strip().splitlines()
        outcome = json.loads(lines[-1]) if out.returncode == 0 and lines else {
            "written": 0, "why": f"exit status {out.returncode}: {out.stderr.strip()[-300:]}"}
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        outcome = {"written": 0, "why": f"{type(exc).__name__}: {exc}"}
    _open_directories(target)
    with open(os.path.join(target, _REWRITTEN + ".tmp"), "w") as f:
        json.dump(outcome, f, indent=1, sort_keys=True)
    os.rename(os.path.join(target, _REWRITTEN + ".tmp"), os.path.join(target, _REWRITTEN))


def _open_directories(root: str) -> None:
    """Every directory under *root* readable and searchable by the sandboxes' user."""
    for parent, dirs, _ in os.walk(root):
        for d in dirs:
            os.chmod(os.path.join(parent, d), 0o755)


def _relocate(tmp: str, final: str) -> None:
    """Rewrite the temp build path inside scripts and pyvenv.cfg to the final path."""
    old, new = tmp.encode(), final.encode()
    for root, _, files in os.walk(tmp):
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or name.endswith((".pyc", ".so")):
                continue
            try:
                data = open(path, "rb").read()
            except OSError:
                continue
            if old in data:
                with open(path, "wb") as f:
                    f.write(data.replace(old, new))


class ShellRuntime(PythonRuntime):
    """Ops-script tasks: bash and coreutils, with Python and the dependencies for the tests."""

    pattern = r"shell|bash"
    examples = ("shell", "bash")
    shell = "/bin/bash"
    kind = "shell"

    def interpreter_name(self, runtime: str) -> str:
        return "python3"

    def prepare(self, config, cache_dir=None) -> RuntimeEnv:
        env = super().prepare(config, cache_dir)
        try:
            bash = subprocess.run(["/bin/bash", "-c", "echo $BASH_VERSION"], capture_output=True, text=True).stdout.strip()
        except OSError as exc:
            raise RuntimeBuildError(f"runtime {config.runtime!r} needs /bin/bash, which is missing: {exc}") from exc
        return RuntimeEnv(env.name, env.mounts, env.env, {**env.fingerprint, "bash": bash}, self.shell)


@agentenv.hookimpl
def agentenv_add_runtimes(registry) -> None:
    registry.add_runtime(PythonRuntime())
    registry.add_runtime(ShellRuntime())
