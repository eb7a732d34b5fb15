"""When each release of a distribution reached the package index, from the index's JSON
pages (PEP 691, with PEP 700's upload times: PyPI's and current mirrors'), and which
repositories its metadata names (PyPI's JSON API).

A project that installs a library from its git branch (botorch's CI: ``pip install
git+https://github.com/cornellius-gp/gpytorch.git``) ran against that branch as of its own
commit, newer than any release before it: the library's first release after the commit is
the nearest the index has (``deps.resolve`` lets the resolver see it for that library alone).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

import requests
from packaging.utils import canonicalize_name
from packaging.version import Version

from dlbench.deps.declared import distribution_file

DEFAULT_INDEX = "https://pypi.org/simple"
JSON_PAGE = "application/vnd.pypi.simple.v1+json"
TIMEOUT_S = 30


class ReleasesUnavailable(RuntimeError):
    """The index did not answer, or gives no upload times: nothing later can be chosen."""


@dataclass(frozen=True)
class Release:
    version: Version
    first_upload: datetime  # when the release appeared
    last_upload: datetime  # its last file (wheels of one release come over minutes or hours)


def first_release_after(name: str, when: datetime, index_url: str | None, ca_bundle: Path | None) -> Release | None:
    """The first final release of ``name`` uploaded after ``when`` whose version is above
    every release before it (a back-port to an older series is not the branch's successor);
    None when there is none yet."""
    return later_release(releases(name, index_url or DEFAULT_INDEX, str(ca_bundle) if ca_bundle else None), when)


def release_of(name: str, version: str, index_url: str | None, ca_bundle: Path | None) -> Release | None:
    """The final release ``name==version`` with its upload times; None when the index lacks it."""
    found = releases(name, index_url or DEFAULT_INDEX, str(ca_bundle) if ca_bundle else None)
    return next((r for r in found if r.version == Version(version)), None)


def later_release(found: Sequence[Release], when: datetime) -> Release | None:
    before = [r.version for r in found if r.first_upload <= when]
    after = [r for r in found if r.first_upload > when and (not before or r.version > max(before))]
    return min(after, key=lambda r: r.first_upload, default=None)


def cutoff_for(release: Release) -> datetime:
    """The upload cutoff that lets a resolver see every file of ``release``."""
    return release.last_upload + timedelta(seconds=1)


def releases(name: str, index_url: str, ca_bundle: str | None) -> tuple[Release, ...]:
    """Final, unyanked releases of ``name`` on the index with their upload times."""
    times: dict[Version, list[datetime]] = defaultdict(list)
    for file in _index_files(name, index_url, ca_bundle):
        found = distribution_file(file.get("filename", ""))
        version = found[1] if found else None
        if version is None or version.is_prerelease or file.get("yanked"):
            continue
        if not file.get("upload-time"):
            raise ReleasesUnavailable(f"{name}: the index gives no upload times (PEP 700)")
        times[version].append(datetime.fromisoformat(file["upload-time"].replace("Z", "+00:00")))
    return tuple(Release(v, min(t), max(t)) for v, t in sorted(times.items()))


@dataclass(frozen=True)
class SourceFile:
    url: str
    sha256: str | None


def source_file(name: str, version: str, index_url: str | None, ca_bundle: Path | None) -> SourceFile | None:
    """The sdist of ``name==version`` on the index; None when it has none."""
    bundle = str(ca_bundle) if ca_bundle else None
    for file in _index_files(name, index_url or DEFAULT_INDEX, bundle):
        filename = file.get("filename", "")
        found = distribution_file(filename)
        if found and not filename.endswith(".whl") and found[1] == Version(version) and not file.get("yanked"):
            return SourceFile(file["url"], (file.get("hashes") or {}).get("sha256"))
    return None


@functools.cache
def _index_files(name: str, index_url: str, ca_bundle: str | None) -> tuple[dict, ...]:
    """The index's files of ``name`` (PEP 691)."""
    url = f"{index_url.rstrip('/')}/{name}/"
    try:
        return tuple(_json(url, ca_bundle, JSON_PAGE)["files"])
    except (requests.RequestException, ValueError, KeyError) as exc:
        raise ReleasesUnavailable(f"{url}: {exc}") from exc


@functools.cache
def names_repository(name: str, index_url: str | None, ca_bundle: Path | None) -> bool:
    """Whether the index's project ``name`` names a repository called ``name`` among its
    URLs: a name read off a git URL (``git+https://github.com/wiseodd/asdl``) may be another
    project's on the index (PyPI's ``asdl`` is fpoli/python-asdl's). False when the index
    does not say."""
    base = (index_url or DEFAULT_INDEX).rstrip("/").removesuffix("/simple")
    try:
        info = _json(f"{base}/pypi/{name}/json", str(ca_bundle) if ca_bundle else None)["info"]
    except (requests.RequestException, ValueError, KeyError):
        return False
    urls = [info.get("home_page"), info.get("download_url"), *(info.get("project_urls") or {}).values()]
    return canonicalize_name(name) in {_repository_name(u) for u in urls if isinstance(u, str)}


def _repository_name(url: str) -> str | None:
    """``name`` of ``https://host/owner/name[.git][/...]``, canonical."""
    parts = [p for p in urlparse(url).path.split("/") if p]
    return canonicalize_name(parts[1].removesuffix(".git")) if len(parts) >= 2 else None


def _json(url: str, ca_bundle: str | None, accept: str | None = None) -> dict:
    """The JSON document at ``url``, trusting ``ca_bundle`` (the host's, with any proxy's CA)."""
    headers = {"Accept": accept} if accept else {}
    answer = requests.get(url, headers=headers, timeout=TIMEOUT_S, verify=ca_bundle or True)
    answer.raise_for_status()
    return answer.json()
