"""DS-1000's problems asked like DL-Bench's tasks: the same providers and techniques, another answer form.

A DS-1000 prompt is a question with the code around the solution, ending where the solution
starts (``BEGIN SOLUTION`` and an open ``<code>``, a function's ``### BEGIN SOLUTION``, or a
plot's ``# SOLUTION START``). The model is asked for that code alone, in a fenced block;
few-shot examples are other problems of other libraries (every perturbation of a problem is
of its library, so none leaks its answer) answered with their reference code.

Extraction keeps DS-1000's own clean-up (``test_ds1000.py``'s ``postprocess``: the text up to
``</code>``, without a ```` ```python ```` fence, up to ``END SOLUTION``, without ``<code>``),
applied to the answer's last Python block when it has one (its thinking text dropped), else
to the whole answer. The code is not parsed: a function body's solution is indented and only
parses in its problem's program, which judges it.

The null model's candidate is ``raise NotImplementedError`` at the reference's indentation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dlbench.generate.models import Prompting
from dlbench.generate.sanitize import Extraction, fenced_blocks, strip_thinking
from dlbench.generate.techniques import Messages, choose_examples
from dlbench.records import BenchmarkTask, Ds1000Problem, GenStatus

BENCHMARK = "DS-1000"
SOLUTION = "solution"  # the task view's function name: a DS-1000 solution is a snippet
TESTS = ("test_execution", "test_string")
INSTRUCTION = (
    "Write the code that completes the solution above, where it says the solution begins: only that code, "
    "in the given format and indentation (a function's body stays indented), in a single ```python code block."
)


def as_task(problem: Ds1000Problem) -> BenchmarkTask:
    """The problem in the benchmark record's form, as generation and the tables read tasks:
    ``ground_truth`` is its reference code, ``tests`` the code context's test calls, and its
    slug names its library (few-shot examples come from other libraries)."""
    return BenchmarkTask(
        task_id=problem.task_id, repo=BENCHMARK, sha=None, path=problem.task_id, function=SOLUTION, class_name=None,
        signature="", prompt=problem.prompt, ground_truth=problem.reference_code, tests=test_calls(problem),
        stage=None, task=None, data=None, first_added=None, last_modified=None, qualname=str(problem.problem_id),
        slug=f"ds1000-{problem.library.lower()}", start_line=0, end_line=0,
    )  # fmt: skip


def test_calls(problem: Ds1000Problem) -> list[str]:
    """The official program's calls: ``test_execution``, then ``test_string`` where the context has it."""
    return list(TESTS if problem.has_test_string() else TESTS[:1])


def postprocess(code: str) -> str:
    """DS-1000's own clean-up of an answer (``test_ds1000.py``)."""
    code = code.split("</code>")[0]
    code = code.replace("```python", "")
    code = code.split("```")[0]
    code = code.split("\nEND SOLUTION")[0]
    return code.replace("<code>", "")


def null_solution(reference: str) -> str:
    """``raise NotImplementedError`` where the reference's first line starts."""
    first = next((line for line in reference.splitlines() if line.strip()), "")
    return f"{first[: len(first) - len(first.lstrip())]}raise NotImplementedError\n"


class Ds1000Prompting(Prompting):
    """DS-1000's form of the question, the answer and the null candidate."""

    def messages(
        self,
        task: BenchmarkTask,
        technique: str,
        pool: Sequence[BenchmarkTask],
        predicted_stages: Mapping[str, str | None] | None,
        seed: int,
        run: int,
    ) -> Messages:
        turns: Messages = []
        for example in choose_examples(task, technique, pool, predicted_stages, seed, run):
            turns += [_question(example), {"role": "assistant", "content": f"```python\n{example.ground_truth}```"}]
        return [*turns, _question(task)]

    def extract(self, task: BenchmarkTask, raw: str | None, finish_reason: str | None) -> Extraction:
        if raw is None or not raw.strip():
            return Extraction(None, GenStatus.NO_CODE, "empty answer")
        text, thinking_cut = strip_thinking(raw)
        if thinking_cut:
            status = GenStatus.TRUNCATED if finish_reason == "length" else GenStatus.NO_CODE
            return Extraction(None, status, "the answer ends inside its thinking text")
        blocks, unclosed = fenced_blocks(text)
        code = postprocess(blocks[-1] if blocks else text).rstrip() + "\n"
        if not code.strip():
            return Extraction(None, GenStatus.NO_CODE, "no code in the answer")
        if unclosed or finish_reason == "length":
            return Extraction(code, GenStatus.TRUNCATED, "the answer was cut off before the code ended")
        return Extraction(code, GenStatus.OK)

    def null(self, task: BenchmarkTask) -> str:
        return null_solution(task.ground_truth)


def _question(task: BenchmarkTask) -> dict[str, str]:
    return {"role": "user", "content": f"{task.prompt.rstrip()}\n\n{INSTRUCTION}"}
