"""The DL-Bench authors' tasks in their three published forms, on synthetic copies of those forms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dlbench.records import FunctionRecord, task_id_for
from dlbench.tasks.authors import (
    AuthorsRepo,
    Checkout,
    as_test_functions,
    import_authors,
    most_like,
    rebased,
    repo_name_of,
    taxonomy_test_ids,
)
from tests.test_collect_support import git, make_git_repo

PROJECT = {
    "tinyml/ops.py": (
        "def scale(x, k):\n"
        '    """Multiply by k."""\n'
        "    return x * k\n"
        "\n\n"
        "class Box:\n"
        "    def area(self):\n"
        "        return self.w * self.h\n"
        "\n\n"
        "def outer():\n"
        "    def inner():\n"
        "        return 1\n"
        "    return inner\n"
        "\n\n"
        "class Circle:\n"
        "    def area(self):\n"
        "        return 3.14159 * self.r ** 2\n"
    ),
    "tinyml/other.py": "def scale(x, k):\n    raise NotImplementedError('not this one')\n",
    "tinyml/base.py": 'class Loss:\n    def compute(self, x):\n        """Subclasses compute."""\n        raise NotImplementedError("subclasses")\n',
    "tests/test_ops.py": "from tinyml.ops import scale\n\ndef test_scale():\n    assert scale(2, 3) == 6\n",
}

TRAJECTORY = (
    "Implement the function `{f}` in `{p}` so it satisfies this specification:\n\n{spec}\n\nEdit ONLY that function."
)
RESULT = (
    "output file:\nprocessed_tinyml{f}{n}.json\nfunction:\n{f}\nError Cases:\n\nPass or Failed: 0\n\n"
    "Related Failed Test Cases:\n{{'FAILED ../publishablew/tinyml/tinyml/tests/test_ops.py::test_scale'}}\n\n"
    "All Test Cases On Generated code:\n"
    "../publishablew/tinyml/tinyml/tests/test_ops.py::test_scale FAILED [100%]\n"
)


def authors_tree(root: Path) -> Path:
    """The authors' repository as a work tree: gold runs, trajectories, Taxonomy-Data."""
    (root / "results" / "agentic_trajectories").mkdir(parents=True)
    runs = [
        {"task_id": "DLBench/1", "repo": "tinyml", "status": "fail", "counts": {"passed": 0, "failed": 1}},
        {"task_id": "DLBench/1", "repo": "tinyml", "status": "pass", "counts": {"passed": 1, "failed": 0}},
        {"task_id": "DLBench/2", "repo": "tinyml", "status": "pass", "counts": {"passed": 2}},
        {"task_id": "DLBench/3", "repo": "tinyml", "status": "error", "counts": {}},
        {
            "task_id": "DLBench/6",
            "repo": "tinyml",
            "status": "pass",
            "counts": {"passed": 1},
            "stdout_tail": "tests/test_ops.py::test_scale\n  DeprecationWarning: ...\n1 passed in 0.1s",
        },
        {"task_id": "DLBench/4", "repo": "elsewhere", "status": "pass", "counts": {"passed": 1}},
        {"task_id": "DLBench/5", "repo": "tinyml", "status": "pass", "counts": {"passed": 1}},
    ]
    (root / "results" / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))
    for number, function, path, spec in [
        (1, "scale", "tinyml/ops.py", "Write a function `scale` that multiplies x by k."),
        (2, "area", "tinyml/ops.py", "Implement the `area` method of the class `Circle`."),
        (4, "far", "far/away.py", "Something."),
        (5, "inner", "tinyml/ops.py", "The inner helper."),
    ]:
        message = TRAJECTORY.format(f=function, p=path, spec=spec)
        lines = [{"type": "queue-operation", "content": message}, {"type": "user", "message": {"content": message}}]
        (root / "results" / "agentic_trajectories" / f"DLBench_{number}.jsonl").write_text(
            "".join(json.dumps(line) + "\n" for line in lines)
        )
    (root / "Taxonomy-Data" / "Original").mkdir(parents=True)
    (root / "Taxonomy-Data" / "Result").mkdir(parents=True)
    reference = (
        '    def scale(x, k):\n        """Multiply by k."""\n        return x * k\n'  # re-indented, as theirs are
    )
    (root / "Taxonomy-Data" / "Original" / "processed_tinymlscale7.py").write_text(reference)
    (root / "Taxonomy-Data" / "Result" / "processed_tinymlscale7.txt").write_text(RESULT.format(f="scale", n=7))
    return root


def project(tmp_path: Path) -> Checkout:
    path = tmp_path / "tinyml"
    sha = make_git_repo(path, PROJECT)[-1]
    return Checkout("someone/tinyml", path, sha, {})


def test_taxonomy_test_ids_are_made_relative_to_the_checkout(tmp_path: Path) -> None:
    raw = taxonomy_test_ids(RESULT.format(f="scale", n=7))
    assert raw == ("../publishablew/tinyml/tinyml/tests/test_ops.py::test_scale",)
    checkout = project(tmp_path).path
    (checkout / "tests" / "tinyml").mkdir()
    (checkout / "tests" / "tinyml" / "test_deep.py").write_text("def test_x():\n    pass\n")
    # the repository's name again below its root (GPflow's tests/gpflow/) does not cut the path short
    deep = "../publishablew/tinyml/tinyml/tests/tinyml/test_deep.py::test_x[a-b]"
    assert rebased([*raw, deep, "elsewhere/test_gone.py::test_y"], checkout) == [
        "tests/test_ops.py::test_scale",
        "tests/tinyml/test_deep.py::test_x",  # every published id of it a parametrization: the function
    ]


def test_parametrized_ids_run_as_their_test_function_unless_it_is_listed_bare() -> None:
    """torchgeo's published ids parametrize test_resnet_weights by weights, the pin by
    features_only: the function runs with whatever parametrizations the pin has."""
    ids = [
        "t.py::T::test_w[A.X]",
        "t.py::T::test_w[A.Y]",
        "t.py::test_mixed",
        "t.py::test_mixed[1]",
        "t.py::test_plain",
    ]
    assert as_test_functions(ids) == ["t.py::T::test_w", "t.py::test_mixed", "t.py::test_mixed[1]", "t.py::test_plain"]


def test_published_ids_are_spelled_as_the_file_at_the_pin_defines_them(tmp_path: Path) -> None:
    """A name the file lacks but defines once in another case is mapped (lightly's published ids
    say testMMCRLoss, the pinned file TestMMCRLoss); an ambiguous or absent one is left."""
    checkout = project(tmp_path).path
    (checkout / "tests" / "test_loss.py").write_text(
        "class TestMMCRLoss:\n    def test_Forward(self):\n        pass\n\n\n"
        "def test_a():\n    pass\n\n\ndef test_A():\n    pass\n"
    )
    ids = [
        "tests/test_loss.py::testMMCRLoss::test_forward[cpu]",
        "tests/test_loss.py::TEST_A",
        "tests/test_loss.py::test_gone",
    ]
    assert rebased(ids, checkout) == [
        "tests/test_loss.py::TEST_A",
        "tests/test_loss.py::TestMMCRLoss::test_Forward",
        "tests/test_loss.py::test_gone",
    ]


def test_taxonomy_file_names_run_repository_and_function_together() -> None:
    names = ["kornia", "pytorch3d", "pytorch-forecasting", "pytorch"]
    assert repo_name_of("processed_classes-kornia__init__48", names) == "kornia"
    assert repo_name_of("processed_pytorch3d_compute_x12", names) == "pytorch3d"  # not pytorch
    assert repo_name_of("processed_pytorch-forecastingrnn3", names) == "pytorch-forecasting"
    assert repo_name_of("processed_unknownthing3", names) is None


def test_the_definition_most_like_the_reference_is_chosen(tmp_path: Path) -> None:
    checkout = project(tmp_path)
    where = most_like(checkout.path, "scale", "def scale(x, k):\n    return x * k\n")
    assert (where.path, where.qualname) == ("tinyml/ops.py", "scale")
    unlike = most_like(
        checkout.path, "scale", "def scale(a):\n    import os\n    os.system('rm -rf /')\n    return 0\n"
    )
    assert unlike.qualname is None and "closest" in unlike.reason


def test_every_form_resolves_at_the_pin_with_both_sides(tmp_path: Path) -> None:
    checkout = project(tmp_path)
    mined = FunctionRecord(
        task_id=task_id_for("someone/tinyml", "tinyml/ops.py", "scale"), repo="someone/tinyml", sha=checkout.sha,
        path="tinyml/ops.py", function="scale", class_name=None, qualname="scale", signature="def scale(x, k):",
        source="def scale(x, k):\n    return x * k\n", docstring=None, class_context=None, start_line=1, end_line=3,
        tests=["tests/test_ops.py::test_scale"],
    )  # fmt: skip
    checkout = Checkout(checkout.full_name, checkout.path, checkout.sha, {("tinyml/ops.py", "scale"): mined})
    dleval = tmp_path / "dleval"
    dleval.mkdir()
    (dleval / "t.txt").write_text(
        "stage: Model Construction\ntask: \ndata: Image\n\nprompt:\nWrite `area` for the class Box.\n\n"
        f" ground Truth:blob/{checkout.sha}/tinyml/ops.py#L8\n"
    )
    (dleval / "n.txt").write_text(
        "stage: Model Construction\ntask: \ndata: Image\n\nprompt:\nWrite `inner`.\n\n"
        f" ground Truth:blob/{checkout.sha}/tinyml/ops.py#L13\n"
    )
    (dleval / "a.txt").write_text(
        "stage: Model Construction\ntask: \ndata: Image\n\nprompt:\nWrite `compute`.\n\n"
        f" ground Truth:blob/{checkout.sha}/tinyml/base.py#L4\n"
    )
    done = import_authors(authors_tree(tmp_path / "authors"), [checkout], dleval=dleval)
    rows = {r.source_id: r for r in done.rows}

    assert rows["DLBench/1"].authors_gold == "pass" and rows["DLBench/1"].authors_passed == 1  # the last run
    assert (rows["DLBench/1"].qualname, rows["DLBench/1"].mined_task_id) == ("scale", mined.task_id)
    assert rows["DLBench/1"].authors_tests == ["tests/test_ops.py::test_scale"]  # joined from Taxonomy
    assert rows["DLBench/2"].qualname == "Circle.area"  # the spec's class among two of that name
    assert rows["DLBench/3"].status == "unresolved" and rows["DLBench/3"].reason == "no public file names the function"
    assert rows["DLBench/4"].status == "unreachable"
    # no trajectory names DLBench/6, but the test ids its run printed are those Taxonomy lists for scale
    assert (rows["DLBench/6"].qualname, rows["DLBench/6"].mined_task_id) == ("scale", mined.task_id)
    assert rows["DLBench/6"].located_by.startswith("test ids of their run shared with Taxonomy/processed_tinymlscale7")
    assert (
        rows["DLBench/5"].reason.startswith("a nested function") and "outer.<locals>.inner" in rows["DLBench/5"].reason
    )
    assert rows["Taxonomy/processed_tinymlscale7"].path == "tinyml/ops.py"  # not other.py's stub
    assert rows["t.txt"].form == "dleval" and rows["t.txt"].qualname == "Box.area"
    assert rows["n.txt"].status != "present" and rows["n.txt"].reason.startswith("a nested function")  # never a task
    assert rows["a.txt"].status != "present" and rows["a.txt"].reason.startswith("an abstract stub")  # null is gold

    tasks = {t.qualname: t for t in done.tasks}
    assert set(tasks) == {"scale"}  # the methods have neither our tests nor theirs
    assert tasks["scale"].prompt.startswith("Write a function `scale`") and tasks["scale"].prompt_source == "authors"
    assert tasks["scale"].tests == ["tests/test_ops.py::test_scale"]


def test_unmined_function_takes_the_authors_tests(tmp_path: Path) -> None:
    """A function mining did not make a task still runs, against the ids the authors ran."""
    checkout = project(tmp_path)
    done = import_authors(authors_tree(tmp_path / "authors"), [checkout])
    (task,) = done.tasks
    assert task.qualname == "scale" and task.tests == ["tests/test_ops.py::test_scale"]
    assert task.ground_truth.startswith("def scale(x, k):") and task.start_line == 1
    assert all(r.mined_task_id is None for r in done.rows)


def test_a_bare_git_directory_is_read_at_head(tmp_path: Path) -> None:
    tree = authors_tree(tmp_path / "authors")
    git(tree, "init", "--quiet")
    git(tree, "-c", "user.email=t@e", "-c", "user.name=t", "add", "-A")
    git(tree, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "--quiet", "-m", "x")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "--quiet", "--bare", str(tree), str(bare))
    repo = AuthorsRepo(bare)
    assert "Taxonomy-Data/Result/processed_tinymlscale7.txt" in repo.files("Taxonomy-Data/Result")
    assert repo.text("results/validation.jsonl") == (tree / "results" / "validation.jsonl").read_text()
    assert repo.text("no/such/file") is None


@pytest.mark.parametrize("broken", ["not json\n", ""])
def test_a_trajectory_without_a_message_leaves_the_task_unnamed(tmp_path: Path, broken: str) -> None:
    tree = authors_tree(tmp_path / "authors")
    (tree / "results" / "agentic_trajectories" / "DLBench_1.jsonl").write_text(broken)
    rows = {r.source_id: r for r in import_authors(tree, [project(tmp_path)]).rows}
    assert rows["DLBench/1"].status == "unresolved"


def test_a_parametrized_test_id_keeps_the_spaces_of_its_parameters() -> None:
    """pytest prints a string parameter as it is, spaces included; cut at the first space the
    id names no test (GPflow's ``test_changepoints_init_fail[locations0-1.0-Number``)."""
    line = "../p/GPflow/GPflow/tests/test_k.py::test_fail[loc0-Number of kernels \\\\(3\\\\) is wrong] PASSED [ 80%]"
    related = "{'FAILED ../p/x/tests/t.py::test_a[a b]', 'FAILED ../p/x/tests/t.py::test_b'}"
    assert taxonomy_test_ids(f"{line}\n{related}\ntests/t.py::test_cut[no end") == (
        "../p/GPflow/GPflow/tests/test_k.py::test_fail[loc0-Number of kernels \\\\(3\\\\) is wrong]",
        "../p/x/tests/t.py::test_a[a b]",
        "../p/x/tests/t.py::test_b",
        "tests/t.py::test_cut",  # cut short: the whole test
    )
