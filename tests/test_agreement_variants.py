"""Prompt mutations: seeded, recorded, and never touching the signature block or the names."""

from __future__ import annotations

import pytest

from dlbench.generate.mutation_agreement import variants as v
from dlbench.llm.client import LLMClient
from dlbench.records import BenchmarkTask
from dlbench.standins.llm import LLMStandIn, ScriptedResponder

TAIL = """Required signature (keep it exactly):
```python
def step(self, grads, learning_rate=0.01, x=None):
```

`step` is a method of class `Optimizer` in `optim/sgd.py`. Class context:
```python
class Optimizer:
    def step(self, grads, learning_rate=0.01, x=None): ...
```

Return only the complete definition of `step`."""
PROMPT = f"""Implement the method `step` of class `Optimizer` in `optim/sgd.py`.

Compute the update of each parameter from its gradient. The step is scaled by ``learning_rate``.

Args:
    grads: the gradients of the loss.
    learning_rate: step size.
    x: optional input array.

Inputs:
- grads
- learning_rate (default 0.01)
- x (default None)

{TAIL}"""


def task(prompt: str = PROMPT, signature: str = "def step(self, grads, learning_rate=0.01, x=None):") -> BenchmarkTask:
    return BenchmarkTask(
        task_id="o__r:optim/sgd.py:Optimizer.step", repo="o/r", sha=None, path="optim/sgd.py", function="step",
        class_name="Optimizer", signature=signature, prompt=prompt, ground_truth="", tests=["tests/test_sgd.py::test_step"], stage=None, task=None,
        data=None, first_added=None, last_modified=None, qualname="Optimizer.step", slug="o__r", start_line=1, end_line=2,
    )  # fmt: skip


def test_variants_are_seeded_recorded_and_keep_the_tail_last():
    found = v.rule_variants(task(), 6, seed=0)
    assert found == v.rule_variants(task(), 6, seed=0)
    assert [x.prompt for x in found] != [x.prompt for x in v.rule_variants(task(), 6, seed=1)]
    assert found[0].prompt == PROMPT and found[0].source == "original" and found[0].transformations == []
    assert [x.index for x in found] == list(range(7)) and len({x.prompt for x in found}) == 7
    for variant in found[1:]:
        assert variant.source == "rules" and variant.transformations
        assert variant.prompt.endswith(TAIL)  # signature, class context and closing line verbatim, last
        assert "`step`" in variant.prompt and "`Optimizer`" in variant.prompt
    kinds = [{t.split(":")[0] for t in x.transformations} for x in found[1:]]
    assert kinds[:3] == [{"lexical"}, {"grammatical"}, {"naming"}]
    assert kinds[3] == {"lexical", "grammatical"}


def test_without_the_original():
    found = v.rule_variants(task(), 2, include_original=False)
    assert [x.index for x in found] == [1, 2]


def test_lexical_uses_the_table_and_keeps_parameter_names():
    prompt = v.Prompt.split(PROMPT)
    assert v.lexical(prompt, v.Context.of(task()), __import__("random").Random(0))
    for note in prompt.notes:
        word, new = note.removeprefix("lexical: ").split("→")
        assert new.lower() in v.SYNONYMS[word.lower()]
    assert "learning_rate" in prompt.text() and prompt.text().endswith(TAIL)


@pytest.mark.parametrize(
    ("sentence", "turned"),
    [
        ("Compute the update of ``w``.", "The update of ``w`` is computed."),
        ("Returns the scaled values.", "The scaled values are returned."),
        ("Applies a mask.", "A mask is applied."),
        ("The mean is computed.", "Compute the mean."),
        ("The scaled values are returned.", "Return the scaled values."),
        ("Inverted dropout: zero a fraction of units.", None),
        ("Compute x.", None),  # no determiner: not a simple object
    ],
)
def test_voice(sentence, turned):
    assert v._turn(sentence) == turned


def test_reordering_keeps_the_first_paragraph_and_the_tail():
    prompt = v.Prompt.split(PROMPT)
    assert v._reorder_paragraphs(prompt, __import__("random").Random(3), dry=False)
    text = prompt.text()
    assert text.startswith("Implement the method `step`") and text.endswith(TAIL)
    assert sorted(text.splitlines()) == sorted(PROMPT.splitlines())


def test_naming_renames_prose_mentions_only():
    prompt = v.Prompt.split(PROMPT)
    ctx = v.Context.of(task())
    assert ctx.params == ("grads", "learning_rate", "x") and "self" not in ctx.params
    assert v.naming(prompt, ctx, __import__("random").Random(0))
    renamed = dict(n.removeprefix("naming: ").split("→") for n in prompt.notes)
    text = "\n".join(prompt.prose)
    for old, new in renamed.items():
        assert new != old and new not in ctx.params
        assert f"- {new}" in text and f"- {old}\n" not in text and f"- {old} " not in text
    assert prompt.text().endswith(TAIL)


def test_new_names():
    assert v.new_name("x", set()) == "inputs"
    assert v.new_name("learning_rate", set()) == "learningRate"
    assert v.new_name("momentum", set()) == "momentum_value"
    assert v.new_name("x", {"inputs"}) == "inputs_"


def test_rename_line_leaves_words_and_other_spans_alone():
    assert (
        v._rename_line("Uses `x` and ``max(x, 0)``; x is an axis.", "x", "inputs")
        == "Uses `inputs` and ``max(x, 0)``; x is an axis."
    )
    assert v._rename_line("    x: the input.", "x", "inputs") == "    inputs: the input."
    assert (
        v._rename_line("Scaled by learning_rate, not learning_rate2.", "learning_rate", "lr")
        == "Scaled by lr, not learning_rate2."
    )


def test_a_prompt_with_nothing_to_change_keeps_only_the_original():
    bare = task("Finish `step`.\n\n```python\ndef step(self):\n```", "def step(self):")
    assert [x.index for x in v.rule_variants(bare, 3)] == [0]


def test_check_variant_refuses_a_changed_tail():
    with pytest.raises(v.VariantError, match="signature block"):
        v.check_variant(task(), PROMPT.replace("learning_rate=0.01", "lr=0.01"))


def test_llm_rewriter_keeps_the_tail_and_drops_bad_paraphrases(tmp_path):
    good = "Write the method `step` of `Optimizer`: update each parameter from its gradient."
    answers = ScriptedResponder([good, "```python\ndef step(): pass\n```", "Something else entirely.", good])
    with LLMStandIn(answers) as server:
        client = LLMClient(server.base_url, "standin-model", cache_dir=tmp_path)
        request = v.rewrite_request(task(), 4, seed=0)
        result = client.complete_many([request])[0]
        again = client.complete_many([request])[0]
        assert server.served == 1 and again.cached  # one request, four choices, cached for the rerun
        assert "Required signature" not in server.log[0].body["messages"][-1]["content"]  # only the prose is sent
    found = v.llm_variants(task(), result)
    assert found == v.llm_variants(task(), again) and result.input_tokens > 0
    assert [x.source for x in found] == ["original", "llm"]
    assert found[1].prompt == f"{good}\n\n{TAIL}" and found[1].transformations == ["llm: paraphrase (choice 0)"]
    assert (
        v.llm_variants(task(), None) == found[:1]
        and v.llm_variants(task(), result, include_original=False) == found[1:]
    )
