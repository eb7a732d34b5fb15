"""Which Debian package holds a shared library the image's system lacks.

A wheel may link a system library it does not bundle: LightGBM's wheels need GCC's OpenMP
runtime (``libgomp.so.1``), which a minimal Debian does not have, and every test importing
the library then fails with the loader's ``cannot open shared object file``. No Python
requirement fixes that, and package names do not follow file names closely enough to guess
(``libGLU.so.1`` is in ``libglu1-mesa``, ``libgthread-2.0.so.0`` in ``libglib2.0-0``). The
image's own package index answers: ``apt-file`` searches the contents of every package its
sources offer, in a throwaway step on the built image (network on, as a build step), so the
answer is the base system's own, Debian or Ubuntu. The package found is installed with the
project layer, a repair recorded like the others (``images/build.py``).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from typing import IO

from dlbench.images.layers import APT_GET

# The loader looks in the system's library folders: a match elsewhere (a 32-bit multilib copy,
# a debug file, a plugin folder) is not what it would load.
LIBRARY_DIR = r"^/(usr/)?lib/([^/]+-linux-gnu/)?"
FOUND = re.compile(r"^found (?P<soname>\S+) (?P<package>[a-z0-9][a-z0-9+.-]*): /\S+$")
READY = "# the package contents index is read"  # without it, an empty answer says nothing


def lookup_script(sonames: Iterable[str]) -> str:
    """Shell printing ``found <soname> <package>: <path>`` for each package that has one of
    ``sonames`` in a library folder (``apt-file``, installed in the throwaway step)."""
    searches = "; ".join(
        f"apt-file search -x {shlex.quote(LIBRARY_DIR + re.escape(name) + '$')} | sed 's/^/found {name} /'"
        for name in sorted(set(sonames))
    )
    index = f"apt-get update -qq && {APT_GET} apt-file >/dev/null && apt-file update >/dev/null 2>&1"
    return f"{index} && echo {shlex.quote(READY)}; {searches}"


def packages_found(output: str) -> dict[str, str]:
    """Shared library file name → the package that has it (the first apt-file lists)."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        if match := FOUND.match(line.strip()):
            found.setdefault(match["soname"], match["package"])
    return found


def debian_packages(run_step, sonames: Mapping[str, str], out: IO[str]) -> dict[str, str]:
    """Shared library file name → its Debian package, for those of ``sonames`` the image's
    sources have; ``run_step(script)`` runs a throwaway build step on the image and returns
    its output."""
    if not sonames:
        return {}
    out.write(f"\n# looking up the Debian packages of {', '.join(sorted(sonames))}\n")
    output = run_step(lookup_script(sonames))
    if READY not in output:
        out.write("# the system's package contents could not be read (no index reached): nothing looked up\n")
        return {}
    found = {name: package for name, package in packages_found(output).items() if name in sonames}
    for name in sorted(set(sonames) - set(found)):
        out.write(f"# no Debian package of this system has {name}: its tests stay without it\n")
    return found
