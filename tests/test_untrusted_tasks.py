"""Task documents are untrusted input: no path, link or nesting in one reaches outside what it may touch.

A task file names paths (inline file keys, directories, protected globs, the workspace root); none of
them may land outside the task's folder or the workspace, neither when validated (``agentenv
validate``) nor when ``gym.make`` writes the workspace to the host. Links in a task's directories are
not followed out of the task folder, and a document nested absurdly deep, or with a number too long
to convert, is a TaskSpecError naming the file, not a traceback.
"""

import copy
import json
import os
import tempfile

import gymnasium as gym
import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentenv  # noqa: F401  (registers the gym ids)
from agentenv import TaskSpecError, load_task, parse_task
from agentenv._cli import main as cli_main
from agentenv import task_schema
from agentenv._spec import FileSet, Workspace
from agentenv import materialize
from _paths import REPO

pytestmark = pytest.mark.unit

BASE = {
    "task_id": "untrusted.paths",
    "environment_config": {"runtime": "python3"},
    "workspace": {"root": "/app", "files": {"main.py": "print('hi')\n"}},
    "execution_steps": [
        {"action": "overwrite_file", "path": "/app/main.py", "content": "<model_generated_code>"},
        {"action": "run_command", "command": "python main.py"}],
    "reward_logic": {"type": "composite", "rules": [{"metric": "command_succeeded", "weight": 1.0}]},
}
SECTIONS = ("workspace", "hidden_files", "reference_solution")


def pointer(*parts):
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def write_task(folder, doc, name="task.json"):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def with_files(section, files):
    doc = copy.deepcopy(BASE)
    doc.setdefault(section, {}).setdefault("files", {}).update(files)
    return doc


def violations(err):
    return {v.pointer: v for v in err.value.violations}


def escape_to(target):
    """A relative key that, joined below any directory less than 40 deep, names *target*."""
    return "../" * 40 + str(target).lstrip("/")


# --------------------------------------------------------------------------- (1) paths in the document

BAD_KEYS = ["../../../../tmp/x", "/etc/x", "a/../../b", "..", "a\0b", "a//b", "dir/", "", "./main.py"]


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("key", BAD_KEYS)
def test_file_keys_that_leave_the_folder_are_refused_with_file_pointer_and_fix(tmp_path, section, key):
    path = write_task(str(tmp_path / "task"), with_files(section, {key: "pwned\n"}))
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert err.value.path == path and str(err.value).startswith(path + ": ")
    found = violations(err)
    where = pointer(section, "files", key)
    assert where in found, (where, list(found))
    text = str(found[where])
    assert "relative" in text  # the fix: a path relative to the workspace root
    assert where in str(err.value)


def test_the_example_pointer_uses_the_json_pointer_escapes(tmp_path):
    path = write_task(str(tmp_path), with_files("workspace", {"../../../../tmp/x": "x"}))
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    v = violations(err)["/workspace/files/..~1..~1..~1..~1tmp~1x"]
    assert "'tmp/x'" in v.message or "'tmp/x'" in v.expected  # the suggested fix names the safe path


def test_gym_make_refuses_an_escaping_key_and_writes_nothing_on_the_host(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTENV_CACHE", str(tmp_path / "cache"))
    target = tmp_path / "host" / "pwned.txt"
    path = write_task(str(tmp_path / "task"), with_files("workspace", {escape_to(target): "owned\n"}))
    with pytest.raises(TaskSpecError) as err:
        gym.make("agentenv/Task-v0", task=path, mode="agentic")
    assert err.value.path == path
    assert not target.exists() and not target.parent.exists()


def test_in_memory_file_sets_and_materialize_refuse_escaping_keys_too(tmp_path):
    target = tmp_path / "host" / "pwned.txt"
    key = escape_to(target)
    with pytest.raises(TaskSpecError) as err:
        Workspace(None, {key: "x"}, str(tmp_path)).read()
    assert pointer("workspace", "files", key) in str(err.value)
    with pytest.raises(TaskSpecError):
        FileSet(None, {"/etc/x": "x"}, str(tmp_path)).read()
    with pytest.raises(ValueError, match="outside"):
        materialize({key: b"x"}, str(tmp_path / "cache"))
    assert not target.exists() and not target.parent.exists()


def test_validate_cli_reports_the_escaping_key(tmp_path, capsys):
    path = write_task(str(tmp_path), with_files("hidden_files", {"/etc/cron.d/x": "* * * * * root id\n"}))
    assert cli_main(["validate", path]) == 1
    err = capsys.readouterr().err
    assert path in err and "/hidden_files/files/~1etc~1cron.d~1x" in err


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("directory", ["../outside", "/etc", "a/../../outside"])
def test_directories_must_stay_inside_the_task_folder(tmp_path, section, directory):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("TOPSECRET")
    (tmp_path / "task" / "a").mkdir(parents=True)  # so that a/../.. resolves (to the outside directory)
    doc = copy.deepcopy(BASE)
    doc.setdefault(section, {})["directory"] = directory
    path = write_task(str(tmp_path / "task"), doc)
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert err.value.path == path
    v = violations(err)[f"/{section}/directory"]
    assert "task folder" in str(v) or "relative" in str(v)


@pytest.mark.parametrize("glob", ["/etc/**", "../**", "tests/../../x", "a\0b"])
def test_protected_globs_are_relative_without_parent_components(tmp_path, glob):
    doc = copy.deepcopy(BASE)
    doc["protected_paths"] = ["tests/**", glob]
    path = write_task(str(tmp_path), doc)
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert "/protected_paths/1" in violations(err)


@pytest.mark.parametrize("root", ["/app/../../etc", "/../x", "/a//b", "/a/./b", "/"])
def test_the_workspace_root_has_no_parent_or_empty_components(tmp_path, root):
    doc = copy.deepcopy(BASE)
    doc["workspace"]["root"] = root
    path = write_task(str(tmp_path), doc)
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert "/workspace/root" in violations(err)


@pytest.mark.parametrize("field,value", [("version", "0.5.1/../../../../../tmp/x"), ("strip", "../../../../etc")])
def test_sdist_pins_name_no_paths(tmp_path, field, value):
    doc = copy.deepcopy(BASE)
    doc["workspace"]["sdist"] = {"package": "inflection", "version": "0.5.1", "sha256": "0" * 64, field: value}
    path = write_task(str(tmp_path), doc)
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert f"/workspace/sdist/{field}" in violations(err)


def test_the_schema_alone_refuses_them_too(tmp_path):
    """Plain jsonschema with the assembled schema and with the checked-in file, no agentenv code."""
    docs = [with_files("workspace", {"../../../../tmp/x": "x"}), with_files("reference_solution", {"/etc/x": "x"})]
    bad_dir = copy.deepcopy(BASE)
    bad_dir["hidden_files"] = {"directory": "../../elsewhere"}
    bad_glob = copy.deepcopy(BASE)
    bad_glob["protected_paths"] = ["/etc/**"]
    docs += [bad_dir, bad_glob]
    checked_in = json.load(open(os.path.join(REPO, "schemas", "task.schema.json")))
    for schema in (task_schema(), checked_in):
        validator = jsonschema.Draft202012Validator(schema)
        assert not list(validator.iter_errors(BASE))
        for doc in docs:
            assert list(validator.iter_errors(doc)), doc


# --------------------------------------------------------------------------- (2) links in task folders

def linked_task(tmp_path, section="workspace"):
    """A task folder with a real directory for *section*, and a host file and directory outside it."""
    host = tmp_path / "host"
    host.mkdir()
    (host / "secret.txt").write_text("TOPSECRET")
    (host / "dir").mkdir()
    (host / "dir" / "inner.txt").write_text("TOPSECRET")
    task = tmp_path / "task"
    (task / "files").mkdir(parents=True)
    (task / "files" / "main.py").write_text("print('hi')\n")
    doc = copy.deepcopy(BASE)
    doc.setdefault(section, {})["directory"] = "files"
    return task, host, write_task(str(task), doc)


OUTSIDE_LINKS = {
    "absolute": lambda host: str(host / "secret.txt"),
    "relative": lambda host: "../../host/secret.txt",
    "directory": lambda host: str(host / "dir"),
    "relative_directory": lambda host: "../../host/dir",
}


@pytest.mark.parametrize("section", SECTIONS)
@pytest.mark.parametrize("kind", sorted(OUTSIDE_LINKS))
def test_links_out_of_the_task_folder_are_refused_naming_the_link(tmp_path, section, kind):
    task, host, path = linked_task(tmp_path, section)
    os.symlink(OUTSIDE_LINKS[kind](host), task / "files" / "leak")
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert err.value.path == path
    v = violations(err)[f"/{section}/directory"]
    assert "files/leak" in str(v) and "link" in str(v)


def test_a_link_added_after_validation_is_refused_when_read(tmp_path):
    task, host, path = linked_task(tmp_path)
    spec = load_task(path)
    os.symlink(host / "secret.txt", task / "files" / "leak.py")
    with pytest.raises(TaskSpecError) as err:
        spec.workspace.read()
    assert err.value.path == path and "files/leak.py" in str(err.value)
    os.remove(task / "files" / "leak.py")
    os.symlink(host / "dir", task / "files" / "pkg")
    with pytest.raises(TaskSpecError, match="files/pkg"):
        spec.workspace.read()


def test_a_linked_workspace_directory_is_refused(tmp_path):
    task, host, path = linked_task(tmp_path)
    os.symlink(host / "dir", task / "linked")
    doc = json.load(open(path))
    doc["workspace"]["directory"] = "linked"
    write_task(str(task), doc)
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert "/workspace/directory" in violations(err) and "linked" in str(err.value)


def test_gym_make_with_a_leaking_link_puts_nothing_of_the_host_in_the_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTENV_CACHE", str(tmp_path / "cache"))
    task, host, path = linked_task(tmp_path)
    os.symlink(host / "secret.txt", task / "files" / "leak.txt")
    with pytest.raises(TaskSpecError, match="leak.txt"):
        gym.make("agentenv/Task-v0", task=path, mode="agentic")
    for root, _, names in os.walk(tmp_path / "cache"):
        for name in names:
            with open(os.path.join(root, name), "rb") as f:
                assert b"TOPSECRET" not in f.read()


def test_a_link_inside_the_task_folder_is_read_as_its_target(tmp_path):
    task, host, path = linked_task(tmp_path)
    (task / "shared").mkdir()
    (task / "shared" / "util.py").write_text("X = 1\n")
    os.symlink("../shared/util.py", task / "files" / "util.py")
    assert load_task(path).workspace.read()["util.py"] == b"X = 1\n"
    # ... but a FIFO or device is no file: refused (and never opened, so nothing blocks)
    os.mkfifo(task / "files" / "pipe")
    with pytest.raises(TaskSpecError, match="files/pipe"):
        load_task(path)


# --------------------------------------------------------------------------- (3) nesting and size

def test_a_document_nested_200000_deep_is_a_taskspecerror_naming_the_file(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"a":' * 200000 + "1" + "}" * 200000)
    with pytest.raises(TaskSpecError) as err:
        load_task(path)
    assert err.value.path == str(path) and "deep" in str(err.value)
    arrays = tmp_path / "arrays.json"
    arrays.write_text("[" * 200000 + "]" * 200000)
    with pytest.raises(TaskSpecError, match="deep"):
        load_task(arrays)


def test_a_deep_document_in_memory_is_refused_before_it_can_crash_later(tmp_path):
    deep: dict = {}
    cur = deep
    for _ in range(100000):
        cur["a"] = {}
        cur = cur["a"]
    doc = copy.deepcopy(BASE)
    doc["metadata"] = deep  # schema-valid ("metadata": any object), so it would load and crash in to_json
    with pytest.raises(TaskSpecError) as err:
        parse_task(doc, "deep.json")
    assert err.value.path == "deep.json" and any(v.pointer.startswith("/metadata") for v in err.value.violations)


def test_huge_flat_documents_do_not_crash(tmp_path, monkeypatch):
    doc = copy.deepcopy(BASE)
    doc["tags"] = [f"t{i}" for i in range(200000)]
    doc["metadata"] = {f"k{i}": i for i in range(200000)}
    path = write_task(str(tmp_path), doc)
    spec = load_task(path)
    assert len(spec.tags) == 200000 and len(spec.metadata) == 200000
    # a number too long for int(): Python's json raises a bare ValueError for it
    big = tmp_path / "big.json"
    big.write_text(json.dumps(BASE)[:-1] + ', "max_rounds": 1' + "0" * 100000 + "}")
    with pytest.raises(TaskSpecError) as err:
        load_task(big)
    assert err.value.path == str(big)
    # and a file past the size limit is refused before it is read into memory
    import agentenv._schema as spec_module

    monkeypatch.setattr(spec_module, "MAX_TASK_BYTES", 1000)
    with pytest.raises(TaskSpecError, match="larger than"):
        load_task(path)


# --------------------------------------------------------------------------- random paths

components = st.one_of(
    st.sampled_from(["", ".", "..", "...", "a", "main.py", "tmp", "etc", "\0", " ", "\n", "a\\b", "~", "~1", "é"]),
    st.text(min_size=1, max_size=8),
    st.integers(250, 300).map(lambda n: "x" * n),
)
paths = st.one_of(st.lists(components, min_size=1, max_size=6).map("/".join), st.text(max_size=30))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(paths)
def test_random_file_keys_load_strictly_inside_the_workspace_or_raise_taskspecerror(key):
    with tempfile.TemporaryDirectory() as tmp:
        task_dir = os.path.join(tmp, "a", "b", "c", "task")
        os.makedirs(task_dir)
        doc = copy.deepcopy(BASE)
        doc["workspace"]["files"] = {key: "x"}
        try:
            spec = parse_task(doc, os.path.join(task_dir, "task.json"), task_dir)
            files = spec.workspace.read()
        except TaskSpecError:
            assert sorted(os.listdir(tmp)) == ["a"]
            return
        ws = materialize(files, os.path.join(tmp, "a", "b", "cache"))
        for rel in files:
            full = os.path.normpath(os.path.join(ws, rel))
            assert full.startswith(ws + os.sep) and os.path.isfile(full), rel
        written = {os.path.relpath(os.path.join(r, n), ws) for r, _, ns in os.walk(ws) for n in ns}
        assert written == {os.path.normpath(rel) for rel in files}
        assert sorted(os.listdir(tmp)) == ["a"] and sorted(os.listdir(os.path.join(tmp, "a"))) == ["b"]
        assert sorted(os.listdir(os.path.join(tmp, "a", "b"))) == ["c", "cache"]
