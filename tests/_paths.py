"""Paths the core tests share (a plain module: conftest.py names clash across test folders)."""

import os
import subprocess
import sys
import textwrap
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "tasks", "examples")
REFERENCE_DOC = os.path.join(EXAMPLES, "reference", "complex_code_refactor_01.json")


def example(name: str) -> str:
    return os.path.join(EXAMPLES, name, "task.json")


def unprivileged_python() -> tuple[str, str]:
    """The host's own Python and this venv's site-packages, for tests that run the project as uid 4242
    (the venv's interpreter may live under /root); skips, saying why, where that user cannot run it."""
    import pytest

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    interpreter = f"/usr/bin/python{version}"
    site_packages = os.path.join(sys.prefix, "lib", f"python{version}", "site-packages")
    if os.geteuid() != 0:
        pytest.skip("needs root, to run as a user of its own (the suite as a user runs rootless anyway)")
    if not os.path.exists(interpreter) or not os.path.isdir(site_packages):
        pytest.skip(f"needs {interpreter} and {site_packages}")
    for needed in (os.path.join(site_packages, "pytest", "__init__.py"), os.path.join(REPO, "agentenv", "__init__.py")):
        probe = subprocess.run(["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups", "test", "-r", needed])
        if probe.returncode != 0:
            pytest.skip(f"uid 4242 cannot read {needed}: a folder above it is closed to other users (a "
                        "`mktemp -d` checkout is 0700); clone into a folder others may enter to run this test")
    return interpreter, site_packages


def run_unprivileged(code: str, where: str, *, userns_allowed: bool = True) -> subprocess.CompletedProcess:
    """Run *code* with the host's own Python 3.11 as uid 4242, which has no name, home or rights
    (the venv's interpreter lives under /root). With *userns_allowed* false it runs in a user
    namespace whose ``max_user_namespaces`` is 0: a host that refuses users new user namespaces."""
    interpreter, site_packages = unprivileged_python()
    home = os.path.join(where, "home")
    os.mkdir(home)
    os.chown(home, 4242, 4242)
    prelude = f"import site, sys; site.addsitedir({site_packages!r}); sys.path.insert(0, {REPO!r})\n"
    user = ["setpriv", "--reuid=4242", "--regid=4242", "--clear-groups",
            "env", f"HOME={home}", interpreter, "-I", "-c", prelude + textwrap.dedent(code)]
    if userns_allowed:
        return subprocess.run(user, capture_output=True, text=True, timeout=600, cwd=str(home))
    # root makes the namespace (mapping 0 and 4242 to themselves), lowers its limit, then becomes 4242
    inner = "read go; exec sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec \"$@\"' sh \"$@\""
    proc = subprocess.Popen(["unshare", "--user", "sh", "-c", inner, "sh", *user], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(home))
    ours = os.readlink("/proc/self/ns/user")
    deadline = time.monotonic() + 10
    while os.readlink(f"/proc/{proc.pid}/ns/user") == ours:
        assert time.monotonic() < deadline, "unshare --user did not start"
        time.sleep(0.05)
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{proc.pid}/{name}", "w") as f:
            f.write("0 0 1\n4242 4242 1\n")
    out, err = proc.communicate("go\n", timeout=600)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def wait_until(predicate, timeout: float = 10.0) -> bool:
    """Poll *predicate* every 50 ms until it holds or *timeout* seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def signed_judge_report(key: bytes, records: list) -> bytes:
    """*records* as the trusted pytest judge writes them: a JSON line each, with its HMAC (by *key*) of
    its number and text."""
    import hashlib
    import hmac
    import json
    lines = []
    for seq, record in enumerate(records, start=1):
        text = json.dumps(record).encode()
        lines.append(text + b"\t" + hmac.new(key, str(seq).encode() + b":" + text, hashlib.sha256).hexdigest().encode())
    return b"\n".join(lines) + b"\n"
