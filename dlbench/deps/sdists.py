"""Requirements the index offers only as a source distribution, tried here before they are
dropped.

What the tests merely import, or a CI file installs, is taken as a wheel only when the
resolver first asks. But many sdist-only test requirements can be had after all: each is
built once on the host (uv, into the shared download cache, so the image's install reuses a
pure wheel). One whose wheel is tagged ``none-any`` and purelib installs in any image and is
kept. One that compiles native code (``pesq``, an audio project's test metric) is kept too
where ``images.native_sdists`` allows: the image then gets a compiler and Python's headers
and builds it for its own Python, and if that build fails there, the image build drops it
and only its tests lose it (``images/build._lock_and_build``). One that does not build here
stays dropped with that cause.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

NO_WHEELS = re.compile(r"no usable wheels|no wheels (?:with|are available)|no matching distribution", re.IGNORECASE)
BUILD_TIMEOUT_S = 300


def wanted_only_as_wheel(cause: str) -> bool:
    """True when the resolver refused a requirement only because it has no wheel for us."""
    return NO_WHEELS.search(cause) is not None


@dataclass(frozen=True)
class SdistBuild:
    """What building a release's sdist on the host showed."""

    built: bool
    pure: bool  # its wheel installs in any image (``wheel_is_pure``)
    why: str


def build_sdist(pin: str, uv: str, env: dict[str, str], cache_dir: Path | None) -> SdistBuild:
    """``pin`` (``name==version``) built from its sdist with the host's interpreter, without
    its dependencies."""
    name = pin.split("==")[0]
    with tempfile.TemporaryDirectory(prefix="dlbench-sdist-") as target:
        command = [uv, "pip", "install", "--quiet", "--python", sys.executable, "--target", target,
                   "--no-deps", "--no-binary", name, pin]  # fmt: skip
        if cache_dir:
            command += ["--cache-dir", str(cache_dir)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env)
        except subprocess.TimeoutExpired:
            return SdistBuild(False, False, f"its sdist did not build in {BUILD_TIMEOUT_S} s")
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            return SdistBuild(False, False, f"its sdist does not build: {last[:300]}")
        pure, why = wheel_is_pure(Path(target))
        return SdistBuild(pure is not None, bool(pure), why)


def wheel_is_pure(installed: Path) -> tuple[bool | None, str]:
    """(pure, why) from the WHEEL metadata of the one distribution installed under
    ``installed``; pure is None when there is none (nothing was built)."""
    wheels = list(installed.glob("*.dist-info/WHEEL"))
    if not wheels:
        return None, "its build left no wheel metadata"
    lines = wheels[0].read_text(encoding="utf-8", errors="replace").splitlines()
    tags = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]
    purelib = any(line.replace(" ", "").lower() == "root-is-purelib:true" for line in lines)
    if purelib and tags and all(tag.endswith("-none-any") for tag in tags):
        return True, "pure Python: built from its sdist"
    return False, f"its sdist builds native code ({', '.join(tags) or 'no tag'}): it needs a compiler in the image"
