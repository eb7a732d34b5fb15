"""Per-project images against the real Docker engine (no mocks).

Fails when the engine does not answer, unless DLBENCH_NO_DOCKER=1 says this machine has
none. The base image is built once (docker/base/build.sh) if it is absent; set
DLBENCH_TEST_BASE_IMAGE=python:3.11-slim to test against the registry image instead.
"""

from __future__ import annotations

import io
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import docker
from dlbench.config import ImagesConfig
from dlbench.images.build import (
    RUNNER_UID,
    build_project_image,
    docker_client,
    ensure_base_image,
)
from dlbench.records import ImageRecord, ImageStatus
from tests.conftest import docker_volumes, volumes_left_since

# One xdist worker builds the shared images (with --dist loadgroup).
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("image")]

ROOT = Path(__file__).resolve().parents[1]
BASE = os.environ.get("DLBENCH_TEST_BASE_IMAGE", "dlbench/base:bookworm")

OPS = "import numpy as np\n\n\ndef scale(x, k):\n    return np.asarray(x) * k\n"
TEST_OPS = "from pkg.ops import scale\n\n\ndef test_scale():\n    assert scale([1, 2], 3).tolist() == [3, 6]\n"


@pytest.fixture(scope="module")
def engine() -> docker.DockerClient:
    if os.environ.get("DLBENCH_NO_DOCKER") == "1":
        pytest.skip("DLBENCH_NO_DOCKER=1: this machine has no Docker engine")
    client = docker_client()
    client.ping()  # an engine that does not answer fails the tests, never skips them
    return client


@pytest.fixture(scope="module")
def base(engine: docker.DockerClient) -> str:
    if BASE == "dlbench/base:bookworm" and not ensure_base_image(BASE, engine, pull=False):
        subprocess.run([ROOT / "docker/base/build.sh"], check=True)
    assert ensure_base_image(BASE, engine), f"base image {BASE} is missing"
    return BASE


@pytest.fixture(scope="module")
def built(engine: docker.DockerClient) -> Iterator[list[str]]:
    """Tags this module built, untagged afterwards. Their layers stay: another build running
    now may have taken them from the cache, and removing them would break it."""
    tags: list[str] = []
    yield tags
    for tag in tags:
        try:
            engine.images.remove(tag, force=True, noprune=True)
        except docker.errors.ImageNotFound:
            pass


def make_repo(
    root: Path, requirements: str, tests: str = TEST_OPS, more: dict[str, str] | None = None
) -> tuple[Path, str]:
    files = {"requirements.txt": requirements, "pkg/__init__.py": "", "pkg/ops.py": OPS}
    files["tests/test_ops.py"] = tests
    files |= more or {}
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    return root, sha


def redate(repo: Path, when: str) -> str:
    """The repository's commit again, committed at ``when`` (what the lock's date comes from); its SHA."""
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(
        [*git, "commit", "-q", "--amend", "--no-edit"], check=True, env={**os.environ, "GIT_COMMITTER_DATE": when}
    )
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def build(repo: Path, sha: str, base: str, log: Path, built: list[str], support: dict[str, bytes], **cfg) -> ImageRecord:  # fmt: skip
    record = build_project_image(repo, "acme__tiny", sha, base, log, support_files=support, images=ImagesConfig(**cfg))
    if record.tag and not record.reused:
        built.append(record.tag)
    return record


@pytest.fixture(scope="module")
def numpy_image(base: str, built: list[str], tmp_path_factory: pytest.TempPathFactory) -> tuple[ImageRecord, ...]:
    """(first build, second call) for a tiny numpy repo; a fresh support file forces a real build."""
    repo, sha = make_repo(tmp_path_factory.mktemp("tiny"), "numpy\n")
    support = {"plugin.py": f"NONCE = {uuid.uuid4().hex!r}\n".encode(), "bin/supervise": b"#!/bin/sh\n"}
    logs = tmp_path_factory.mktemp("logs")
    return build(repo, sha, base, logs / "build.log", built, support), build(
        repo, sha, base, logs / "again.log", built, support
    )


def run(engine: docker.DockerClient, tag: str, command: list[str]) -> tuple[int, str]:
    user = f"{RUNNER_UID}:{RUNNER_UID}"
    container = engine.containers.run(tag, command, user=user, network_mode="none", detach=True)
    try:
        code = container.wait(timeout=120)["StatusCode"]
        return code, container.logs().decode()
    finally:
        container.remove(force=True, v=True)


def test_build_then_reuse(engine, numpy_image: tuple[ImageRecord, ImageRecord]) -> None:
    first, second = numpy_image
    labels = engine.images.get(first.tag).labels
    assert labels["dlbench.layer"] == "project" and not labels.get("dlbench.build")  # the step's label stays behind
    assert first.status == ImageStatus.OK, first.error
    assert not first.reused and first.build_seconds > 0
    assert f"# built {first.tag}" in Path(first.build_log).read_text()
    assert f"# reused {first.tag}" in Path(second.build_log).read_text()
    assert first.environment.lock == second.environment.lock and any(
        p.startswith("numpy==") for p in first.environment.lock
    )
    assert second.reused and second.status == ImageStatus.OK
    assert (second.tag, second.image_id, second.recipe_hash) == (first.tag, first.image_id, first.recipe_hash)
    assert first.tag.startswith("dlbench/project-acme__tiny:") and first.recipe_hash.startswith(first.tag.split(":")[1])


def test_numpy_and_pytest_work_as_runner_without_network(engine, numpy_image) -> None:
    code, out = run(engine, numpy_image[0].tag, ["sh", "-c", "id -u && python -m pytest -q -p no:cacheprovider tests"])
    assert code == 0, out
    assert out.startswith(f"{RUNNER_UID}\n") and "1 passed" in out


def test_repo_and_support_files_are_read_only_for_runner(engine, numpy_image) -> None:
    script = (
        "test -f /opt/dlbench/plugin.py && test -x /opt/dlbench/bin/supervise && test ! -e /work/repo/.git"
        " && ! test -e /opt/dlbench-build/ca.crt && ! test -e /opt/dlbench-build/uv && echo layout-ok;"
        " for f in /work/repo/pkg/ops.py /work/repo/new.py /opt/dlbench/plugin.py; do"
        "   (echo x >> $f) 2>/dev/null && echo WROTE $f; done; echo done"
    )
    code, out = run(engine, numpy_image[0].tag, ["sh", "-c", script])
    assert code == 0 and out == "layout-ok\ndone\n", out


def test_build_settings_stay_out_of_the_image(engine, numpy_image) -> None:
    """The install step's environment (uv's cache, the CA bundle that is not in the image)
    must not reach test runs: SSL_CERT_FILE naming a missing file breaks every HTTPS client."""
    config = engine.images.get(numpy_image[0].tag).attrs["Config"]
    names = {item.split("=", 1)[0] for item in config["Env"]}
    assert not names & {"SSL_CERT_FILE", "UV_CACHE_DIR", "UV_LINK_MODE", "UV_INDEX_URL"}, config["Env"]
    assert config["Cmd"] == ["python"]
    code, out = run(engine, numpy_image[0].tag, ["python", "-c", "import ssl; ssl.create_default_context()"])
    assert code == 0, out


def test_images_declare_no_volumes_and_build_steps_leave_none(engine, base, numpy_image, tmp_path: Path) -> None:
    """Build steps' mounts given as ``volumes=`` became the image's declared volumes (a commit
    keeps them), and every container of the image then left two anonymous volumes behind."""
    from dlbench.deps.resolve import uv_binary
    from dlbench.images.layers import commit_layer, run_step

    assert not engine.images.get(numpy_image[0].tag).attrs["Config"]["Volumes"]
    before = docker_volumes()
    step = run_step(engine, base, "true", {"x.txt": "x"}, tmp_path / "cache", Path(uv_binary()), None, io.StringIO())
    layer = commit_layer(step, f"dlbench/test-layer:{uuid.uuid4().hex[:12]}", {}, runtime=True)
    try:
        assert not engine.images.get(layer).attrs["Config"]["Volumes"]
        code, _ = run(engine, layer, ["true"])
        assert code == 0 and not volumes_left_since(before)
    finally:
        engine.images.remove(layer, force=True)


def test_unknown_requirement_is_dropped_and_recorded(base, built, tmp_path: Path) -> None:
    repo, sha = make_repo(tmp_path / "bad", "numpy\ndlbench-no-such-package-7f3a==0.0.1\n")
    record = build(repo, sha, base, tmp_path / "logs" / "bad.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    dropped = record.environment.dropped
    assert [d.spec for d in dropped] == ["dlbench-no-such-package-7f3a==0.0.1"] and "unresolvable" in dropped[0].reason
    assert "# dropped dlbench-no-such-package-7f3a==0.0.1" in Path(record.build_log).read_text()


TEST_SDISTS = (
    "import numpy as np\nimport visdom\nfrom pesq import pesq\n\n\ndef test_metric():\n    assert callable(pesq)\n"
)


def test_test_imports_offered_only_as_sdists_are_built_in_the_image(engine, base, built, tmp_path: Path) -> None:
    """pesq has no wheels and compiles C: the project layer gets a compiler and Python's
    headers and builds it for the image's Python. visdom 0.2.4 is pure Python, but its
    setup.py imports ``pkg_resources``, which the build tools as of this commit (today's
    setuptools) lack: it builds on the host with those of its release, into the wheelhouse,
    and the image installs that wheel, building nothing. The runner imports both without
    network."""
    repo, sha = make_repo(tmp_path / "native", "numpy\n", tests=TEST_SDISTS)
    record = build(repo, sha, base, tmp_path / "native.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    assert any(pin.startswith("pesq==") for pin in record.environment.lock), record.environment.lock
    log = Path(record.build_log).read_text()
    assert "# pesq: no wheel, an sdist that compiles: built in the image with a compiler" in log
    assert "# visdom-0.2.4-py3-none-any.whl: built here from its sdist (the wheelhouse)" in log
    code, output = run(engine, record.tag, ["python", "-c", "import pesq.cypesq, visdom; print('ok')"])
    assert code == 0 and "ok" in output, output


CI_APT = """jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: sudo apt-get install -y tree dlbench-no-such-deb
      - run: pytest tests
"""
TEST_GIT = (
    "import subprocess\n\n\ndef test_init(tmp_path):\n    subprocess.check_call(['git', 'init', '-q'], cwd=tmp_path)\n"
)


def test_the_debian_packages_of_the_projects_test_runs_are_installed(engine, base, built, tmp_path: Path) -> None:
    """What the project's CI installs with apt (where Debian has it) and the runner's git its
    tests call are in the image; a package Debian lacks is left out, not the image."""
    repo, sha = make_repo(tmp_path / "ci", "packaging\n", tests=TEST_GIT)
    (repo / ".github/workflows").mkdir(parents=True)
    (repo / ".github/workflows/tests.yml").write_text(CI_APT)  # the build reads the checkout
    record = build(repo, sha, base, tmp_path / "ci.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    log = Path(record.build_log).read_text()
    assert "# Debian package dlbench-no-such-deb: left out" in log and "# Debian package tree: installed" in log
    code, output = run(engine, record.tag, ["sh", "-c", "git --version && tree --version"])
    assert code == 0 and "git version" in output, output


OWN_PYPROJECT = """\
[project]
name = "acme-tiny"
version = "1.2.3"
[project.entry-points."acme.devices"]
default = "pkg.ops:scale"
"""
TEST_OWN = """\
from importlib.metadata import entry_points, files, version


def test_own_entry_points_and_version():
    [device] = entry_points(group="acme.devices")
    assert device.load()([1], 2).tolist() == [2]
    assert version("acme-tiny") == "1.2.3"
    assert all(".dist-info/" in str(f) for f in files("acme-tiny"))  # metadata, no code
"""


def test_the_projects_own_entry_points_and_version_are_registered_without_its_code(
    engine, base, built, tmp_path: Path
) -> None:
    """PennyLane finds its own devices through its ``pennylane.plugins`` entry points: with the
    checkout run from its folder and nothing installed, every device test failed ("Device
    default.qubit does not exist"). The image records the project's metadata alone."""
    repo, sha = make_repo(tmp_path / "own", "numpy\n", tests=TEST_OWN, more={"pyproject.toml": OWN_PYPROJECT})
    record = build(repo, sha, base, tmp_path / "own.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    assert (
        "# the project's own distribution: acme-tiny 1.2.3, metadata only (acme.devices)"
        in Path(record.build_log).read_text()
    )
    code, output = run(
        engine,
        record.tag,
        ["sh", "-c", "python -m pytest -q -p no:cacheprovider tests && python -c 'import pkg; print(pkg.__file__)'"],
    )
    assert code == 0 and "1 passed" in output and "/work/repo/pkg/__init__.py" in output, output


def test_lock_is_resolved_as_of_the_commit_date(base, built, tmp_path: Path) -> None:
    """A commit dated 2023-05-01 gets the packaging of that day (23.1), not today's."""
    repo, _ = make_repo(tmp_path / "old", "packaging\n")
    sha = redate(repo, "2023-05-01T00:00:00+00:00")
    record = build(repo, sha, base, tmp_path / "old.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    assert "packaging==23.1" in record.environment.lock
    assert record.environment.exclude_newer.isoformat().startswith("2023-05-01")


CI_FROM_GIT = """\
jobs:
  tests:
    steps:
      - run: pip install git+https://github.com/pypa/packaging.git
      - run: pytest tests
"""


def test_a_library_the_ci_installs_from_its_branch_is_its_first_release_after_the_commit(engine, base, built, tmp_path: Path) -> None:  # fmt: skip
    """The CI installs packaging from its main branch (never fetched here): on a commit of
    2023-05-01 the first release after it (23.2, 2023-10-01) stands in, for packaging alone,
    and the image's own install accepts that later date (uv reads it from no variable)."""
    repo, _ = make_repo(tmp_path / "branch", "packaging\nsix\n")
    (repo / ".github/workflows").mkdir(parents=True)
    (repo / ".github/workflows/tests.yml").write_text(CI_FROM_GIT)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    sha = redate(repo, "2023-05-01T00:00:00+00:00")
    record = build(repo, sha, base, tmp_path / "branch.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    env = record.environment
    assert "packaging==23.2" in env.lock and "six==1.16.0" in env.lock  # six keeps the commit's date
    assert list(env.exclude_newer_package) == ["packaging"] and env.exclude_newer_package["packaging"].year == 2023
    stand_in = next(d for d in env.dropped if d.spec.startswith("packaging @ git+"))
    assert "first release after 2023-05-01 stands in for it (23.2, 2023-10-01)" in stand_in.reason
    code, output = run(engine, record.tag, ["python", "-c", "import packaging; print(packaging.__version__)"])
    assert code == 0 and output.strip() == "23.2", output


def test_missing_module_is_repaired_and_recorded(base, built, tmp_path: Path) -> None:
    """An import the static plan cannot see (inside an ``if``) fails collection; the repair
    loop adds its distribution and rebuilds."""
    tests = "import sys\nif sys.version_info >= (3,):\n    import yaml\n\n\ndef test_yaml():\n    assert yaml.safe_load('a: 1') == {'a': 1}\n"  # noqa: E501
    repo, sha = make_repo(tmp_path / "repair", "numpy\n", tests=tests)
    record = build(repo, sha, base, tmp_path / "repair.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    steps = record.environment.repairs
    assert [(s.round, s.module, s.distribution) for s in steps] == [(1, "yaml", "pyyaml")]
    assert "No module named 'yaml'" in steps[0].reason and record.environment.unresolved == []
    assert any(pin.startswith("pyyaml==") for pin in record.environment.lock)


TEST_OPENMP = "import ctypes\n\nGOMP = ctypes.CDLL('libgomp.so.1')\n\n\ndef test_threads():\n    assert GOMP.omp_get_max_threads() >= 1\n"  # noqa: E501
TEST_NOWHERE = "import ctypes\n\nctypes.CDLL('libdlbench-nowhere.so.7')\n\n\ndef test_never():\n    pass\n"


def test_a_shared_library_the_system_lacks_is_installed_from_the_debian_package_that_has_it(engine, base, built, tmp_path: Path) -> None:  # fmt: skip
    """LightGBM's wheels link GCC's OpenMP runtime, which a minimal Debian lacks: the loader's
    ``libgomp.so.1: cannot open shared object file`` is found in the system's own package
    contents (libgomp1) and installed with the project layer; a library no package has is
    left, said so, and costs nothing else."""
    repo, sha = make_repo(tmp_path / "lib", "numpy\n", tests=TEST_OPENMP, more={"tests/test_nowhere.py": TEST_NOWHERE})  # fmt: skip
    record = build(repo, sha, base, tmp_path / "lib.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    steps = record.environment.repairs
    assert [(s.round, s.module, s.distribution, s.debian) for s in steps] == [(1, "libgomp.so.1", "libgomp1", True)]
    assert "libgomp.so.1: cannot open shared object file" in steps[0].reason
    assert record.environment.unresolved_libraries == ["libdlbench-nowhere.so.7"]
    log = (tmp_path / "lib.log").read_text()
    assert log.count("no Debian package of this system has libdlbench-nowhere.so.7") == 1, log  # looked up once
    code, output = run(engine, record.tag, ["python", "-c", "import ctypes; print(ctypes.CDLL('libgomp.so.1').omp_get_max_threads())"])  # fmt: skip
    assert code == 0 and int(output) >= 1, output


def test_a_library_release_failing_at_its_own_import_is_pinned_below(base, built, tmp_path: Path) -> None:
    """jinja2 2.11.3 imports ``soft_unicode``, which markupsafe dropped in 2.1: resolved as of
    2025-01-01 (markupsafe 3.0.2), ``import jinja2`` fails in jinja2's own code; the check
    charges markupsafe, pinned below 3.0 (2.1.5: still without it), then below 2.1."""
    tests = "import jinja2\n\n\ndef test_render():\n    assert jinja2.Template('{{ 1 + 1 }}').render() == '2'\n"
    repo, _ = make_repo(tmp_path / "pinned", "jinja2==2.11.3\n", tests=tests)
    sha = redate(repo, "2025-01-01T00:00:00+00:00")
    record = build(repo, sha, base, tmp_path / "pinned.log", built, {})
    assert record.status == ImageStatus.OK, record.error
    steps = record.environment.repairs
    assert [(s.round, s.spec) for s in steps] == [(1, "markupsafe<3.0"), (2, "markupsafe<2.1")]
    assert "cannot import name 'soft_unicode'" in steps[0].reason and "site-packages/jinja2/" in steps[0].reason
    assert "markupsafe==2.0.1" in record.environment.lock and record.environment.unresolved == []


def test_two_projects_share_one_framework_layer(base, built, engine, tmp_path: Path) -> None:
    """With ``six`` standing in for a framework: the second project builds on the first's layer."""
    first, sha1 = make_repo(tmp_path / "one", f"six\nnumpy\npytest!=0.0.{uuid.uuid4().int % 10**9}\n")
    second, sha2 = make_repo(tmp_path / "two", "six\n")
    a = build(first, sha1, base, tmp_path / "one.log", built, {}, frameworks=["six"], reuse_frameworks=True)
    b = build(second, sha2, base, tmp_path / "two.log", built, {}, frameworks=["six"], reuse_frameworks=True)
    assert a.status == b.status == ImageStatus.OK, (a.error, b.error)
    assert a.framework_image and a.framework_image == b.framework_image
    assert "reused" in Path(b.build_log).read_text().split("# framework layer")[1].splitlines()[0]
    assert b.environment.frameworks == a.environment.frameworks and b.environment.framework_preferred


def test_missing_base_image_is_an_image_error(engine, tmp_path: Path) -> None:
    repo, sha = make_repo(tmp_path / "repo", "numpy\n")
    log = tmp_path / "b.log"
    record = build_project_image(repo, "acme__tiny", sha, "dlbench/no-such-base:none", log, client=engine)
    assert record.status == ImageStatus.IMAGE_ERROR and "make base-image" in record.error
    assert log.read_text().startswith("# FAILED: base image")


def test_checkout_at_another_commit_is_refused(base, tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path / "repo", "numpy\n")
    record = build_project_image(repo, "acme__tiny", "0" * 40, base, tmp_path / "c.log")
    assert record.status == ImageStatus.IMAGE_ERROR and "is not at" in record.error


SLIM_LIKE = """\
FROM {base}
RUN rm -rf /opt/venv /etc/pip.conf /usr/local/share/ca-certificates/dlbench-host \\
 && update-ca-certificates --fresh >/dev/null && userdel --remove runner
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""


@pytest.fixture(scope="module")
def slim_like(engine: docker.DockerClient, base: str) -> str:
    """A base like python:3.11-slim: no /opt/venv, no runner user, no trust in the proxy's CA.
    Kept (named after the base) so later runs reuse it."""
    if base != "dlbench/base:bookworm":
        return base
    tag = f"dlbench/test-slim-like:{engine.images.get(base).id.split(':')[1][:12]}"
    if not ensure_base_image(tag, engine, pull=False):
        engine.images.build(fileobj=io.BytesIO(SLIM_LIKE.format(base=base).encode()), tag=tag, rm=True)
    return tag


def test_slim_like_base_cannot_reach_the_index_by_itself(engine, slim_like) -> None:
    probe = "import urllib.request as u; u.urlopen('https://pypi.org/simple/pip/', timeout=30)"
    container = engine.containers.run(slim_like, ["python3", "-c", probe], network_mode="host", detach=True)
    try:
        code, out = container.wait(timeout=60)["StatusCode"], container.logs().decode()
    finally:
        container.remove(force=True, v=True)
    if code == 0:
        pytest.skip("no TLS-intercepting proxy here: the CA handling is not exercised")
    assert "CERTIFICATE_VERIFY_FAILED" in out, out


def test_recipe_works_on_a_slim_like_base(engine, slim_like, tmp_path: Path) -> None:
    # A requirement no earlier run had, so pip really runs (no cached layer) through the proxy.
    repo, sha = make_repo(tmp_path / "repo", f"pytest!=0.0.{uuid.uuid4().int % 10**9}\n")
    record = build_project_image(repo, "acme__tiny", sha, slim_like, tmp_path / "slim.log")
    assert record.status == ImageStatus.OK, record.error
    try:
        code, out = run(engine, record.tag, ["sh", "-c", "id -un && python -c 'import pytest, pkg'"])
    finally:  # its layers are its own (unique requirement): prune them
        engine.images.remove(record.tag, force=True)
    assert (code, out) == (0, "runner\n"), out


def test_steps_left_by_an_interrupted_build_are_removed_once_stale(engine, base) -> None:
    from dlbench.images.layers import remove_finished_steps

    own = f"test-{os.getpid()}"  # never another build's steps: one exited may be being committed
    left = engine.containers.run(base, ["true"], labels={"dlbench.build": own}, detach=True)
    left.wait(timeout=60)
    remove_finished_steps(engine, label=own)
    engine.containers.get(left.id)  # exited seconds ago: a parallel build may still be committing it
    assert remove_finished_steps(engine, older_than_s=0, label=own) == 1
    with pytest.raises(docker.errors.NotFound):
        engine.containers.get(left.id)


def test_prune_keeps_what_records_name_and_images_in_use(engine, base) -> None:
    from dlbench.images.layers import prune_images

    name = f"dlbench/project-prunetest-{uuid.uuid4().hex[:8]}"
    for version in ("kept", "old", "busy"):
        recipe = f"FROM {base}\nLABEL dlbench.layer=project dlbench.version={version}\n"
        engine.images.build(fileobj=io.BytesIO(recipe.encode()), tag=f"{name}:{version}", rm=True)
    busy = engine.containers.create(f"{name}:busy", ["true"])
    try:
        assert prune_images(engine, keep={f"{name}:kept"}, prefix=name) == [f"{name}:old"]
        assert {t for i in engine.images.list(name=name) for t in i.tags} == {f"{name}:kept", f"{name}:busy"}
    finally:
        busy.remove(force=True, v=True)
        for version in ("kept", "busy"):
            engine.images.remove(f"{name}:{version}", force=True)


def test_machine_faults_are_raised_not_recorded(base, tmp_path: Path) -> None:
    """A recorded image error would be kept on every rerun: the disk, engine or network
    failing is raised instead (the job fails, a rerun builds again)."""
    from dlbench.images.build import BuildInfrastructureError

    repo, sha = make_repo(tmp_path / "repo", "numpy\n")
    (tmp_path / "cache").write_text("a file where the download cache should be")
    with pytest.raises(BuildInfrastructureError, match="acme__tiny"):
        build_project_image(repo, "acme__tiny", sha, base, tmp_path / "f.log", downloads=tmp_path / "cache")
    assert "# INFRASTRUCTURE" in (tmp_path / "f.log").read_text()


def test_a_step_stopped_by_the_machines_full_disk_is_raised_not_recorded(
    engine: docker.DockerClient, base: str, tmp_path: Path
) -> None:
    """An install step that ran out of the host's disk (asteroid's torch, beside another
    repository's build) is no fault of the project's recipe: recorded, the image error was
    kept on every rerun."""
    from dlbench.images.build import BuildInfrastructureError, _recorded_build
    from dlbench.images.layers import StepFailed

    full = "error: Failed to install: torch-2.7.1 ... No space left on device (os error 28)"

    def build(client, record, out):
        raise StepFailed("build step exited with 2", full)

    record = ImageRecord(repo="acme__tiny", sha="1" * 40, base_image=base, tag=None, status=ImageStatus.IMAGE_ERROR, build_log="")  # fmt: skip
    with pytest.raises(BuildInfrastructureError, match="acme__tiny"):
        _recorded_build(engine, record, tmp_path / "full.log", build)
    assert "# INFRASTRUCTURE" in (tmp_path / "full.log").read_text()

    def recipe(client, record, out):
        raise StepFailed("build step exited with 2", "error: Failed to build `numba==0.53.1`")

    assert "numba" in _recorded_build(engine, record, tmp_path / "recipe.log", recipe).error
