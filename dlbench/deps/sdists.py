"""Requirements the index offers only as a source distribution, tried here before they are
dropped.

What the tests merely import, or a CI file installs, is taken as a wheel only when the
resolver first asks. But many sdist-only test requirements can be had after all: each is
built once on the host (``uv build`` on the index's sdist). One whose wheel is tagged
``none-any`` and purelib goes into the wheelhouse, a folder of the shared download cache:
every later resolution whose date the release's allows, and every image whose lock pins it,
takes that wheel and builds nothing (an sdist built again in each image with the build tools
of the image's date can fail where it built here, and uv's own cache of built wheels is not
reused where a proxy answers every revalidation as modified). One that compiles native code
(``pesq``, an audio project's test metric) gives way to the name's wheels where only a
version bound keeps it from them (``resolve.unavailable``), and is kept otherwise where
``images.native_sdists`` allows: the image then gets a compiler and Python's headers and
builds it for its own Python, and if that build fails there, the image build drops it and
only its tests lose it (``images/build._lock_and_build``). One that does not build here stays dropped with that cause.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import requests
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import Version

from dlbench.deps.releases import SourceFile

NO_WHEELS = re.compile(r"no usable wheels|no wheels (?:with|are available)|no matching distribution", re.IGNORECASE)
BUILD_TIMEOUT_S = 300
DOWNLOAD_TIMEOUT_S = 120
WHEELHOUSE = "dlbench-wheelhouse"  # in the download cache
RELEASED = ".released"  # beside each wheel: when its release was complete on the index


def wanted_only_as_wheel(cause: str) -> bool:
    """True when the resolver refused a requirement only because it has no wheel for us."""
    return NO_WHEELS.search(cause) is not None


@dataclass(frozen=True)
class SdistBuild:
    """What building a release's sdist on the host showed."""

    built: bool
    pure: bool  # its wheel installs in any image (``wheel_is_pure``): it is in the wheelhouse
    why: str


def build_sdist(source: SourceFile, uv: str, env: dict[str, str], cache_dir: Path, released: datetime, ca_bundle: Path | None) -> SdistBuild:  # fmt: skip
    """A wheel built from the sdist ``source`` with the host's interpreter; a pure one is put
    in ``cache_dir``'s wheelhouse, dated ``released`` (when its release was complete)."""
    with tempfile.TemporaryDirectory(prefix="dlbench-sdist-") as tmp:
        archive = Path(tmp) / source.url.rsplit("/", 1)[-1]
        try:
            _download(source, archive, ca_bundle)
        except (requests.RequestException, ValueError) as exc:
            return SdistBuild(False, False, f"its sdist could not be fetched: {exc}")
        command = [uv, "build", "--wheel", "--no-config", "--quiet", "--python", sys.executable,
                   "--out-dir", str(Path(tmp) / "out"), "--cache-dir", str(cache_dir), str(archive)]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            return SdistBuild(False, False, f"its sdist did not build in {BUILD_TIMEOUT_S} s")
        wheels = sorted((Path(tmp) / "out").glob("*.whl"))
        if done.returncode != 0 or not wheels:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            return SdistBuild(False, False, f"its sdist does not build: {last[:300]}")
        pure, why = wheel_is_pure(wheels[0])
        if pure:
            house(wheels[0], cache_dir, released)
        return SdistBuild(True, pure, why)


def _download(source: SourceFile, dest: Path, ca_bundle: Path | None) -> None:
    answer = requests.get(source.url, timeout=DOWNLOAD_TIMEOUT_S, verify=str(ca_bundle) if ca_bundle else True)
    answer.raise_for_status()
    if source.sha256 and hashlib.sha256(answer.content).hexdigest() != source.sha256:
        raise ValueError(f"{source.url}: its SHA-256 is not the index's")
    dest.write_bytes(answer.content)


def wheel_is_pure(wheel: Path) -> tuple[bool, str]:
    """(pure, why) from the wheel's WHEEL metadata: tagged ``none-any`` and purelib."""
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/WHEEL")]
        lines = archive.read(names[0]).decode("utf-8", "replace").splitlines() if names else []
    tags = [line.split(":", 1)[1].strip() for line in lines if line.startswith("Tag:")]
    purelib = any(line.replace(" ", "").lower() == "root-is-purelib:true" for line in lines)
    if purelib and tags and all(tag.endswith("-none-any") for tag in tags):
        return True, "pure Python: built from its sdist"
    return False, f"its sdist builds native code ({', '.join(tags) or 'no tag'}): it needs a compiler in the image"


def wheelhouse(cache_dir: Path) -> Path:
    return cache_dir / WHEELHOUSE


def house(wheel: Path, cache_dir: Path, released: datetime) -> None:
    """``wheel`` into the wheelhouse, its date beside it; renamed into place, so a resolution
    running beside this one sees a whole file or none."""
    folder = wheelhouse(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    _replace(folder / f"{wheel.name}{RELEASED}", released.isoformat().encode())  # first: never seen undated
    _replace(folder / wheel.name, wheel.read_bytes())


def _replace(path: Path, data: bytes) -> None:
    staged = path.with_name(f".{path.name}.{os.getpid()}")
    staged.write_bytes(data)
    os.replace(staged, path)


def housed_as_of(cache_dir: Path | None, when: datetime | None) -> list[Path]:
    """The wheelhouse's wheels whose release was complete by ``when`` (all when None): a
    resolution as of a date sees no wheel built from a later release."""
    if cache_dir is None or not wheelhouse(cache_dir).is_dir():
        return []
    found = []
    for wheel in sorted(wheelhouse(cache_dir).glob("*.whl")):
        date = wheel.with_name(wheel.name + RELEASED)
        if date.is_file() and (when is None or datetime.fromisoformat(date.read_text().strip()) <= when):
            found.append(wheel)
    return found


def housed_for(pins: Sequence[str], cache_dir: Path) -> list[Path]:
    """The wheelhouse's wheels of exactly these pins (``name==version``)."""
    wanted = {canonicalize_name(n): Version(v) for n, _, v in (p.partition("==") for p in pins) if v}
    found = []
    for wheel in housed_as_of(cache_dir, None):
        try:
            name, version, _, _ = parse_wheel_filename(wheel.name)
        except InvalidWheelFilename:
            continue
        if wanted.get(name) == version:
            found.append(wheel)
    return found
