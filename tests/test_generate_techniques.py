"""Prompting techniques: message shapes and example selection."""

from __future__ import annotations

import pytest

from dlbench.generate.techniques import TechniqueError, choose_examples, messages_for
from tests.test_generate_run import make_tasks

TASKS = make_tasks(n_repos=3, per_repo=6)
STAGES = {t.task_id: t.stage for t in TASKS}


def test_zero_shot_is_the_prompt_and_the_instruction():
    task = next(t for t in TASKS if t.class_name)
    [message] = messages_for(task, "zero-shot")
    assert message["role"] == "user" and message["content"].startswith(task.prompt.rstrip())
    assert "Return only the complete function in a single ```python code block." in message["content"]
    assert f"`{task.function}` (a method of class `{task.class_name}`)" in message["content"]


def test_few_shot_draws_three_examples_from_other_repositories_seeded():
    task = TASKS[0]
    messages = messages_for(task, "few-shot", TASKS)
    assert [m["role"] for m in messages] == ["user", "assistant"] * 3 + ["user"]
    examples = choose_examples(task, "few-shot", TASKS, None, seed=0)
    assert len(examples) == 3 and all(e.slug != task.slug for e in examples)
    assert messages[1]["content"] == f"```python\n{examples[0].ground_truth.rstrip()}\n```"
    assert choose_examples(task, "few-shot", TASKS, None, seed=0) == examples
    draws = {tuple(e.task_id for e in choose_examples(task, "few-shot", TASKS, None, seed=s)) for s in range(6)}
    assert len(draws) > 1  # the seed matters
    by_run = [tuple(e.task_id for e in choose_examples(task, "few-shot", TASKS, None, seed=0, run=r)) for r in range(4)]
    assert by_run[0] == tuple(e.task_id for e in examples) and len(set(by_run)) > 1  # each run draws afresh


def test_stage_few_shot_uses_the_predicted_stage_from_other_repositories():
    task = TASKS[0]
    predicted = dict(STAGES) | {task.task_id: "evaluation"}  # a wrong prediction is followed
    examples = choose_examples(task, "stage-few-shot", TASKS, predicted, seed=0)
    assert len(examples) == 3 and all(e.stage == "evaluation" and e.slug != task.slug for e in examples)


def test_stage_few_shot_tops_up_when_the_stage_is_rare():
    task = TASKS[0]
    pool = [t for t in TASKS if t.slug == task.slug or t.stage != "training"][:-1]
    pool += [next(t for t in TASKS if t.slug != task.slug and t.stage == "training")]
    examples = choose_examples(task, "stage-few-shot", pool, dict(STAGES) | {task.task_id: "training"}, seed=0)
    assert len(examples) == 3 and examples[0].stage == "training"
    assert all(e.slug != task.slug for e in examples)


def test_unknown_technique_and_missing_stages_are_errors():
    with pytest.raises(TechniqueError, match="unknown technique"):
        messages_for(TASKS[0], "reference", TASKS)
    with pytest.raises(TechniqueError, match="predicted stages"):
        messages_for(TASKS[0], "stage-few-shot", TASKS)
