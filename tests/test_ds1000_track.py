"""The DS-1000 track without Docker: the released format and the shipped sample, the problem
sample, the question and answer forms, the screen, the grader's reading of a runner's reply
(spoofed replies included), and the runner itself run here on the sample (the same program
the sandbox runs; tests/test_ds1000_docker.py runs it in the sandbox)."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dlbench.config import ConfigError, load_config
from dlbench.ds1000.problems import sample_problems
from dlbench.generate.ds1000 import INSTRUCTION, Ds1000Prompting, as_task, null_solution, postprocess
from dlbench.generate.techniques import FEW_SHOT, ZERO_SHOT
from dlbench.harness.ds1000 import grade, program_of, screened
from dlbench.records import Ds1000Problem, EvalStatus, GenStatus
from dlbench.report.external import ExternalFormatError, load_benchmark, load_ds1000_problems
from tests.conftest import ROOT
from tests.workflow_runs import project_copy, snakemake

SAMPLE = ROOT / "resources/ds1000/sample.jsonl"
RUNNER = ROOT / "dlbench/harness/shipped/ds1000_runner.py"


@pytest.fixture(scope="module")
def problems() -> dict[str, Ds1000Problem]:
    return {p.task_id: p for p in load_ds1000_problems(SAMPLE)}


# ---------------------------------------------------------------- format


def test_the_shipped_sample_is_in_the_released_format(problems):
    lines = [json.loads(line) for line in SAMPLE.read_text().splitlines()]
    assert all(set(line) == {"prompt", "reference_code", "metadata", "code_context"} for line in lines)
    assert all({"problem_id", "library", "perturbation_type"} <= set(line["metadata"]) for line in lines)
    assert {p.library for p in problems.values()} == {"Pandas", "Numpy", "Scipy", "Sklearn", "Matplotlib"}
    assert [p.has_test_string() for p in problems.values()].count(True) == 1
    body = problems["Pandas/2"]  # a function's body: the solution is indented
    assert body.reference_code.startswith("    ") and "def f(df):\n[insert]" in body.code_context
    assert (
        problems["Pandas/1"].perturbation_type == "Semantic"
        and problems["Pandas/1"].metadata["perturbation_origin_id"] == 0
    )


def test_the_comparison_reads_the_same_file_through_the_same_loader(tmp_path):
    zipped = tmp_path / "ds1000.jsonl.gz"
    zipped.write_bytes(gzip.compress(SAMPLE.read_bytes()))  # as released: gzipped
    tasks = load_benchmark(zipped, "ds1000", "DS-1000")
    assert [t.task_id for t in tasks] == [p.task_id for p in load_ds1000_problems(zipped)]
    assert tasks[0].code == load_ds1000_problems(SAMPLE)[0].reference_code


def test_a_problem_without_its_tests_is_refused_with_its_line(tmp_path):
    lines = SAMPLE.read_text().splitlines()
    broken = json.loads(lines[1])
    del broken["code_context"]
    path = tmp_path / "ds1000.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(broken)]) + "\n")
    with pytest.raises(ExternalFormatError, match=r"ds1000.jsonl:2: no code_context defining test_execution"):
        load_ds1000_problems(path)
    assert len(load_benchmark(path, "ds1000", "DS-1000")) == 2  # the comparison needs only text


def test_the_sample_is_spread_over_the_libraries_and_seeded(problems):
    every = list(problems.values())
    four = sample_problems(every, 4, seed=0)
    assert len(four) == 4 and sample_problems(every, 4, seed=0) == four
    assert [p.library for p in four].count("Pandas") == 2  # 3 of 8 problems: its share of 4, rounded up
    assert sample_problems(every, 0, seed=0) == every and sample_problems(every, 99, seed=3) == every


def test_the_config_section_is_off_by_default_and_names_a_bad_model(tmp_path):
    assert not load_config({}).ds1000.enabled
    cfg = load_config({"ds1000": {"enabled": True}, "generate": {"techniques": ["zero-shot", "mutation_agreement"]}})
    assert cfg.ds1000_models() == ["gold", "null"] and cfg.ds1000_techniques() == ["zero-shot"]
    with pytest.raises(ConfigError, match="ds1000.models.0.*mutant model"):
        load_config({"models": {"gold": {"provider": "gold"}, "null": {"provider": "null"}, "mutant": {"provider": "mutant"}},
                     "ds1000": {"models": ["mutant"]}})  # fmt: skip
    with pytest.raises(ConfigError, match="'ds1000.path': file not found"):
        load_config({"ds1000": {"enabled": True, "path": str(tmp_path / "ds1000.jsonl.gz")}}, root=ROOT)


# ---------------------------------------------------------------- asking and answering


def test_a_question_is_the_prompt_with_the_instruction_and_examples_come_from_other_libraries(problems):
    tasks = [as_task(p) for p in problems.values()]
    task = as_task(problems["Pandas/0"])
    zero = Ds1000Prompting().messages(task, ZERO_SHOT, tasks, None, seed=0, run=0)
    assert zero == [{"role": "user", "content": f"{task.prompt.rstrip()}\n\n{INSTRUCTION}"}]
    few = Ds1000Prompting().messages(task, FEW_SHOT, tasks, None, seed=0, run=0)
    examples = [m["content"] for m in few[:-1] if m["role"] == "user"]
    assert len(examples) == 3 and not any("orders" in e for e in examples)  # no Pandas problem (same origin)
    assert all(m["content"].startswith("```python\n") for m in few[1:-1:2])


@pytest.mark.parametrize(
    ("raw", "finish", "code", "status"),
    [
        ("Here it is:\n```python\nresult = a[:, ::-1]\n```\nDone.", "stop", "result = a[:, ::-1]\n", GenStatus.OK),
        ("result = a[:, ::-1]\n</code>\nEND SOLUTION", "stop", "result = a[:, ::-1]\n", GenStatus.OK),  # DS-1000's form
        ("```python\n    result = df[df.x > 0]\n    return result\n```", "stop", "    result = df[df.x > 0]\n    return result\n", GenStatus.OK),
        ("<think>first numpy</think>```python\nresult = 1\n```", "stop", "result = 1\n", GenStatus.OK),
        ("```python\nresult = df.groupby(", "length", "result = df.groupby(\n", GenStatus.TRUNCATED),
        ("   ", "stop", None, GenStatus.NO_CODE),
    ],
)  # fmt: skip
def test_answers_are_cleaned_as_ds1000_does_and_keep_their_indentation(raw, finish, code, status, problems):
    found = Ds1000Prompting().extract(as_task(problems["Numpy/3"]), raw, finish)
    assert (found.code, found.status) == (code, status)


def test_postprocess_and_null_are_ds1000s():
    assert postprocess("<code>\nx = 1\n</code>\nmore") == "\nx = 1\n"
    assert null_solution("    result = f(x)\n    return result\n") == "    raise NotImplementedError\n"
    assert null_solution("result = 1\n") == "raise NotImplementedError\n"


# ---------------------------------------------------------------- screen and grade


def test_the_screen_judges_the_solution_in_its_program_against_the_references(problems):
    body = problems["Pandas/2"]
    assert program_of(body, "    return df\n").count("    return df") == 1
    assert screened(body, body.reference_code) == []  # what gold's program does is allowed
    assert screened(body, "    import os\n    os._exit(0)\n") == ["os._exit (line 6)"]  # found inside the function
    assert screened(problems["Numpy/3"], "import sys\nsys.exit(0)\n") == ["sys.exit (line 5)"]


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ({"outcome": "returned", "tests": {"test_execution": "passed"}}, EvalStatus.PASS),
        ({"outcome": "raised", "tests": {"test_execution": "failed"}, "exception": "AssertionError: "}, EvalStatus.FAIL),
        ({"outcome": "timeout", "tests": {}}, EvalStatus.TIMEOUT),
        ({"outcome": "no_verdict", "tests": {}}, EvalStatus.ERROR),
        ({"outcome": "violation", "tests": {}, "violations": ["the solution called os.kill"]}, EvalStatus.SANDBOX_VIOLATION),
        ({"outcome": "forged", "tests": {}}, EvalStatus.SANDBOX_VIOLATION),
        # spoofed replies: a pass needs the outcome and every call passed
        ({"outcome": "returned", "tests": {"test_execution": "passed", "test_string": "failed"}}, EvalStatus.SANDBOX_VIOLATION),
        ({"outcome": "returned", "tests": {}}, EvalStatus.SANDBOX_VIOLATION),
        ({"outcome": "PASS", "tests": {"test_execution": "passed"}}, EvalStatus.SANDBOX_VIOLATION),
        ({"passed": True}, EvalStatus.SANDBOX_VIOLATION),
    ],
)  # fmt: skip
def test_grade_passes_only_a_returned_program(reply, status):
    assert grade(reply)[0] == status


def _runner():
    spec = importlib.util.spec_from_file_location("ds1000_runner", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("verdict", "status", "outcome"),
    [
        (b'{"nonce": "N", "tests": {"test_execution": "passed"}}\n', 0, "returned"),
        (b'{"nonce": "N", "tests": {"test_execution": "failed"}, "exception": "E"}\n', 0, "raised"),
        (b"", 0, "no_verdict"),  # os._exit(0): an exit status is no verdict
        (b'{"nonce": "x", "tests": {"test_execution": "passed"}}\n', 0, "forged"),  # without the run's nonce
        (b'{"nonce": "N", "tests": {"test_execution": "passed"}}\n' * 2, 0, "forged"),  # a second message
        (b'{"nonce": "N", "tests": {"test_execution": "passed"}}\n', 9, "no_verdict"),  # killed after it
        (b'{"nonce": "N", "tests": {"test_execution": "passed"}, "violations": ["v"]}\n', 0, "violation"),
    ],
)
def test_the_runner_decides_from_one_message_with_the_nonce(verdict, status, outcome):
    assert _runner().decide(verdict, "N", status << 8 if status != 9 else 9, timed_out=False)["outcome"] == outcome


# ---------------------------------------------------------------- the runner, here


def run_here(problem: Ds1000Problem, solution: str) -> dict:
    request = {"code_context": problem.code_context, "solution": solution, "timeout_s": 60, "sweep": True}
    done = subprocess.run([sys.executable, "-I", str(RUNNER)], input=json.dumps(request).encode(), capture_output=True, timeout=120)  # fmt: skip
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


@pytest.mark.slow
def test_the_runner_passes_gold_and_fails_null_on_every_sample_problem(problems):
    for problem in problems.values():
        assert run_here(problem, problem.reference_code)["outcome"] == "returned", problem.task_id
        null = run_here(problem, null_solution(problem.reference_code))
        assert null["outcome"] == "raised" and null["exception"].startswith("NotImplementedError"), problem.task_id


HOSTILE = {  # solution for Numpy/3 (reverse the columns of a) → what stops it
    "exit status 0 after forging the verdict pipe": (
        "import os\nfor fd in range(3, 64):\n    try:\n"
        '        os.write(fd, b\'{"tests": {"test_execution": "passed"}, "nonce": "0"}\\n\')\n'
        "    except OSError:\n        pass\nos._exit(0)\n",
        "forged",
    ),
    "sys.exit(0)": ("import sys\nsys.exit(0)\n", "raised"),
    "killing the runner": (
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nresult = a[:, ::-1]\n",
        "violation",
    ),
    "a comparison replaced": (
        "import numpy.testing\nnumpy.testing.assert_array_equal = print\nresult = 0\n",
        "violation",
    ),
    "a comparison swapped for a lenient library function": (
        "import numpy as np\nnp.testing.assert_array_equal = np.broadcast_arrays\nresult = a\n",
        "violation",
    ),
    "a frame walked for the nonce": ("import sys\nf = sys._getframe().f_back\nresult = a[:, ::-1]\n", "violation"),
    "a heap walk": ("import gc\nx = gc.get_objects()\nresult = a[:, ::-1]\n", "violation"),
    "a value equal to anything": (
        "class Y:\n    def __eq__(self, o):\n        return True\nresult = Y()\n",
        "violation",
    ),
    "a verdict printed": ('print(\'{"outcome": "returned"}\')\nresult = 0\n', "raised"),
    "code from a writable place": (
        "open('m.py', 'w').write('X = 1')\nimport sys\nsys.path.insert(0, '.')\nimport m\nresult = a[:, ::-1]\n",
        "violation",
    ),  # fmt: skip
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_the_runner_never_passes_a_hostile_solution(name, problems):
    solution, outcome = HOSTILE[name]
    reply = run_here(problems["Numpy/3"], solution)
    assert reply["outcome"] == outcome, reply
    assert grade(reply)[0] != EvalStatus.PASS


def test_the_runner_sweeps_only_inside_the_sandbox():
    """Run here (no ``sleep infinity`` at pid 1), a request's sweep must not touch this machine."""
    assert not _runner()._in_sandbox()


def test_shipped_runner_is_standalone():
    source = Path(RUNNER).read_text()
    assert "import dlbench" not in source and "from dlbench" not in source


@pytest.mark.slow
def test_stage_few_shot_on_ds1000_asks_the_stage_classifier_first(tmp_path):
    """A dry run: DS-1000's prompts get the classifier's stages (rule ds1000_stages) before stage-few-shot."""
    workdir = project_copy(tmp_path / "project")
    overlay = {
        "models": {"m": {"provider": "openai", "model": "standin-model", "base_url": "http://127.0.0.1:9/v1"}},
        "generate": {"models": ["m"]},
        "ds1000": {"techniques": ["zero-shot", "stage-few-shot"]},
    }
    (workdir / "t.yaml").write_text(yaml.safe_dump(overlay))
    configs = ["config/config.yaml", "config/ds1000-sample.yaml", "t.yaml"]
    proc = snakemake(workdir, "-n", "results/ds1000/tables.csv", "--configfile", *configs)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "rule ds1000_stages:" in out and "rule classify_stages:" in out
    assert (
        "results/ds1000/generations/m/stage-few-shot.jsonl" in out
        and "results/ds1000/evaluations/m/zero-shot.jsonl" in out
    )
