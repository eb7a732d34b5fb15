"""Model-written tests: parsing answers into cases, the synthetic test file, and running
candidates against it in the harness's local backend (verdicts from per-test reports)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dlbench.config import EvaluateConfig
from dlbench.generate.mutation_agreement.modeltests import (
    TEST_FILE,
    HarnessRunner,
    TestJob,
    model_tests_file,
    model_tests_request,
    module_name,
    parse_tests,
)
from dlbench.records import CloneRecord, CloneStatus
from tests.test_agreement_technique import SLUG, head, make_tasks, write_repo

TASKS = {t.function: t for t in make_tasks()}
RELU = TASKS["relu"]

ANSWER = """Sure, here are tests:

```python
import numpy as np
from tinyops.ops import relu
from tinyops.ops import relu, scale
relu_copy = relu
relu = lambda v: v
x = np.array([-1.0, 2.0])
assert np.array_equal(relu(x), [0.0, 2.0])
assert np.array_equal(relu(x), [0.0, 2.0])
assert x.shape == (2,)
print(relu(x))

def test_more():
    y = [3.0]
    assert relu(y)[0] == 3.0
```

```python
assert relu([-2.0])[0] == 0.0
this line is not python
```
"""


def test_parse_keeps_asserts_calling_the_target_with_their_setup():
    cases = parse_tests(ANSWER, RELU, cap=10)
    assert [c.assertion for c in cases] == [
        "assert np.array_equal(relu(x), [0.0, 2.0])",
        "assert relu(y)[0] == 3.0",
        "assert relu([-2.0])[0] == 0.0",
    ]
    setup = ["import numpy as np", "from tinyops.ops import scale", "relu_copy = relu", "x = np.array([-1.0, 2.0])"]
    assert cases[0].setup == setup and cases[1].setup == [*setup, "y = [3.0]"]
    assert [c.node_id for c in cases] == [f"{TEST_FILE}::test_model_{i}" for i in range(3)]


def test_parse_caps_and_handles_empty_answers():
    assert len(parse_tests(ANSWER, RELU, cap=2)) == 2
    assert parse_tests(ANSWER, RELU, cap=0) == []
    assert parse_tests(None, RELU, cap=5) == [] and parse_tests("no code here", RELU, cap=5) == []


def test_methods_and_constructors_count_by_attribute_and_class():
    method = RELU.model_copy(update={"function": "forward", "class_name": "Dense", "qualname": "Dense.forward"})
    init = RELU.model_copy(update={"function": "__init__", "class_name": "Dense", "qualname": "Dense.__init__"})
    answer = (
        "layer = Dense(2, 3)\nassert layer.forward([1, 2]).shape == (3,)\nassert Dense(2, 3).weight.shape == (2, 3)\n"
    )
    assert [c.assertion for c in parse_tests(answer, method, 5)] == ["assert layer.forward([1, 2]).shape == (3,)"]
    assert [c.assertion for c in parse_tests(answer, init, 5)] == ["assert Dense(2, 3).weight.shape == (2, 3)"]
    assert "instance of `Dense`" in model_tests_request(method, 3)[-1]["content"]
    assert (
        "Do not implement `relu`" in model_tests_request(RELU, 3)[-1]["content"]
        and RELU.prompt in model_tests_request(RELU, 3)[-1]["content"]
    )


def test_module_names():
    assert module_name("pkg/mod.py") == "pkg.mod"
    assert module_name("src/pkg/mod.py") == "pkg.mod"
    assert module_name("pkg/__init__.py") == "pkg"


def test_tests_file_has_one_self_contained_function_per_case():
    cases = parse_tests(ANSWER, RELU, cap=10)
    source = model_tests_file(RELU, cases)
    tree = ast.parse(source)
    names = [f.name for f in tree.body if isinstance(f, ast.FunctionDef)]
    assert names == [c.node_id.split("::")[1] for c in cases]
    assert all(
        ast.unparse(f.body[0]) == "from tinyops.ops import relu" for f in tree.body if isinstance(f, ast.FunctionDef)
    )


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> HarnessRunner:
    repo = write_repo(tmp_path_factory.mktemp("repos"))
    clone = CloneRecord(full_name="tiny/ops", slug=SLUG, clone_url="", path=str(repo), sha=None, status=CloneStatus.OK)
    return HarnessRunner(clone, None, "local", EvaluateConfig(backend="local", jobs=2, timeout_s=20))


WRONG = "def relu(x):\n    import numpy as np\n    return np.abs(np.asarray(x, dtype=float))\n"
FORGER = (
    "import os\n\n\ndef relu(x):\n    os.write(1, b'PASSED test_model_0 PASSED test_model_1\\n')\n    os._exit(0)\n"
)


def test_candidates_run_against_model_tests(runner: HarnessRunner):
    cases = tuple(parse_tests(ANSWER, RELU, cap=10))
    jobs = [
        TestJob(RELU, RELU.ground_truth, cases),
        TestJob(RELU, WRONG, cases),
        TestJob(RELU, RELU.ground_truth, cases),  # identical: runs once, same result
        TestJob(RELU, "def relu(x:\n", cases),
        TestJob(RELU, None, cases),
        TestJob(RELU, FORGER, cases),
        TestJob(RELU, RELU.ground_truth, ()),
    ]
    gold, wrong, again, broken, missing, forger, untested = runner.run(jobs)
    assert gold.status == "pass" and gold.passed == (True, True, True)
    assert wrong.status == "fail" and wrong.passed == (False, True, False)  # |-1| = 1 and |-2| = 2 are wrong
    assert again == gold
    assert broken.status == "syntax_error" and broken.passed == (False, False, False)
    assert missing.status == "no_code" and missing.passed == (False, False, False)
    assert forger.passed == (False, False, False) and forger.status not in ("pass", "fail")
    assert untested.passed == () and untested.status == "no_tests"


def test_a_failed_clone_runs_nothing(tmp_path: Path):
    clone = CloneRecord(
        full_name="t/o",
        slug=SLUG,
        clone_url="",
        path=str(tmp_path),
        sha=None,
        status=CloneStatus.CLONE_ERROR,
        error="gone",
    )
    result = HarnessRunner(clone, None, "local", EvaluateConfig()).run(
        [TestJob(RELU, RELU.ground_truth, tuple(parse_tests(ANSWER, RELU, 1)))]
    )
    assert result[0].status == "image_error" and result[0].passed == (False,)


class CountingRunner(HarnessRunner):
    """Counts the sessions it asks for (the seam a rerun must not reach)."""

    sessions = 0

    def _factory(self):
        make = super()._factory()

        def counted():
            CountingRunner.sessions += 1
            return make()

        return counted


def test_results_are_cached_by_what_decided_them(runner: HarnessRunner, tmp_path: Path):
    cases = tuple(parse_tests(ANSWER, RELU, cap=10))
    jobs = [TestJob(RELU, RELU.ground_truth, cases), TestJob(RELU, WRONG, cases)]
    first = CountingRunner(runner.clone, None, "local", runner.cfg, tmp_path).run(jobs)
    assert CountingRunner.sessions >= 1
    CountingRunner.sessions = 0
    assert CountingRunner(runner.clone, None, "local", runner.cfg, tmp_path).run(jobs) == first
    assert CountingRunner.sessions == 0  # nothing ran again
    fewer = cases[:2]  # other tests: another key, so it runs
    again = CountingRunner(runner.clone, None, "local", runner.cfg, tmp_path).run([TestJob(RELU, WRONG, fewer)])
    assert again[0].passed == (False, True) and CountingRunner.sessions == 1


@pytest.mark.docker
def test_candidates_run_against_model_tests_in_docker(require_docker, runner: HarnessRunner, tmp_path: Path):
    from dlbench.harness.code import support_files
    from dlbench.images.build import build_project_image
    from dlbench.records import ImageStatus

    cfg = runner.cfg
    image = build_project_image(
        Path(runner.clone.path),
        SLUG,
        head(Path(runner.clone.path)),
        cfg.base_image,
        tmp_path / "build.log",
        support_files(),
    )
    assert image.status == ImageStatus.OK, image.error
    cases = tuple(parse_tests(ANSWER, RELU, cap=10))
    jobs = [TestJob(RELU, RELU.ground_truth, cases), TestJob(RELU, WRONG, cases), TestJob(RELU, FORGER, cases)]
    gold, wrong, forger = HarnessRunner(runner.clone, image, "docker", cfg).run(jobs)
    assert gold.passed == (True, True, True) and wrong.passed == (False, True, False), (gold, wrong)
    assert forger.passed == (False, False, False)
