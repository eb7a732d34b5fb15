"""Local stand-in for the parts of GitHub's REST API that the crawl and selection call.

A real HTTP server on 127.0.0.1 serving a metadata folder (``repos.json``: a list of
GitHub-shaped repository objects, plus the stand-in fields ``bundle`` and ``head_sha``):

- ``GET /search/repositories`` with ``q`` qualifiers (topic, language, stars, pushed,
  created, fork, archived, free text), ``sort``/``order``/``per_page``/``page``, Link
  headers and GitHub's 1,000-result cap (pages past it answer 422);
- ``GET /repos/{owner}/{repo}`` and ``/topics``;
- ``GET /repos/{owner}/{repo}/git/trees/{ref}[?recursive=1]``, ``/contents/{path}[?ref=]``
  and ``/commits/{ref}`` (a commit with its author and committer dates), read from the
  repository's git bundle;
- ``GET /rate_limit``.

Every response carries ``X-RateLimit-*`` headers; a primary limit per resource can be
set; ``faults`` schedules canned failures by request number (secondary rate limits, 5xx,
dropped connections) so tests can prove that clients survive them.
Run it on its own with ``python -m dlbench.standins.github --data DIR --port N``.
"""

from __future__ import annotations

import argparse
import base64
import json
import logging
import math
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from dlbench.standins.server import FaultSchedule, LocalServer

log = logging.getLogger(__name__)

SEARCH_CAP = 1000  # GitHub serves at most the first 1,000 results of a search
DOCS = "https://docs.github.com/rest"
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID STANDIN."
)
PRIMARY_MESSAGE = (
    "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit.)"
)
CAP_MESSAGE = "Cannot access beyond the first 1000 results, or the endpoint does not exist."
STANDIN_FIELDS = ("bundle", "head_sha")


@dataclass(frozen=True)
class Fault:
    """A canned response in place of the real one; ``status=0`` drops the connection."""

    status: int
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


def secondary_rate_limit(retry_after: int | None = 1) -> Fault:
    """GitHub's 403 for a secondary rate limit, with ``Retry-After`` unless None."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    return Fault(403, {"message": SECONDARY_MESSAGE, "documentation_url": f"{DOCS}#secondary-rate-limits"}, headers)


def server_error(status: int = 502) -> Fault:
    return Fault(status, {"message": "Server Error"})


def dropped_connection() -> Fault:
    return Fault(0)


@dataclass
class RateBucket:
    """A primary rate limit: ``limit`` requests per ``window_s`` seconds."""

    name: str
    limit: int
    window_s: float
    used: int = 0
    reset: float = 0.0

    def take(self, now: float) -> bool:
        """Count one request; False when the bucket is empty."""
        if now >= self.reset:
            self.used, self.reset = 0, now + self.window_s
        if self.used >= self.limit:
            return False
        self.used += 1
        return True

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(max(self.limit - self.used, 0)),
            "X-RateLimit-Reset": str(math.ceil(self.reset)),
            "X-RateLimit-Used": str(self.used),
            "X-RateLimit-Resource": self.name,
        }

    def as_json(self) -> dict[str, int]:
        h = self.headers()
        return {
            "limit": self.limit,
            "remaining": int(h["X-RateLimit-Remaining"]),
            "reset": int(h["X-RateLimit-Reset"]),
            "used": self.used,
        }


class StandinError(Exception):
    """An HTTP error answer (status and GitHub-style message)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


# ------------------------------------------------------------------ search query


def _parse_range(text: str, convert: Callable[[str], Any]) -> tuple[Any, Any, bool, bool]:
    """GitHub range syntax → (low, high, low_inclusive, high_inclusive); None is open."""
    for op, bounds in ((">=", (True, True)), ("<=", (True, True)), (">", (False, False)), ("<", (False, False))):
        if text.startswith(op):
            value = convert(text[len(op) :])
            return (value, None, bounds[0], True) if op[0] == ">" else (None, value, True, bounds[1])
    if ".." in text:
        low, high = text.split("..", 1)
        return (None if low == "*" else convert(low), None if high == "*" else convert(high), True, True)
    value = convert(text)
    return (value, value, True, True)


def _in_range(value: Any, bounds: tuple[Any, Any, bool, bool]) -> bool:
    low, high, low_inc, high_inc = bounds
    if value is None:
        return False
    if low is not None and (value < low or (value == low and not low_inc)):
        return False
    return not (high is not None and (value > high or (value == high and not high_inc)))


def _day(text: str | None) -> date | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).date() if text else None


@dataclass
class Query:
    """A parsed ``q`` of the repository search."""

    terms: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    language: str | None = None
    stars: tuple | None = None
    pushed: tuple | None = None
    created: tuple | None = None
    fork: str = "false"  # GitHub leaves forks out unless fork:true or fork:only
    archived: bool | None = None

    @classmethod
    def parse(cls, q: str) -> Query:
        query = cls()
        for token in q.split():
            key, sep, value = token.partition(":")
            key = key.lower()
            if not sep:
                query.terms.append(token.lower())
            elif key == "topic":
                query.topics.append(value.lower())
            elif key == "language":
                query.language = value.lower()
            elif key == "stars":
                query.stars = _parse_range(value, int)
            elif key in ("pushed", "created"):
                setattr(query, key, _parse_range(value, date.fromisoformat))
            elif key == "fork":
                query.fork = value.lower()
            elif key == "archived":
                query.archived = value.lower() == "true"
            else:
                raise StandinError(422, f"Validation Failed: unsupported qualifier {key!r}")
        return query

    def matches(self, repo: dict[str, Any]) -> bool:
        topics = [t.lower() for t in repo.get("topics") or []]
        text = " ".join([repo.get("full_name", ""), repo.get("description") or "", *topics]).lower()
        checks = (
            all(t in topics for t in self.topics),
            all(t in text for t in self.terms),
            self.language is None or (repo.get("language") or "").lower() == self.language,
            self.stars is None or _in_range(repo.get("stargazers_count", 0), self.stars),
            self.pushed is None or _in_range(_day(repo.get("pushed_at")), self.pushed),
            self.created is None or _in_range(_day(repo.get("created_at")), self.created),
            self.archived is None or bool(repo.get("archived")) == self.archived,
            {"false": not repo.get("fork"), "only": bool(repo.get("fork"))}.get(self.fork, True),
        )
        return all(checks)


SORT_KEYS = {"stars": "stargazers_count", "forks": "forks_count", "updated": "updated_at"}


# ------------------------------------------------------------------ git bundles


class BundleStore:
    """Bare clones of the repositories' bundles, made on first use, for trees and contents."""

    def __init__(self, root: Path):
        self.root = root
        self._lock = threading.Lock()

    def git_dir(self, slug: str, bundle: Path) -> Path:
        target = self.root / f"{slug}.git"
        with self._lock:
            if not target.exists():
                subprocess.run(
                    ["git", "clone", "--quiet", "--bare", str(bundle), str(target)], check=True, capture_output=True
                )
        return target

    @staticmethod
    def git(git_dir: Path, *args: str) -> bytes:
        result = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True)
        if result.returncode != 0:
            raise StandinError(404, "Not Found")
        return result.stdout


# ------------------------------------------------------------------ the application


class StandinApp:
    """Request handling, independent of the HTTP plumbing (one instance per server)."""

    def __init__(
        self, data_dir: Path, bundles_dir: Path | None, faults: FaultSchedule[Fault], buckets: dict[str, RateBucket]
    ):
        self.data_dir = data_dir
        self.bundles_dir = bundles_dir or _default_bundles_dir(data_dir)
        self.repos = _load_repos(data_dir)
        self.by_name = {r["full_name"].lower(): r for r in self.repos}
        self.faults = faults
        self.buckets = buckets
        self.base_url = ""
        self.requests = 0
        self.log: list[tuple[int, str, int]] = []  # (request number, path, status)
        self._lock = threading.Lock()
        self._tmp = Path(tempfile.mkdtemp(prefix="dlbench-standin-"))
        self.bundles = BundleStore(self._tmp)

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

    def count(self) -> int:
        with self._lock:
            self.requests += 1
            return self.requests

    def record(self, number: int, path: str, status: int) -> None:
        with self._lock:
            self.log.append((number, path, status))

    # ---- objects

    def clone_url(self, repo: dict[str, Any]) -> str:
        if repo.get("bundle"):
            return str((self.bundles_dir / repo["bundle"]).resolve())
        return repo.get("html_url", f"https://github.com/{repo['full_name']}") + ".git"

    def repo_object(self, repo: dict[str, Any]) -> dict[str, Any]:
        obj = {k: v for k, v in repo.items() if k not in STANDIN_FIELDS}
        api = f"{self.base_url}/repos/{repo['full_name']}"
        owner = dict(obj.get("owner") or {"login": repo["full_name"].split("/")[0]})
        owner.setdefault("url", f"{self.base_url}/users/{owner['login']}")
        obj.update(owner=owner, url=api, clone_url=self.clone_url(repo), private=False, visibility="public")
        return obj

    def find(self, owner: str, name: str) -> dict[str, Any]:
        repo = self.by_name.get(f"{owner}/{name}".lower())
        if repo is None:
            raise StandinError(404, "Not Found")
        return repo

    # ---- endpoints

    def search(self, params: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
        if not params.get("q"):
            raise StandinError(422, "Validation Failed: q is missing")
        try:
            query = Query.parse(params["q"])
            per_page = min(max(int(params.get("per_page", 30)), 1), 100)
            page = max(int(params.get("page", 1)), 1)
        except ValueError as exc:
            raise StandinError(422, f"Validation Failed: {exc}") from None
        key = SORT_KEYS.get(params.get("sort", "stars"), "stargazers_count")
        found = [r for r in self.repos if query.matches(r)]
        found.sort(key=lambda r: r["full_name"])
        found.sort(key=lambda r: r.get(key) or 0, reverse=params.get("order", "desc") != "asc")
        start = (page - 1) * per_page
        if start >= SEARCH_CAP:
            raise StandinError(422, CAP_MESSAGE)
        items = found[start : min(start + per_page, SEARCH_CAP)]
        last = max(math.ceil(min(len(found), SEARCH_CAP) / per_page), 1)
        body = {"total_count": len(found), "incomplete_results": False, "items": [self.repo_object(r) for r in items]}
        return body, {"Link": self._links("/search/repositories", params, page, last)} if last > 1 else {}

    def _links(self, path: str, params: dict[str, str], page: int, last: int) -> str:
        def url(n: int) -> str:
            return f"{self.base_url}{path}?{urlencode({**params, 'page': n}, quote_via=quote)}"

        rels = [("prev", page - 1), ("next", page + 1), ("last", last), ("first", 1)]
        return ", ".join(f'<{url(n)}>; rel="{rel}"' for rel, n in rels if 1 <= n <= last and n != page)

    def tree(self, repo: dict[str, Any], ref: str, recursive: bool) -> dict[str, Any]:
        git_dir = self._git_dir(repo)
        tree_sha = self.bundles.git(git_dir, "rev-parse", f"{ref}^{{tree}}").decode().strip()
        args = ["ls-tree", "-l", "--full-tree", *(["-r", "-t"] if recursive else []), tree_sha]
        api = f"{self.base_url}/repos/{repo['full_name']}/git"
        entries = []
        for line in self.bundles.git(git_dir, *args).decode().splitlines():
            meta, path = line.split("\t", 1)
            mode, kind, sha, size = meta.split()
            entry = {"path": path, "mode": mode, "type": kind, "sha": sha, "url": f"{api}/{kind}s/{sha}"}
            if kind == "blob":
                entry["size"] = int(size)
            entries.append(entry)
        return {"sha": tree_sha, "url": f"{api}/trees/{tree_sha}", "tree": entries, "truncated": False}

    def commit(self, repo: dict[str, Any], ref: str) -> dict[str, Any]:
        """``GET /repos/{owner}/{repo}/commits/{ref}``: GitHub's commit object (no ``files``);
        an unknown ref answers 422, as GitHub does."""
        git_dir = self._git_dir(repo)
        try:
            if ref.startswith("-"):
                raise StandinError(404, "Not Found")
            fields = ["%H", "%T", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%B"]
            out = self.bundles.git(git_dir, "show", "-s", f"--format={'%x00'.join(fields)}", f"{ref}^{{commit}}")
        except StandinError:
            raise StandinError(422, f"No commit found for SHA: {ref}") from None
        sha, tree, parents, an, ae, ad, cn, ce, cd, message = out.decode().split("\0")
        api = f"{self.base_url}/repos/{repo['full_name']}"

        def person(name: str, email: str, when: str) -> dict[str, str]:
            utc = datetime.fromisoformat(when).astimezone(UTC)
            return {"name": name, "email": email, "date": utc.strftime("%Y-%m-%dT%H:%M:%SZ")}

        return {
            "sha": sha,
            "url": f"{api}/commits/{sha}",
            "html_url": f"{repo.get('html_url', '')}/commit/{sha}",
            "commit": {
                "author": person(an, ae, ad),
                "committer": person(cn, ce, cd),
                "message": message.strip(),
                "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
                "url": f"{api}/git/commits/{sha}",
            },
            "parents": [{"sha": p, "url": f"{api}/commits/{p}"} for p in parents.split()],
        }

    def contents(self, repo: dict[str, Any], path: str, ref: str | None) -> Any:
        git_dir = self._git_dir(repo)
        ref = ref or repo.get("default_branch", "HEAD")
        kind = self.bundles.git(git_dir, "cat-file", "-t", f"{ref}:{path}").decode().strip()
        if kind == "tree":
            tree_sha = self.bundles.git(git_dir, "rev-parse", f"{ref}:{path}").decode().strip()
            listing = self.tree(repo, tree_sha, recursive=False)["tree"]
            return [
                self._content_entry(
                    repo, f"{path}/{e['path']}", e["sha"], e.get("size", 0), "dir" if e["type"] == "tree" else "file"
                )
                for e in listing
            ]
        data = self.bundles.git(git_dir, "show", f"{ref}:{path}")
        sha = self.bundles.git(git_dir, "rev-parse", f"{ref}:{path}").decode().strip()
        entry = self._content_entry(repo, path, sha, len(data), "file")
        entry.update(encoding="base64", content=base64.encodebytes(data).decode())
        return entry

    def _content_entry(self, repo: dict[str, Any], path: str, sha: str, size: int, kind: str) -> dict[str, Any]:
        api = f"{self.base_url}/repos/{repo['full_name']}"
        return {
            "type": kind,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": size,
            "url": f"{api}/contents/{quote(path)}",
            "git_url": f"{api}/git/blobs/{sha}",
            "html_url": f"{repo.get('html_url', '')}/blob/HEAD/{path}",
            "download_url": None,
        }

    def _git_dir(self, repo: dict[str, Any]) -> Path:
        if not repo.get("bundle"):
            raise StandinError(409, "Git Repository is empty.")
        return self.bundles.git_dir(repo["full_name"].replace("/", "__"), self.bundles_dir / repo["bundle"])

    def route(self, path: str, params: dict[str, str]) -> tuple[Any, dict[str, str]]:
        """Answer one GET; raise StandinError for GitHub-style errors."""
        parts = [unquote(p) for p in path.strip("/").split("/")]
        if parts == ["search", "repositories"]:
            return self.search(params)
        if parts == ["rate_limit"]:
            resources = {name: b.as_json() for name, b in self.buckets.items()}
            return {"resources": resources, "rate": resources["core"]}, {}
        if len(parts) >= 3 and parts[0] == "repos":
            repo = self.find(parts[1], parts[2])
            rest = parts[3:]
            if not rest:
                return self.repo_object(repo), {}
            if rest == ["topics"]:
                return {"names": repo.get("topics") or []}, {}
            if rest[:2] == ["git", "trees"] and len(rest) >= 3:
                return self.tree(repo, "/".join(rest[2:]), params.get("recursive") not in (None, "", "0", "false")), {}
            if rest[0] == "contents":
                return self.contents(repo, "/".join(rest[1:]), params.get("ref")), {}
            if rest[0] == "commits" and len(rest) >= 2:
                return self.commit(repo, "/".join(rest[1:])), {}
        raise StandinError(404, "Not Found")

    def bucket_for(self, path: str) -> RateBucket:
        return self.buckets["search" if path.startswith("/search/") else "core"]


def _default_bundles_dir(data_dir: Path) -> Path:
    """Bundles live in ``DATA/bundles`` or, as in the sample, beside the data folder."""
    inside = data_dir / "bundles"
    return inside if inside.is_dir() else data_dir.parent / "bundles"


def _load_repos(data_dir: Path) -> list[dict[str, Any]]:
    path = data_dir / "repos.json"
    try:
        repos = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"stand-in data {path}: {exc}") from None
    if not isinstance(repos, list) or not all(isinstance(r, dict) and "full_name" in r for r in repos):
        raise ValueError(f"stand-in data {path}: expected a JSON list of repository objects with full_name")
    return repos


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        app: StandinApp = self.server.app
        number = app.count()
        split = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        bucket = app.bucket_for(split.path)
        fault = app.faults.take(number)
        if fault is not None:
            self._fault(number, split.path, fault, bucket)
            return
        if not bucket.take(time.time()):
            self._send(
                number, split.path, 403, {"message": PRIMARY_MESSAGE, "documentation_url": DOCS}, bucket.headers()
            )
            return
        try:
            body, headers = app.route(split.path, params)
            status = 200
        except StandinError as exc:
            body, headers, status = {"message": exc.message, "documentation_url": DOCS}, {}, exc.status
        except Exception as exc:  # a bug here must look like a server error, not hang the client
            log.exception("stand-in failed on %s", self.path)
            body, headers, status = {"message": f"stand-in error: {exc}"}, {}, 500
        self._send(number, split.path, status, body, {**bucket.headers(), **headers})

    def _fault(self, number: int, path: str, fault: Fault, bucket: RateBucket) -> None:
        if fault.status == 0:
            self.server.app.record(number, path, 0)
            self.close_connection = True
            self.connection.shutdown(2)  # the client sees the connection drop mid-request
            return
        self._send(number, path, fault.status, fault.body, {**bucket.headers(), **fault.headers})

    def _send(self, number: int, path: str, status: int, body: Any, headers: dict[str, str]) -> None:
        self.server.app.record(number, path, status)
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server signature)
        log.debug("stand-in: " + format, *args)


class GitHubStandIn(LocalServer):
    """The stand-in on 127.0.0.1; use as a context manager (``with GitHubStandIn(d) as s: s.url``)."""

    thread_name = "github-standin"

    def __init__(
        self,
        data_dir: str | Path,
        *,
        bundles_dir: str | Path | None = None,
        port: int = 0,
        faults: dict[int, Fault] | None = None,
        core_limit: int = 5000,
        search_limit: int = 5000,
        window_s: float = 3600.0,
    ):
        buckets = {
            "core": RateBucket("core", core_limit, window_s),
            "search": RateBucket("search", search_limit, window_s),
        }
        self.app = StandinApp(
            Path(data_dir), Path(bundles_dir) if bundles_dir else None, FaultSchedule(faults), buckets
        )
        super().__init__(_Handler, port=port)
        self._httpd.app = self.app
        self.app.base_url = self.url

    @property
    def requests(self) -> int:
        """Requests received so far (faulty ones included)."""
        return self.app.requests

    @property
    def log(self) -> list[tuple[int, str, int]]:
        return list(self.app.log)

    def close(self) -> None:
        self.app.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve a GitHub REST stand-in on 127.0.0.1.")
    parser.add_argument("--data", required=True, help="folder holding repos.json")
    parser.add_argument("--bundles", help="folder of the git bundles (default: DATA/bundles or DATA/../bundles)")
    parser.add_argument("--port", type=int, default=0, help="port (0: any free port)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    server = GitHubStandIn(args.data, bundles_dir=args.bundles, port=args.port)
    print(f"GitHub stand-in serving {args.data} at {server.url}", flush=True)
    server.serve_until_interrupted()


if __name__ == "__main__":
    main()
