"""pypto's build backend: scikit-build-core, keeping the build directory between builds.

pip builds in an isolated environment whose path is new each time; scikit-build-core then
finds the build directory's recorded environment path changed and clears the CMake cache and
all object files (CMakeFiles/), so `pip install .` after `pip install .` compiled the whole
C++ core again. Nothing pypto compiles depends on that path: the compiler flags do not
mention it and CMakeLists.txt copies nanobind (which does live in the isolated environment)
to a fixed place in the build directory. So before each build this backend records the
current environment in the build directory's `.skbuild-info.json`; CMake then reconfigures in
place and ninja rebuilds only what changed (nothing, for a second install of the same tree).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import scikit_build_core
from scikit_build_core.build import *  # the PEP 517/660 hooks
from scikit_build_core.build import build_editable as _build_editable
from scikit_build_core.build import build_wheel as _build_wheel

_BUILD_ROOT = Path("build")  # pyproject.toml: build-dir = "build/{wheel_tag}"


def _adopt_build_dirs() -> None:
    here = os.fspath(Path(scikit_build_core.__file__).parent.resolve())
    source = os.fspath(Path.cwd().resolve())
    for info_file in _BUILD_ROOT.glob("*/.skbuild-info.json"):
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # unreadable: scikit-build-core starts that directory afresh
        if isinstance(info, dict) and info.get("source_dir") == source and info.get("skbuild_path") != here:
            info["skbuild_path"] = here
            info_file.write_text(json.dumps(info, indent=2), encoding="utf-8")


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _adopt_build_dirs()
    return _build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _adopt_build_dirs()
    return _build_editable(wheel_directory, config_settings, metadata_directory)
