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
import subprocess
import sys
import threading

import agentenv
from agentenv import Runtime, RuntimeBuildError, RuntimeEnv

log = logging.getLogger("agentenv.runtime")
_FINGERPRINT = "agentenv-runtime.json"
_PROBE = ("import sys, json, sysconfig; print(json.dumps({'executable': sys.executable, "
          "'base_prefix': sys.base_prefix, 'version': sys.version.split()[0], "
          "'implementation': sys.implementation.name}))")
_LIST = ("import json, importlib.metadata as m; print(json.dumps(sorted({(d.metadata['Name'] or '?').lower(): "
         "d.version for d in m.distributions()}.items())))")
_lock = threading.Lock()
_prepared: dict[tuple, RuntimeEnv] = {}


def _candidates(version: str | None) -> list[str]:
    name = f"python{version}" if version else "python3"
    found = []
    if version is None and not getattr(sys, "frozen", False):
        found.append(getattr(sys, "_base_executable", sys.executable))
    which = shutil.which(name)
    if which:
        found.append(which)
    home = os.path.expanduser("~")
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.join(home, ".pyenv"))
    minor = version or "3"
    for path in sorted(glob.glob(os.path.join(pyenv_root, "versions", f"{minor}.*", "bin", f"python{minor}")),
                       reverse=True):
        found.append(path)
    for d in ("/usr/local/bin", "/usr/bin"):
        found.append(os.path.join(d, name))
    return [p for p in dict.fromkeys(found) if os.path.exists(p)]


def resolve_interpreter(runtime: str) -> dict:
    """``{"executable", "base_prefix", "version"}`` of a real interpreter for *runtime*."""
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
        return info
    found = sorted({os.path.basename(p) for p in glob.glob("/usr/bin/python3*") + glob.glob(
        os.path.expanduser("~/.pyenv/versions/*/bin/python3.*")) if re.fullmatch(r"python3\.\d+", os.path.basename(p))})
    raise RuntimeBuildError(
        f"runtime {runtime!r}: no such interpreter on this host (tried: {', '.join(tried) or 'nothing found'}); "
        f"found here: {', '.join(found) or 'no python3.X'}; install it (e.g. apt-get install {runtime} or "
        f"pyenv install) or change environment_config.runtime")


class PythonRuntime(Runtime):
    pattern = r"python3(?:\.\d+)?"
    examples = ("python3", "python3.10", "python3.11", "python3.12")
    shell = "/bin/sh"
    kind = "python"

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
        mounts = tuple(p for p in (interp["base_prefix"], env_dir) if not p.startswith("/usr"))
        prepared = RuntimeEnv(config.runtime, mounts, env, fingerprint, self.shell)
        with _lock:
            _prepared[key] = prepared
        return prepared

    def interpreter_name(self, runtime: str) -> str:
        return runtime

    def _build(self, interp: dict, deps: list[str], env_dir: str) -> dict:
        stamp = os.path.join(env_dir, _FINGERPRINT)
        if os.path.exists(stamp):
            return json.load(open(stamp))
        with open(env_dir + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait, then find the stamp
            if os.path.exists(stamp):
                return json.load(open(stamp))
            tmp = f"{env_dir}.tmp-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            log.info("building runtime %s with %s (once; cached in %s)", interp["version"], deps or "no dependencies", env_dir)
            self._run([interp["executable"], "-m", "venv", "--without-pip", tmp], "create the virtual environment")
            # The venv must work at its final path: build at the final name's sibling, then fix paths.
            if deps:
                self._run([sys.executable, "-m", "pip", "--python", os.path.join(tmp, "bin", "python"), "install",
                           "--no-input", "--disable-pip-version-check", "--no-warn-script-location", "-q", *deps],
                          f"install {' '.join(deps)}")
            _relocate(tmp, env_dir)
            os.rename(tmp, env_dir)
            out = subprocess.run([os.path.join(env_dir, "bin", "python"), "-I", "-c", _LIST],
                                 capture_output=True, text=True, timeout=60)
            packages = dict(json.loads(out.stdout)) if out.returncode == 0 else {}
            fingerprint = {"python": interp["version"], "executable": interp["executable"],
                           "implementation": interp["implementation"], "dependencies": deps,
                           "packages": packages, "hash": os.path.basename(env_dir)}
            for root, dirs, files in os.walk(env_dir):
                for d in dirs:
                    os.chmod(os.path.join(root, d), 0o755)
            with open(stamp + ".tmp", "w") as f:
                json.dump(fingerprint, f, indent=1, sort_keys=True)
            os.rename(stamp + ".tmp", stamp)
            return fingerprint

    @staticmethod
    def _run(argv: list[str], what: str) -> None:
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RuntimeBuildError(f"could not {what}: {exc}") from exc
        if out.returncode != 0:
            tail = "\n".join((out.stderr or out.stdout).strip().splitlines()[-15:])
            raise RuntimeBuildError(f"could not {what} (exit {out.returncode}):\n{tail}")


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
