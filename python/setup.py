"""Puts libember.so into the package: the file $EMBER_LIBRARY names, or one CMake builds
from this repository (the runtime and kernels only: no tools, tests or firmware)."""
import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


def library() -> Path:
    given = os.environ.get("EMBER_LIBRARY")
    if given:
        return Path(given).resolve()
    root = HERE.parent
    if not (root / "runtime" / "ember.h").exists():
        raise SystemExit("ember: set EMBER_LIBRARY to a libember.so (no ember sources at "
                         f"{root} to build one from)")
    build = Path(os.environ.get("EMBER_PYTHON_BUILD_DIR", root / "build-python"))
    configure = ["cmake", "-S", str(root), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                 "-DEMBER_BUILD_TOOLS=OFF", "-DEMBER_BUILD_TESTS=OFF"]
    if shutil.which("ninja"):
        configure += ["-G", "Ninja"]
    subprocess.run(configure, check=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "ember_shared", "-j",
                    str(os.cpu_count() or 1)], check=True)
    return build / "runtime" / "libember.so"


def version() -> str:
    """ember.h's EMBER_VERSION_*, or the version of the library $EMBER_LIBRARY names."""
    header = HERE.parent / "runtime" / "ember.h"
    if header.exists():
        text = header.read_text()
        parts = [re.search(rf"#define EMBER_VERSION_{p} (\d+)", text).group(1)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        return ".".join(parts)
    lib = ctypes.CDLL(os.environ["EMBER_LIBRARY"])
    lib.ember_version.restype = ctypes.c_char_p
    return lib.ember_version().decode()


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        source = library()
        target = Path(self.build_lib) / "ember" / "_lib"
        target.mkdir(parents=True, exist_ok=True)
        # The real file under the soname's name: a wheel keeps no symbolic links.
        shutil.copyfile(source.resolve(), target / "libember.so")


setup(version=version(), cmdclass={"build_py": BuildWithLibrary})
