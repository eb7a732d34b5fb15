"""Prompting techniques: the chat messages sent for one task.

``zero-shot`` is the paper's vanilla prompt: the task's prompt and an instruction to
return only the complete function in a python code block. ``few-shot`` prefixes three
solved examples drawn at random (seeded per task and run: each run of a model draws its
examples afresh, as the paper averaged two draws) from OTHER repositories;
``stage-few-shot`` draws them from tasks of the task's *predicted* pipeline stage (also
from other repositories), topping up from any stage when fewer exist. Examples are prior
user/assistant turns, so the model sees each solution answered in the requested format.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from dlbench.records import BenchmarkTask

ZERO_SHOT = "zero-shot"
FEW_SHOT = "few-shot"
STAGE_FEW_SHOT = "stage-few-shot"
REFERENCE = "reference"  # the one technique of the reference models gold, null, mutant (common.smk)
LLM_TECHNIQUES = (ZERO_SHOT, FEW_SHOT, STAGE_FEW_SHOT)
N_EXAMPLES = 3

Messages = list[dict[str, str]]


class TechniqueError(ValueError):
    """An unknown technique, or one that lacks what it needs (e.g. predicted stages)."""


def instruction(task: BenchmarkTask) -> str:
    where = f" (a method of class `{task.class_name}`)" if task.class_name else ""
    return (
        f"Write the complete Python function `{task.function}`{where} described above. "
        "Return only the complete function in a single ```python code block."
    )


def user_turn(task: BenchmarkTask) -> dict[str, str]:
    return {"role": "user", "content": f"{task.prompt.rstrip()}\n\n{instruction(task)}"}


def answer_turn(task: BenchmarkTask) -> dict[str, str]:
    return {"role": "assistant", "content": f"```python\n{task.ground_truth.rstrip()}\n```"}


def messages_for(
    task: BenchmarkTask,
    technique: str,
    pool: Sequence[BenchmarkTask] = (),
    predicted_stages: Mapping[str, str | None] | None = None,
    seed: int = 0,
    run: int = 0,
) -> Messages:
    """The chat messages of ``technique`` for ``task`` in ``run``; ``pool`` is every benchmark task."""
    examples = choose_examples(task, technique, pool, predicted_stages, seed, run)
    turns: Messages = []
    for example in examples:
        turns += [user_turn(example), answer_turn(example)]
    return [*turns, user_turn(task)]


def choose_examples(
    task: BenchmarkTask,
    technique: str,
    pool: Sequence[BenchmarkTask],
    predicted_stages: Mapping[str, str | None] | None,
    seed: int,
    run: int = 0,
) -> list[BenchmarkTask]:
    """The few-shot examples of ``task`` (none for zero-shot), seeded by task id and run."""
    if technique == ZERO_SHOT:
        return []
    if technique not in LLM_TECHNIQUES:
        raise TechniqueError(f"unknown technique {technique!r} (known: {', '.join(LLM_TECHNIQUES)})")
    others = sorted((t for t in pool if t.slug != task.slug), key=lambda t: t.task_id)
    # run 0 keeps the seed string it always had, so cached answers of earlier single runs stay valid
    rng = random.Random(f"{seed}:{technique}:{task.task_id}" + (f":run{run}" if run else ""))
    if technique == FEW_SHOT:
        return rng.sample(others, min(N_EXAMPLES, len(others)))
    if predicted_stages is None:
        raise TechniqueError("stage-few-shot needs predicted stages (results/stages/predictions.jsonl)")
    stage = predicted_stages.get(task.task_id)
    same = [t for t in others if stage is not None and t.stage == stage]
    chosen = rng.sample(same, min(N_EXAMPLES, len(same)))
    taken = {t.task_id for t in chosen}
    rest = [t for t in others if t.task_id not in taken]
    return chosen + rng.sample(rest, min(N_EXAMPLES - len(chosen), len(rest)))
