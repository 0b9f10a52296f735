"""The state of a fake root as data: what the ops suite judges (shared by the check and build.py).

A tree maps a relative path to an entry: ``{"type": "dir", "mode": "0755"}``,
``{"type": "file", "mode": "0640", "text": "..."}`` (``"b64"`` instead of ``"text"`` for bytes that
are not UTF-8), ``{"type": "link", "target": "..."}``. Compressed files are judged by what they
hold, not their bytes (gzip stores a time and a name): ``*.gz`` that decompress become
``{"type": "gzip", "mode": ..., "text": ...}`` and ``*.tar.gz`` / ``*.tgz`` become
``{"type": "tar", "mode": ..., "members": {name: text}}``. Modification times are not state.
"""

import base64
import gzip
import io
import os
import stat
import tarfile


def _content(data: bytes) -> dict:
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode()}


def _file_entry(path: str, data: bytes, mode: int) -> dict:
    m = f"{mode:04o}"
    if path.endswith((".tar.gz", ".tgz")):
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
                members = {}
                for member in tar.getmembers():
                    if member.isfile():
                        members[member.name.removeprefix("./")] = tar.extractfile(member).read().decode("utf-8", "replace")
            return {"type": "tar", "mode": m, "members": dict(sorted(members.items()))}
        except (tarfile.TarError, OSError, EOFError):
            pass
    elif path.endswith(".gz"):
        try:
            return {"type": "gzip", "mode": m, **_content(gzip.decompress(data))}
        except (OSError, EOFError):
            pass
    return {"type": "file", "mode": m, **_content(data)}


def read_tree(top: str, limit: int = 20000) -> dict:
    """The state below *top* (links are recorded, never followed)."""
    out = {}
    for dirpath, dirnames, names in os.walk(top):
        for name in sorted(dirnames + names):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, top)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = {"type": "link", "target": os.readlink(full)}
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = {"type": "dir", "mode": f"{stat.S_IMODE(st.st_mode):04o}"}
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    out[rel] = _file_entry(rel, f.read(), stat.S_IMODE(st.st_mode))
            else:
                out[rel] = {"type": "special"}
            if len(out) > limit:
                return out
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return out


def write_tree(top: str, tree: dict) -> None:
    """Lay out *tree* (entries as read_tree gives them, plus optional "mtime") below *top*."""
    os.makedirs(top, exist_ok=True)
    for rel in sorted(tree):
        entry, full = tree[rel], os.path.join(top, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        kind = entry["type"]
        if kind == "dir":
            os.makedirs(full, exist_ok=True)
        elif kind == "link":
            os.symlink(entry["target"], full)
        else:
            data = entry["text"].encode() if "text" in entry else base64.b64decode(entry.get("b64", ""))
            if kind == "gzip":
                data = gzip.compress(data, mtime=0)
            elif kind == "tar":
                buf = io.BytesIO()
                with tarfile.open(fileobj=buf, mode="w") as tar:
                    for name, text in entry["members"].items():
                        raw = text.encode()
                        info = tarfile.TarInfo(name)
                        info.size = len(raw)
                        tar.addfile(info, io.BytesIO(raw))
                data = gzip.compress(buf.getvalue(), mtime=0)  # the same bytes every time
            with open(full, "wb") as f:
                f.write(data)
    for rel in sorted(tree, reverse=True):
        entry, full = tree[rel], os.path.join(top, rel)
        if entry["type"] != "link":
            os.chmod(full, int(entry["mode"], 8))
            if "mtime" in entry:
                os.utime(full, (entry["mtime"], entry["mtime"]))


def strip_times(tree: dict) -> dict:
    return {rel: {k: v for k, v in e.items() if k != "mtime"} for rel, e in tree.items()}


def grade(initial: dict, expected: dict, state: dict) -> tuple[float, list[str]]:
    """(share of the required changes made, what went wrong): 0 when anything else was changed."""
    initial, expected = strip_times(initial), strip_times(expected)
    changed = sorted(p for p in set(initial) | set(expected) if initial.get(p) != expected.get(p))
    collateral = sorted(p for p in set(initial) | set(state) if p not in changed and state.get(p) != initial.get(p))
    if collateral:
        return 0.0, [f"changed what it should have left alone: {', '.join(collateral[:5])}"
                     + (f" and {len(collateral) - 5} more" if len(collateral) > 5 else "")]
    wrong = [p for p in changed if state.get(p) != expected.get(p)]
    problems = [f"not as required: {', '.join(wrong[:5])}" + (f" and {len(wrong) - 5} more" if len(wrong) > 5 else "")] \
        if wrong else []
    return (len(changed) - len(wrong)) / len(changed) if changed else 1.0, problems
