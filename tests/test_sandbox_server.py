"""The one in-sandbox request server (issue 12): one standard-library file, Python 3.7 syntax,
that the namespace init and the Docker helper both run; the Docker bootstrap serves it over stdio."""

from __future__ import annotations

import ast
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import agentenv
from agentenv.builtin import namespace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HELPER = os.path.join(REPO, "plugins", "agentenv-docker", "agentenv_docker", "_helper.py")
WARM = os.path.join(REPO, "agentenv", "builtin", "_nswarm.py")
HEADER = struct.Struct("!II")


def _imports(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_the_server_and_the_warm_template_are_python37_standard_library_only():
    # (the template preloads the runtime's own pytest where it has one: that is what it is for)
    for name, source, allowed in [("server", agentenv.sandbox_server_source(), set()),
                                  ("bootstrap", open(HELPER).read(), set()),
                                  ("warm template", open(WARM).read(), {"pytest", "_pytest"})]:
        tree = ast.parse(source, feature_version=(3, 7))  # runs on the sandbox's own Python
        outside = _imports(tree) - set(sys.stdlib_module_names) - {"__future__"} - allowed
        assert not outside, (name, outside)


def test_both_backends_run_the_same_server():
    program = namespace.zygote_program().decode()
    assert repr(agentenv.sandbox_server_source()) in program
    helper = open(HELPER).read()
    assert "class Capped" not in helper and "def op_exec" not in helper  # no second copy to drift


def _call(proc, header: dict, body: bytes = b"") -> tuple[dict, bytes]:
    data = json.dumps(header).encode()
    proc.stdin.write(HEADER.pack(len(data), len(body)) + data + body)
    proc.stdin.flush()
    hlen, blen = HEADER.unpack(proc.stdout.read(HEADER.size))
    reply = json.loads(proc.stdout.read(hlen))
    return reply, proc.stdout.read(blen) if blen else b""


def test_the_docker_bootstrap_serves_requests_over_stdio():
    # Started as root (a container's helper is), the server takes the sandbox user as its effective
    # uid, keeping root as real and saved uid: its folder must be the sandbox user's then.
    top = tempfile.mkdtemp(prefix="agentenv-helper-")
    os.chmod(top, 0o755)
    if os.getuid() == 0:
        os.chown(top, 65534, 65534)
    root = os.path.join(top, "app")
    proc = subprocess.Popen([sys.executable, "-I", "-S", HELPER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert _call(proc, {"op": "load", "root": root}, agentenv.sandbox_server_source().encode())[0]["ok"]
        if os.getuid() == 0:
            assert _call(proc, {"op": "ping"})[0]["ok"]  # (so the server has started)
            with open(f"/proc/{proc.pid}/status") as f:
                uids = next(line for line in f if line.startswith("Uid:")).split()[1:]
            assert uids == ["0", "65534", "0", "65534"], uids
        assert _call(proc, {"op": "ping"})[0]["python"] == sys.version.split()[0]
        assert _call(proc, {"op": "write", "path": f"{root}/d/f.txt", "mode": 0o600}, b"data")[0] == {"ok": True}
        assert _call(proc, {"op": "read", "path": f"{root}/d/f.txt"})[1] == b"data"
        assert _call(proc, {"op": "list", "path": root})[0]["files"] == ["d/f.txt"]
        os.symlink("/etc/passwd", f"{root}/link")
        assert _call(proc, {"op": "read", "path": f"{root}/link"})[0]["error"] == "OSError"  # never followed
        reply, body = _call(proc, {"op": "exec", "argv": ["sh", "-c", "cat; echo err >&2; exit 3"],
                                   "env": {"PATH": "/usr/bin:/bin"}, "cwd": root, "timeout": 30,
                                   "max_output_bytes": 1 << 20}, b"in")
        assert (reply["exit_code"], body[:reply["stdout_len"]], reply["start"]) == (3, b"in", "cold")
        assert _call(proc, {"op": "nonsense"})[0]["error"] == "RuntimeError"
        assert _call(proc, {"op": "remove", "path": f"{root}/d"})[0] == {"ok": True}
        assert not os.path.exists(f"{root}/d")
    finally:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        shutil.rmtree(top, ignore_errors=True)
