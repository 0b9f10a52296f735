"""Bug synthesis: mutation operators, pinned sdist sources, and the keep/discard rule on a real package."""

from __future__ import annotations

import io
import json
import os
import tarfile

import pytest

from agentenv import CodingEnv, load_task, make_agent, parse_task, run_episode
from agentenv._sources import Sdist, SourceError, _fetch_into, sha256_file, unpack
from agentenv import SynthesisError
from agentenv.builtin.authoring.synthesis import (MutantRunner, classify, find_modules, find_tests, mutants, schedule,
                                 synthesize)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "tasks", "synth_inflection")

SOURCE = '''"""A module."""
LIMIT = 10  # module level: never mutated


def clamp(value: int, low: int = 0) -> int:
    """Docstring 1 stays."""
    if value < low:  # keep this comment
        return low
    return min(value, LIMIT)


def label(items):
    if not items:
        raise ValueError("empty")
    return "many" if len(items) > 2 else "few"
'''


def _by_operator(found):
    out = {}
    for mutation, code in found:
        out.setdefault(mutation.operator, []).append((mutation, code))
    return out


def test_every_operator_edits_only_its_site_and_keeps_the_rest_of_the_file():
    found = _by_operator(mutants(SOURCE, "pkg/mod.py"))
    assert set(found) == {"flip_comparison", "drop_return", "change_constant", "swap_arguments", "remove_branch"}
    flips = {m.function: code for m, code in found["flip_comparison"]}
    assert "    if value <= low:  # keep this comment\n" in flips["clamp"]
    assert flips["clamp"].replace("value <= low", "value < low") == SOURCE
    swap = found["swap_arguments"][0][1]
    assert "return min(LIMIT, value)" in swap
    drops = [code for m, code in found["drop_return"] if m.original == "return low"]
    assert drops and "        pass  # keep this comment" not in drops[0] and "        pass\n" in drops[0]
    branch = [code for m, code in found["remove_branch"] if m.function == "label"][0]
    assert "raise ValueError" not in branch and branch.count("\n") == SOURCE.count("\n") - 2
    constants = [m for m, _ in found["change_constant"]]
    assert [(m.function, m.original, m.replacement) for m in constants] == [("label", "2", "3")]
    # module-level code, defaults in signatures, docstrings and annotations are not mutated
    assert all(m.function in ("clamp", "label") for m, _ in mutants(SOURCE, "pkg/mod.py"))
    assert all("LIMIT = 10" in code and "Docstring 1 stays" in code for _, code in mutants(SOURCE, "pkg/mod.py"))
    assert all(m.line > 5 for m, _ in mutants(SOURCE, "pkg/mod.py"))


def test_mutation_record_says_what_changed_where():
    mutation, code = next((m, c) for m, c in mutants(SOURCE, "pkg/mod.py") if m.operator == "flip_comparison")
    assert (mutation.file, mutation.function, mutation.line) == ("pkg/mod.py", "clamp", 7)
    assert (mutation.original, mutation.replacement) == ("<", "<=")
    assert "flipped" in mutation.description


def test_schedule_is_seeded_and_alternates_operators():
    found = mutants(SOURCE, "m.py")
    assert schedule(found, 1) == schedule(found, 1)
    first = [m.operator for m, _ in schedule(found, 1)[:5]]
    assert len(set(first)) == 5


def test_tests_and_modules_are_found_in_common_layouts():
    flat = {"pkg/__init__.py": b"", "pkg/core.py": b"", "test_pkg.py": b"", "setup.py": b"", "docs/conf.py": b""}
    assert find_tests(flat) == ["test_pkg.py"] and find_modules(flat) == ["pkg/__init__.py", "pkg/core.py"]
    nested = {"src/pkg/a.py": b"", "tests/test_a.py": b"", "tests/conftest.py": b""}
    assert find_tests(nested) == ["tests"] and find_modules(nested) == ["src/pkg/a.py"]


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tf:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            if kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tf.addfile(info)
            else:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))


def test_unpack_refuses_escaping_members_and_skips_links(tmp_path):
    good = tmp_path / "good.tar.gz"
    _tar(good, [("p-1/a.py", b"x = 1\n", "file"), ("p-1/evil", b"", "link")])
    assert unpack(str(good), str(tmp_path / "out")) == 1
    assert (tmp_path / "out" / "p-1" / "a.py").read_text() == "x = 1\n"
    assert not os.path.lexists(tmp_path / "out" / "p-1" / "evil")
    for name in ("../escape.py", "/abs.py", "p-1/../../escape.py"):
        bad = tmp_path / "bad.tar.gz"
        _tar(bad, [(name, b"boom", "file")])
        with pytest.raises(SourceError, match="outside the archive root"):
            unpack(str(bad), str(tmp_path / "out2"))
        assert not (tmp_path / "escape.py").exists()


def test_a_hash_mismatch_is_refused_with_both_digests(tmp_path):
    archive = tmp_path / "p-1.tar.gz"
    _tar(archive, [("p-1/a.py", b"x = 1\n", "file")])
    pinned = Sdist("p", "1", "0" * 64)
    (tmp_path / "cache").mkdir()
    with pytest.raises(SourceError) as info:
        _fetch_into(pinned, str(tmp_path / "cache" / "p-1"), "tasks/x.json", archive=str(archive))
    message = str(info.value)
    assert "tasks/x.json: /workspace/sdist/sha256" in message and sha256_file(str(archive)) in message
    assert not (tmp_path / "cache" / "p-1").exists()


def test_the_schema_accepts_an_sdist_workspace_and_names_bad_pins():
    doc = json.load(open(sorted(os.path.join(SUITE, "tasks", n) for n in os.listdir(os.path.join(SUITE, "tasks")))[0]))
    spec = parse_task(doc, base_dir=SUITE)
    assert spec.workspace.sdist.package == "inflection" and spec.to_json()["workspace"]["sdist"] == doc["workspace"]["sdist"]
    doc["workspace"]["sdist"]["sha256"] = "nothex"
    with pytest.raises(Exception, match="/workspace/sdist/sha256"):
        parse_task(doc)


def test_bad_requirements_are_refused_before_any_work(tmp_path):
    with pytest.raises(SynthesisError, match="NAME==VERSION"):
        synthesize("inflection", str(tmp_path))


# ---------------------------------------------------------------- the real package, in real sandboxes

def _bundled_sdist() -> tuple[Sdist, str]:
    task = load_task(os.path.join(SUITE, "tasks", sorted(os.listdir(os.path.join(SUITE, "tasks")))[0]))
    return task.workspace.sdist, task.single_shot_path


def test_keep_only_mutants_that_fail_a_passing_test_without_breaking_collection():
    sdist, module = _bundled_sdist()
    original = load_task(os.path.join(SUITE, "tasks", sorted(os.listdir(os.path.join(SUITE, "tasks")))[0])) \
        .reference_files()[module]
    with MutantRunner(sdist, ["test_inflection.py"]) as runner:
        baseline = runner.baseline(module, original, "inflection")
        assert len(baseline) > 400 and set(baseline.values()) == {"passed"}
        crash = runner.run(module, "raise RuntimeError('import-time crash')\n" + original)
        assert classify(crash, baseline)[0] == "breaks collection or hangs"
        equivalent = runner.run(module, original + "\n# a comment changes nothing\n")
        assert classify(equivalent, baseline) == ("no test notices it", [])
        mutation, code = next((m, c) for m, c in mutants(original, module) if m.function == "ordinal"
                              and m.operator == "flip_comparison")
        why, failing = classify(runner.run(module, code), baseline)
        assert why is None and failing and all(n.startswith("test_inflection.py::test_ordinal") for n in failing)


@pytest.mark.slow
def test_synthesize_writes_valid_tasks_that_the_reference_solves(tmp_path, capsys):
    from agentenv._cli import main

    out = tmp_path / "synth_small"
    assert main(["synthesize", "inflection==0.5.1", "--out", str(out), "--max-tasks", "2", "--seed", "3"]) == 0
    assert "2 task(s) written" in capsys.readouterr().out
    files = sorted((out / "tasks").iterdir())
    assert len(files) == 2
    for path in files:
        task = load_task(str(path))
        mutation = task.metadata["mutation"]
        assert task.workspace.files[mutation["file"]] != task.reference_files()[mutation["file"]]
        assert task.metadata["failing_count"] >= 1 and task.metadata["package"]["version"] == "0.5.1"
    task = load_task(str(files[0]))
    env = CodingEnv(task, mode="single_shot")
    try:
        assert run_episode(env, make_agent("reference", task, "single_shot")).score == 1.0
        assert run_episode(env, make_agent("noop", task, "single_shot")).score == 0.0
    finally:
        env.close()
