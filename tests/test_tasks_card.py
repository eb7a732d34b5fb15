"""The dataset card says how the prompts were drafted: the paper's protocol, or how not."""

from __future__ import annotations

from dlbench.config import PromptsConfig, StorageConfig
from dlbench.records import PromptRecord, PromptSource
from dlbench.report.card import departures, render_card
from dlbench.tasks.prompts import draft_prompts
from tests.test_tasks_prompts import make_function


def drafted(source: PromptSource, protocol: str | None, additions: list[str], n: int) -> list[PromptRecord]:
    return [
        PromptRecord(
            task_id=f"t{i}",
            repo="o/r",
            prompt="p",
            source=source,
            model="gpt-4o" if protocol else None,
            protocol=protocol,
            additions=additions,
        )
        for i in range(n)
    ]


def card(prompts: list[PromptRecord]) -> str:
    return render_card([], [], [], [], [], 0.5, prompts)


def test_drafts_by_the_papers_protocol_say_so():
    text = card(drafted(PromptSource.LLM, "paper", [], 3))
    assert "These drafts follow the paper's protocol." in text
    assert "| llm | gpt-4o | paper | none | ok | 3 |" in text


def test_every_departure_is_named_with_its_count():
    prompts = drafted(PromptSource.LLM, "project", ["signature"], 2) + drafted(
        PromptSource.TEMPLATE, None, ["signature", "class_context"], 1
    )
    assert departures(prompts) == [
        "`class_context` block appended (`prompts.append_class_context`): 1",
        "`signature` block appended (`prompts.append_signature`): 3",
        "drafted with this project's instructions (`prompts.protocol: project`): 2",
        "template prompts (no drafting LLM answer): 1",
    ]
    text = card(prompts)
    assert (
        "These drafts depart from the paper's protocol:" in text
        and "- template prompts (no drafting LLM answer): 1" in text
    )
    assert "| template | - | - | signature, class_context | ok | 1 |" in text


def test_the_default_offline_build_is_a_template_departure_without_additions():
    prompts = draft_prompts(
        [make_function(), make_function(qualname="iou", path="lib/boxes.py")],
        PromptsConfig(),
        StorageConfig().llm_cache,
    )
    assert departures(prompts) == ["template prompts (no drafting LLM answer): 2"]
