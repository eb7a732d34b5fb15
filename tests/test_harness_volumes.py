"""Sandbox containers leave no Docker volume behind, even on an image that declares volumes
(as every project image built before layers-5 did: its build steps' mounts became VOLUMEs,
and each container removed without ``v=True`` left two anonymous volumes)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlbench.harness.evaluate import evaluate_repo
from dlbench.images.build import docker_client
from dlbench.images.layers import BUILD_DIR, CACHE_DIR
from dlbench.records import CloneRecord, ImageRecord
from tests.conftest import docker_volumes, volumes_left_since
from tests.test_harness_run import CFG, GOLD_RELU, NULL_RELU, RELU, TASKS, clone, gen, image  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("harness_docker")]  # the worker that builds the image


@pytest.fixture(scope="module")
def image_with_volumes(image: ImageRecord) -> Iterator[ImageRecord]:
    """The project image with the two volumes an image built before the fix declared (made
    by a commit: the classic builder's VOLUME step would itself leave volumes behind)."""
    client = docker_client()
    tag = f"dlbench/test-volumes:{uuid.uuid4().hex[:12]}"
    container = client.containers.create(image.tag, ["true"])
    try:
        built = container.commit(*tag.split(":"), changes=[f"VOLUME {BUILD_DIR} {CACHE_DIR}"])
    finally:
        container.remove(force=True, v=True)
    assert set(built.attrs["Config"]["Volumes"]) == {BUILD_DIR, CACHE_DIR}
    yield image.model_copy(update={"tag": tag, "image_id": built.id})
    client.images.remove(tag, force=True)


def test_warm_and_naive_sandboxes_leave_no_volume(
    image_with_volumes: ImageRecord, clone: CloneRecord, tmp_path: Path
) -> None:
    before = docker_volumes()
    gens = [gen(RELU, GOLD_RELU), gen(RELU, NULL_RELU, sample=1)]
    for mode in ("warm", "naive"):
        results = evaluate_repo(clone, TASKS, gens, image_with_volumes, "docker", CFG, 1, tmp_path / mode, mode=mode)
        assert all(r.tests and r.backend == "docker" for r in results), [(r.status, r.detail) for r in results]
    assert not volumes_left_since(before)
