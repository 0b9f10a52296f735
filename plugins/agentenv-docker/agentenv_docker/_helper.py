"""The bootstrap every container starts with: pid 1, run as ``python3 -I -S`` (standard library only).

The request server is agentenv's one in-sandbox server (``agentenv.sandbox_server_source()``, the
same code the namespace backend's init runs): the backend sends its text as the first message on
stdin, framed like every request (``!II`` header and body lengths, the JSON header
``{"op": "load"}``, the source as body). This file runs it and hands it stdin and stdout, so the
image holds only this bootstrap and a change to the server needs no new image.

Running as pid 1 of the container's pid namespace gives the server two powers the backend relies
on: ``kill(-1, SIGKILL)`` ends every other process of the container, and orphans are reparented to
it, so it reaps them.
"""

import json
import struct
import sys
import types

HEADER = struct.Struct("!II")


def _exact(n):
    chunks = []
    while n:
        chunk = sys.stdin.buffer.read(n)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write(data):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _reply(header):
    data = json.dumps(header).encode()
    _write(HEADER.pack(len(data), 0) + data)


def main():
    try:
        hlen, blen = HEADER.unpack(_exact(HEADER.size))
        header = json.loads(_exact(hlen))
        source = _exact(blen)
    except EOFError:
        return
    if header.get("op") != "load":
        _reply({"error": "RuntimeError", "message": "the first request must load the server"})
        return
    server = types.ModuleType("agentenv_sandbox_server")
    try:
        exec(compile(source, "agentenv-sandbox-server", "exec"), server.__dict__)
    except Exception as exc:
        _reply({"error": "RuntimeError", "message": "the server did not load: %s: %s" % (type(exc).__name__, exc)})
        return
    sys.modules[server.__name__] = server
    _reply({"ok": True, "python": sys.version.split()[0]})
    server.serve_stdio(_exact, _write, server.ContainerServer, root=header.get("root", "/app"),
                       rlimits=header.get("rlimits") or ())


if __name__ == "__main__":
    main()
