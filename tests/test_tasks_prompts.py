"""Prompt drafting: the paper's protocol by default, the project's additions as options,
deterministic template prompts and the checks on LLM answers.

``make_function`` is shared with the other tests_tasks_* files (imported by name).
"""

from __future__ import annotations

from datetime import date

import pytest

from dlbench.config import LLMEndpoint, PromptsConfig, load_config_file
from dlbench.records import FunctionRecord, PromptSource, task_id_for
from dlbench.standins.llm import Fault, LLMStandIn, ScriptedResponder
from dlbench.store import read_jsonl, write_jsonl
from dlbench.tasks.prompts import (
    CLASS_CONTEXT,
    PROJECT_SYSTEM_PROMPT,
    SIGNATURE,
    check_llm_text,
    describe_parameters,
    draft_prompts,
    draft_prompts_file,
    template_prompt,
)
from tests.conftest import ROOT

METHOD_SOURCE = '''    def forward(self, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Apply the layer to a batch.

        Args:
            x: array of shape (batch, features).
            mask: optional boolean mask; masked rows become zero.
        """
        hidden = np.maximum(x @ self.weight + self.bias, 0.0)
        return hidden if mask is None else np.where(mask[:, None], hidden, 0.0)
'''

FUNCTION_SOURCE = """def iou(box_a, box_b, eps=1e-9):
    intersection_width = max(0.0, min(box_a[2], box_b[2]) - max(box_a[0], box_b[0]))
    return intersection_width
"""


def make_function(
    repo: str = "owner/lib",
    path: str = "lib/layers.py",
    qualname: str = "Dense.forward",
    *,
    tests: int = 3,
    docstring: str | None = "Apply the layer to a batch.",
    last_modified: date | None = date(2024, 3, 1),
) -> FunctionRecord:
    """A function record like mining writes: a method when ``qualname`` has a dot."""
    class_name, _, name = qualname.rpartition(".")
    method = bool(class_name)
    return FunctionRecord(
        task_id=task_id_for(repo, path, qualname),
        repo=repo,
        sha="a" * 40,
        path=path,
        function=name,
        class_name=class_name or None,
        qualname=qualname,
        signature=(
            f"def {name}(self, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray"
            if method
            else f"def {name}(box_a, box_b, eps=1e-9)"
        ),
        source=METHOD_SOURCE.replace("forward", name) if method else FUNCTION_SOURCE.replace("iou", name),
        docstring=docstring,
        class_context=f"class {class_name}:\n    def __init__(self, weight, bias): ..." if method else None,
        start_line=10,
        end_line=18,
        tests=[f"tests/test_{name}.py::test_{i}" for i in range(tests)],
        first_added=date(2023, 1, 5),
        last_modified=last_modified,
    )


def test_template_prompt_states_signature_class_and_inputs_without_the_body():
    fn = make_function()
    prompt = template_prompt(fn, [SIGNATURE, CLASS_CONTEXT])
    assert "Implement the method `forward` of class `Dense` in `lib/layers.py`." in prompt
    assert (
        "Required signature (keep it exactly):\n```python\ndef forward(self, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:\n```"
        in prompt
    )
    assert "class Dense:\n    def __init__(self, weight, bias): ..." in prompt
    assert prompt.index("Required signature") < prompt.index("Class context")  # in the order asked
    assert "- x: np.ndarray" in prompt and "- mask: np.ndarray | None (default None)" in prompt
    assert "- self" not in prompt
    assert "Returns: np.ndarray" in prompt
    assert "np.maximum" not in prompt and "hidden" not in prompt


def test_default_template_has_none_of_the_projects_additions():
    fn = make_function()
    prompt = template_prompt(fn)
    assert "Required signature" not in prompt and "class Dense:" not in prompt and "```" not in prompt
    assert prompt.endswith("Returns: np.ndarray")
    assert template_prompt(fn, [CLASS_CONTEXT]).endswith("```") and "Required signature" not in template_prompt(
        fn, [CLASS_CONTEXT]
    )
    plain = make_function(qualname="iou", path="lib/boxes.py")
    assert template_prompt(plain, [CLASS_CONTEXT]) == template_prompt(plain)  # a function has no class to show


def test_template_prompt_for_a_function_without_docstring():
    fn = make_function(qualname="iou", path="lib/boxes.py", docstring=None)
    prompt = template_prompt(fn)
    assert prompt.startswith("Implement the function `iou` in `lib/boxes.py`.")
    assert "No documentation is given" in prompt
    assert "class" not in prompt
    assert describe_parameters(fn) == (["box_a", "box_b", "eps (default 1e-09)"], None)


def test_template_drafting_is_deterministic(tmp_path):
    functions = [make_function(qualname=q) for q in ("Dense.forward", "Dense.backward")] + [
        make_function(qualname="iou", path="lib/boxes.py")
    ]
    write_jsonl(tmp_path / "functions.jsonl", functions)
    cache = tmp_path / "cache"
    first = draft_prompts_file(tmp_path / "functions.jsonl", tmp_path / "a.jsonl", PromptsConfig(llm=None), cache)
    draft_prompts_file(tmp_path / "functions.jsonl", tmp_path / "b.jsonl", PromptsConfig(llm=None), cache)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert [p.task_id for p in first] == sorted(f.task_id for f in functions)
    assert {(p.source, p.model, p.status) for p in first} == {(PromptSource.TEMPLATE, None, "ok")}
    assert read_jsonl(tmp_path / "a.jsonl", type(first[0])) == first
    assert draft_prompts(list(reversed(functions)), PromptsConfig(llm=None), cache) == first


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("", "empty response"),
        ("   \n", "empty response"),
        ("I'm sorry, but I can't help with that.", "refusal"),
        ("```python\ndef forward(self, x):\n    return x\n```", "code instead of prose"),
        (
            "Implement `forward`:\n```python\nlayer.forward(x)\n```\nIt returns the activations.",
            "code instead of prose",
        ),
        ("def forward(self, x):\n    hidden = x\n    return hidden", "code instead of prose"),
        ("Compute it as hidden = np.maximum(x @ self.weight + self.bias, 0.0) and return.", "leaks the implementation"),
    ],
)
def test_unusable_llm_answers_are_recognised(answer, reason):
    problem = check_llm_text(answer, make_function(), "project")
    assert problem is not None and problem.startswith(reason)


def test_the_papers_protocol_accepts_a_prompt_that_shows_a_call():
    answer = "Implement `forward`, which applies the layer to a batch:\n```python\nlayer.forward(x, mask)\n```\nIt returns the activations."
    assert check_llm_text(answer, make_function(), "paper") is None
    assert (
        check_llm_text("```python\ndef forward(self, x):\n    return x\n```", make_function(), "paper")
        == "code instead of prose"
    )


def test_a_prose_answer_is_accepted():
    answer = (
        "Implement `Dense.forward`, which applies the dense layer with a ReLU to a batch `x` and zeroes masked rows."
    )
    assert check_llm_text(answer, make_function()) is None


# ---------------------------------------------------------------- LLM drafting over HTTP

PROSE = "Implement the forward pass of the dense layer: apply it to a batch `x` with a ReLU and zero the masked rows."
ANSWERS = {
    "def forward(": PROSE,
    "def backward(": "",
    "def iou(": "I'm sorry, but I cannot help with that request.",
    "def area(": "def area(box):\n    width = box[2] - box[0]\n    return width * (box[3] - box[1])",
}


def llm_functions() -> list[FunctionRecord]:
    return [make_function(qualname="Dense.forward"), make_function(qualname="Dense.backward")] + [
        make_function(path="lib/boxes.py", qualname=q) for q in ("iou", "area")
    ]


def test_llm_drafting_survives_faults_falls_back_and_never_pays_twice(tmp_path):
    functions = llm_functions()
    write_jsonl(tmp_path / "functions.jsonl", functions)
    with LLMStandIn(
        ScriptedResponder(ANSWERS),
        faults=[Fault("rate_limit", retry_after=0.05), Fault("server_error"), Fault("rate_limit", retry_after=0.05)],
    ) as server:
        endpoint = LLMEndpoint(
            base_url=server.base_url,
            model="draft-model",
            concurrency=2,
            max_retries=4,
            price_in_per_mtok=1.0,
            price_out_per_mtok=2.0,
        )
        cfg, cache = PromptsConfig(llm=endpoint), tmp_path / "cache"  # the paper's protocol, no additions
        first = draft_prompts_file(tmp_path / "functions.jsonl", tmp_path / "first.jsonl", cfg, cache)
        assert server.served == 4 and [r.status for r in server.log].count(200) == 4
        assert sorted(r.status for r in server.log if r.status != 200) == [429, 429, 500]
        requests = len(server.log)
        draft_prompts_file(tmp_path / "functions.jsonl", tmp_path / "rerun.jsonl", cfg, cache)
        assert len(server.log) == requests  # the rerun asked nothing
    assert (tmp_path / "first.jsonl").read_bytes() == (tmp_path / "rerun.jsonl").read_bytes()
    by_name = {p.task_id.rsplit(":", 1)[1]: p for p in first}
    forward = by_name["Dense.forward"]
    assert (forward.source, forward.model, forward.status) == (PromptSource.LLM, "draft-model", "ok")
    assert forward.prompt == PROSE and (forward.protocol, forward.additions) == ("paper", [])
    assert forward.input_tokens > 0 and forward.cost_usd == pytest.approx(
        (forward.input_tokens + 2 * forward.output_tokens) / 1e6
    )
    expected = {"Dense.backward": "empty response", "iou": "refusal", "area": "code instead of prose"}
    for name, reason in expected.items():
        record = by_name[name]
        assert (record.source, record.status) == (PromptSource.TEMPLATE, "llm_fallback")
        assert record.error.startswith(reason) and record.cache_key and record.output_tokens >= 0
        fn = next(f for f in functions if f.task_id == record.task_id)
        assert record.prompt == template_prompt(fn)


PAPER_REQUEST = (
    "Create a prompt using the provided code and its docstring, incorporating the function or class name, "
    "inputs, and outputs. 1. Code: {code} 2. Docstring: {docstring}"
)  # the paper's words, written out here so a drift in the package's copy fails this test


def test_the_default_build_sends_the_papers_template(tmp_path):
    """The default configuration, given a drafting LLM, sends exactly the paper's request
    through the openai client, and keeps the answer as the prompt with nothing appended."""
    cfg = load_config_file(ROOT / "config/config.yaml", root=ROOT).prompts
    functions = [
        make_function(qualname="Dense.forward"),
        make_function(path="lib/boxes.py", qualname="iou", docstring="Intersection over union."),
    ]
    with LLMStandIn(ScriptedResponder([PROSE])) as server:
        endpoint = LLMEndpoint(base_url=server.base_url, model="gpt-4o", api_key_env="NO_SUCH_KEY")
        records = draft_prompts(functions, cfg.model_copy(update={"llm": endpoint}), tmp_path)
        sent = {r.body["messages"][0]["content"].split("\n", 2)[0]: r.body["messages"] for r in server.log}
    forward_code = METHOD_SOURCE.replace("\n    ", "\n").strip()  # dedented
    expected = [
        [{"role": "user", "content": PAPER_REQUEST.format(code=forward_code, docstring="Apply the layer to a batch.")}],
        [
            {
                "role": "user",
                "content": PAPER_REQUEST.format(code=FUNCTION_SOURCE.strip(), docstring="Intersection over union."),
            }
        ],
    ]
    assert sorted(sent.values(), key=str) == sorted(expected, key=str)
    assert [(r.prompt, r.source, r.protocol, r.additions) for r in records] == [
        (PROSE, PromptSource.LLM, "paper", [])
    ] * 2


def test_the_projects_protocol_and_additions_are_options(tmp_path):
    cfg = PromptsConfig(protocol="project", append_signature=True, append_class_context=True)
    fn = make_function()
    with LLMStandIn(ScriptedResponder([PROSE])) as server:
        endpoint = LLMEndpoint(base_url=server.base_url, model="draft-model", api_key_env="NO_SUCH_KEY")
        [record] = draft_prompts([fn], cfg.model_copy(update={"llm": endpoint}), tmp_path)
        [request] = server.log
    system, user = request.body["messages"]
    assert system == {"role": "system", "content": PROJECT_SYSTEM_PROMPT}
    assert user["role"] == "user" and "class Dense:" in user["content"] and fn.source.rstrip() in user["content"]
    assert record.prompt.startswith(PROSE + "\n\nRequired signature (keep it exactly):")
    assert record.prompt.endswith("class Dense:\n    def __init__(self, weight, bias): ...\n```")
    assert (record.protocol, record.additions) == ("project", [SIGNATURE, CLASS_CONTEXT])
    [template] = draft_prompts([fn], cfg, tmp_path)
    assert (template.protocol, template.additions) == (
        None,
        [SIGNATURE, CLASS_CONTEXT],
    ) and "Required signature" in template.prompt
