"""Finding the Debian package of a shared library by its file name (``images/libraries.py``)."""

from __future__ import annotations

import io
import re

from dlbench.images.libraries import LIBRARY_DIR, READY, debian_packages, lookup_script, packages_found

APT_FILE = f"""\
{READY}
found libGLU.so.1 libglu1-mesa: /usr/lib/x86_64-linux-gnu/libGLU.so.1
found libgomp.so.1 libgomp1: /usr/lib/x86_64-linux-gnu/libgomp.so.1
found libgomp.so.1 lib32gomp1: /usr/lib/x86_64-linux-gnu/libgomp.so.1
E: an apt-file warning
"""


def test_the_first_package_holding_the_file_is_taken() -> None:
    assert packages_found(APT_FILE) == {"libGLU.so.1": "libglu1-mesa", "libgomp.so.1": "libgomp1"}


def test_only_the_loaders_folders_count_and_names_are_matched_literally() -> None:
    script = lookup_script(["libstdc++.so.6", "libgomp.so.1"])
    assert script.index("libgomp") < script.index("libstdc")  # sorted: one search each
    pattern = LIBRARY_DIR + re.escape("libstdc++.so.6") + "$"
    assert re.search(pattern, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6")
    assert re.search(pattern, "/lib/libstdc++.so.6")
    assert not re.search(pattern, "/usr/lib32/libstdc++.so.6")  # a multilib copy the loader never takes
    assert not re.search(pattern, "/usr/lib/debug/libstdcXX.so.6")


def test_a_library_no_package_has_is_said_and_nothing_is_run_for_none() -> None:
    out, scripts = io.StringIO(), []
    found = debian_packages(lambda s: scripts.append(s) or APT_FILE, {"libgomp.so.1": "x", "libcuda.so.1": "y"}, out)
    assert found == {"libgomp.so.1": "libgomp1"} and len(scripts) == 1
    assert "no Debian package of this system has libcuda.so.1" in out.getvalue()
    assert debian_packages(lambda s: scripts.append(s) or "", {}, out) == {} and len(scripts) == 1


def test_an_index_that_could_not_be_read_is_not_taken_for_no_package() -> None:
    out = io.StringIO()
    assert debian_packages(lambda s: "E: Failed to fetch http://deb.debian.org/...", {"libgomp.so.1": "x"}, out) == {}
    assert "could not be read" in out.getvalue() and "no Debian package" not in out.getvalue()
