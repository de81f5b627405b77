"""The assistant skills (skills/*/SKILL.md): front matter, and every command they tell an
assistant to run. `bash` blocks run in a scratch directory that links the checkout's examples,
benchmarks and tests and copies its docs and tools (so nothing is written into the checkout);
`python` blocks whose first line is `# save as: NAME` are written there first. A command
marked `# slow:` is not run: what it names must exist (a CI script, the CMake option) or be the
README's own command."""

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import pypto

ROOT = pathlib.Path(__file__).resolve().parents[2]
SKILLS = sorted((ROOT / "skills").glob("*/SKILL.md"))
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
NESTED = os.environ.get("PYPTO_SKILL_TEST") == "1"  # a skill command that runs pytest runs this file again


def front_matter(text):
    assert text.startswith("---\n"), "SKILL.md starts with front matter"
    head = text[4:text.index("\n---\n", 4)]
    return dict(line.split(": ", 1) for line in head.splitlines() if ": " in line)


def blocks(path):
    return [(lang, body) for lang, body in BLOCK.findall(path.read_text())]


def commands(body):
    """The command lines of a bash block (a trailing `# comment` kept for the slow mark)."""
    return [line for line in body.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_both_skills_exist_with_name_and_description():
    names = {}
    for path in SKILLS:
        meta = front_matter(path.read_text())
        assert meta.get("name") == path.parent.name, f"{path}: front matter name must be the folder name"
        assert len(meta.get("description", "")) > 80, f"{path}: a description that says when to use the skill"
        names[meta["name"]] = path
    assert {"pypto-user", "pypto-developer"} <= set(names)


def check_slow(line):
    cmd = line.split("# slow:")[0].strip()
    readme = (ROOT / "README.md").read_text()
    if cmd.startswith("."):
        script = ROOT / cmd.split()[0]
        assert script.exists() and os.access(script, os.X_OK), f"{cmd}: no executable {script}"
    elif cmd.startswith("cmake"):
        assert "PYPTO_INPLACE" in (ROOT / "CMakeLists.txt").read_text() and "-S . -B build/dev" in cmd
    elif cmd.startswith("ninja"):
        assert "pypto_layer_check" in (ROOT / "CMakeLists.txt").read_text()
    elif "pytest" in cmd:
        assert cmd in readme, f"{cmd!r} is not the README's test command"
    else:
        pytest.fail(f"a slow command this test does not know how to check: {cmd}")


def scratch(tmp_path):
    for name in ("examples", "benchmarks", "tests", "skills"):
        (tmp_path / name).symlink_to(ROOT / name)
    for name in ("docs", "tools"):
        shutil.copytree(ROOT / name, tmp_path / name)
    env = dict(os.environ, PYPTO_SKILL_TEST="1")
    env["PYTHONPATH"] = os.pathsep.join([str(pathlib.Path(pypto.__file__).resolve().parents[1]), env.get("PYTHONPATH", "")])
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "pypto").write_text(f"#!/bin/sh\nexec {sys.executable} -m pypto.tools.cli \"$@\"\n")
    (shim / "pypto").chmod(0o755)
    (shim / "python").symlink_to(sys.executable)
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    return env


@pytest.mark.skipif(NESTED, reason="run by a skill command of this test itself")
@pytest.mark.parametrize("skill", [p.parent.name for p in SKILLS])
def test_every_command_of_the_skill_runs(skill, tmp_path):
    path = ROOT / "skills" / skill / "SKILL.md"
    env = scratch(tmp_path)
    ran = 0
    for lang, body in blocks(path):
        first = body.splitlines()[0] if body else ""
        if lang == "python" and first.startswith("# save as: "):
            (tmp_path / first[len("# save as: "):].strip()).write_text(body)
        if lang != "bash":
            continue
        for line in commands(body):
            if "# slow:" in line:
                check_slow(line)
                continue
            proc = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, f"{skill}: `{line}` failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
            if "prints OK" in line:
                assert "OK" in proc.stdout, f"{skill}: `{line}` did not print OK"
            ran += 1
    assert ran >= 3, f"{skill}: the skill should tell the assistant what to run"
    assert not (ROOT / "out").exists()
