"""Draft one prompt per function under test: by an LLM or, offline, a deterministic template.

``prompts.protocol`` says what the drafting LLM is sent. ``paper`` (the default) is the
DL-Bench paper's protocol: one user message, the paper's template with the function's code
and docstring filled in (``PAPER_TEMPLATE``); the answer is the prompt. ``project`` is this
project's own system instructions (prose only, no code, at most 200 words) with the class
context of a method. Two additions of this project, off by default because the paper's
prompts have neither, append blocks to every prompt (LLM drafts and templates alike):
``append_signature`` (the exact ``def`` line, so a candidate cannot miss the signature) and
``append_class_context`` (the class skeleton of a method). Each record names its protocol
and additions, and the dataset card says which a benchmark was built with.

LLM answers that are empty, refusals, code, or copies of the implementation fall back to
the template with ``status: llm_fallback`` and the reason in ``error``; drafting never
crashes on them. A request the endpoint never answered (api_error) is no such answer: the
job fails with a summary instead, and a rerun asks again.
"""

from __future__ import annotations

import ast
import logging
import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

from dlbench.config import LLMEndpoint, PromptsConfig
from dlbench.llm.client import LLMClient, LLMResult, UnansweredRequests, count_errors
from dlbench.records import FunctionRecord, PromptRecord, PromptSource
from dlbench.store import read_jsonl, write_jsonl

log = logging.getLogger(__name__)

STATUS_OK = "ok"
STATUS_FALLBACK = "llm_fallback"

# The paper's drafting request to GPT-4o, verbatim; [CODE] and [DOCSTRING] are filled in.
PAPER_TEMPLATE = (
    "Create a prompt using the provided code and its docstring, incorporating the function or class name, "
    "inputs, and outputs. 1. Code: {code} 2. Docstring: {docstring}"
)

PROJECT_SYSTEM_PROMPT = (
    "You write task descriptions for a function-level code-generation benchmark of deep-learning "
    "code. Given a Python function or class method with its docstring, write a prompt that asks a "
    "developer to implement it. The prompt must name the function (and its class for a method), "
    "describe every input (name, type, meaning), the output (type and meaning) and the behaviour, "
    "including edge cases and errors the docstring mentions. Do NOT reveal the implementation: no "
    "code, no pseudo-code, no step-by-step algorithm copied from the body, no local variable "
    "names. Write plain prose only, at most 200 words, with no code blocks."
)

PROJECT_USER_TEMPLATE = """Write the prompt for this {kind}.

{context}Code:
```python
{source}
```"""

_REFUSAL = re.compile(
    r"^\s*(i'?m sorry|i am sorry|sorry,|i cannot|i can'?t|i am unable|i'm unable|as an ai)", re.IGNORECASE
)
_CODE_LINE = re.compile(r"^\s*(def |class |import |from \S+ import |return\b|@\w|for .+:$|if .+:$|\w+\s*=\s*\S)")
_MIN_LEAK_LEN = 25  # body lines shorter than this are too generic to count as a leak

SIGNATURE = "signature"
CLASS_CONTEXT = "class_context"


# ---------------------------------------------------------------- template


def kind_of(fn: FunctionRecord) -> str:
    return "method" if fn.class_name else "function"


def additions_of(cfg: PromptsConfig) -> list[str]:
    """The project's additions ``cfg`` appends to every prompt, in the order they are appended."""
    return [name for name, on in ((SIGNATURE, cfg.append_signature), (CLASS_CONTEXT, cfg.append_class_context)) if on]


def signature_block(fn: FunctionRecord) -> str:
    """What a candidate must match exactly: the signature, and the instruction to keep it."""
    return "\n".join(
        ["Required signature (keep it exactly):", "```python", signature_line(fn), "```", "",
         f"Return only the complete definition of `{fn.function}`."]
    )  # fmt: skip


def class_context_block(fn: FunctionRecord) -> str | None:
    """The skeleton of a method's class (None for a plain function)."""
    if not fn.class_name:
        return None
    skeleton = (fn.class_context or f"class {fn.class_name}:").rstrip()
    return f"`{fn.function}` is a method of class `{fn.class_name}` in `{fn.path}`. Class context:\n```python\n{skeleton}\n```"


def with_additions(text: str, fn: FunctionRecord, additions: Sequence[str]) -> str:
    """``text`` followed by the blocks of ``additions`` that apply to ``fn``."""
    blocks = {SIGNATURE: signature_block(fn), CLASS_CONTEXT: class_context_block(fn)}
    return "\n\n".join([text, *(block for name in additions if (block := blocks[name]))])


def signature_line(fn: FunctionRecord) -> str:
    """The signature as one ``def`` line ending in a colon."""
    sig = fn.signature.strip()
    return sig if sig.endswith(":") else sig + ":"


def describe_parameters(fn: FunctionRecord) -> tuple[list[str], str | None]:
    """Parameter descriptions (``name: annotation = default``) and the return annotation."""
    tree = _parse_signature(signature_line(fn))
    if tree is None:
        return [], None
    args = tree.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    described = [_describe_arg(a, d) for a, d in zip(positional, defaults, strict=True)]
    if args.vararg:
        described.append("*" + _describe_arg(args.vararg, None))
    described += [_describe_arg(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    if args.kwarg:
        described.append("**" + _describe_arg(args.kwarg, None))
    if fn.class_name and described and described[0].split(":")[0] in ("self", "cls"):
        described = described[1:]
    returns = ast.unparse(tree.returns) if tree.returns is not None else None
    return described, returns


def _parse_signature(line: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    try:
        module = ast.parse(line + "\n    ...\n")
    except SyntaxError:
        return None
    node = module.body[0] if module.body else None
    return node if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None


def _describe_arg(arg: ast.arg, default: ast.expr | None) -> str:
    text = arg.arg
    if arg.annotation is not None:
        text += f": {ast.unparse(arg.annotation)}"
    if default is not None:
        text += f" (default {ast.unparse(default)})"
    return text


def template_prompt(fn: FunctionRecord, additions: Sequence[str] = ()) -> str:
    """Deterministic prompt from the name, docstring and parameters (what the paper's drafts
    name: the function or class, inputs, outputs), followed by ``additions``."""
    owner = f" of class `{fn.class_name}`" if fn.class_name else ""
    parts = [f"Implement the {kind_of(fn)} `{fn.function}`{owner} in `{fn.path}`."]
    doc = (fn.docstring or "").strip()
    parts.append(
        doc
        if doc
        else f"No documentation is given; infer the behaviour of `{fn.function}` from its name, signature and the tests."
    )
    params, returns = describe_parameters(fn)
    if params:
        parts.append("Inputs:\n" + "\n".join(f"- {p}" for p in params))
    if returns:
        parts.append(f"Returns: {returns}")
    return with_additions("\n\n".join(parts), fn, additions)


# ---------------------------------------------------------------- LLM


def llm_messages(fn: FunctionRecord, protocol: str = "paper") -> list[dict[str, str]]:
    """The drafting request for one function under ``protocol`` (see the module docstring)."""
    return paper_messages(fn) if protocol == "paper" else project_messages(fn)


def paper_messages(fn: FunctionRecord) -> list[dict[str, str]]:
    """The paper's request: its template alone, as one user message (no system message)."""
    code = textwrap.dedent(fn.source).strip()  # a method's source arrives indented
    return [{"role": "user", "content": PAPER_TEMPLATE.format(code=code, docstring=(fn.docstring or "").strip())}]


def project_messages(fn: FunctionRecord) -> list[dict[str, str]]:
    """This project's request: instructions as a system message, the code and class context."""
    context = (
        f"It is a method of class `{fn.class_name}`:\n```python\n{fn.class_context}\n```\n\n"
        if fn.class_name and fn.class_context
        else ""
    )
    user = PROJECT_USER_TEMPLATE.format(kind=kind_of(fn), context=context, source=fn.source.rstrip())
    return [{"role": "system", "content": PROJECT_SYSTEM_PROMPT}, {"role": "user", "content": user}]


def check_llm_text(text: str | None, fn: FunctionRecord, protocol: str = "paper") -> str | None:
    """Why an LLM answer cannot be used as a prompt, or None when it can. The project's
    instructions forbid code blocks; the paper's do not (a drafted prompt may show a call),
    so under ``paper`` only an answer that is mostly code counts as code."""
    body = (text or "").strip()
    if not body:
        return "empty response"
    if _REFUSAL.search(body):
        return "refusal: " + body.splitlines()[0][:120]
    if (protocol == "project" and "```" in body) or _mostly_code(body):
        return "code instead of prose"
    leaked = _leaked_line(body, fn)
    if leaked:
        return f"leaks the implementation: {leaked[:80]!r}"
    return None


def _mostly_code(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("```")]
    return sum(bool(_CODE_LINE.match(line)) for line in lines) * 2 > len(lines)


def _leaked_line(text: str, fn: FunctionRecord) -> str | None:
    """A line of the function body (not its signature or docstring) copied into the answer."""
    doc = fn.docstring or ""
    signature = signature_line(fn)
    for line in fn.source.splitlines():
        stripped = line.strip()
        if len(stripped) >= _MIN_LEAK_LEN and stripped not in doc and stripped not in signature and stripped in text:
            return stripped
    return None


def draft_prompts(functions: Sequence[FunctionRecord], cfg: PromptsConfig, llm_cache: str | Path) -> list[PromptRecord]:
    """One PromptRecord per function, sorted by task id: LLM drafts (answers cached under
    ``llm_cache``) or template prompts."""
    ordered = sorted(functions, key=lambda f: f.task_id)
    if cfg.llm is None:
        return [_template_record(fn, additions_of(cfg)) for fn in ordered]
    return _llm_records(ordered, cfg, cfg.llm, llm_cache)


def _template_record(fn: FunctionRecord, additions: list[str], **extra) -> PromptRecord:
    prompt = template_prompt(fn, additions)
    return PromptRecord(
        task_id=fn.task_id, repo=fn.repo, prompt=prompt, source=PromptSource.TEMPLATE, additions=additions, **extra
    )


def _llm_records(
    functions: list[FunctionRecord], cfg: PromptsConfig, endpoint: LLMEndpoint, llm_cache: str | Path
) -> list[PromptRecord]:
    if not functions:
        return []
    client = LLMClient.from_endpoint(endpoint, llm_cache)
    results = client.chat_many([llm_messages(fn, cfg.protocol) for fn in functions])
    usage = client.usage
    log.info(
        "LLM: %d requests, %d cache hits, %d+%d tokens, $%.4f",
        usage.requests,
        usage.cache_hits,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_usd,
    )
    _check_answered(results, endpoint.model)
    records = [
        _record_from_result(fn, result, endpoint.model, cfg) for fn, result in zip(functions, results, strict=True)
    ]
    fallbacks = sum(r.status == STATUS_FALLBACK for r in records)
    if fallbacks:
        log.warning("%d of %d LLM drafts fell back to the template (see 'error')", fallbacks, len(records))
    return records


def _check_answered(results: Sequence[LLMResult], model: str) -> None:
    """An unanswered request is an endpoint fault, not a bad draft: no template stands in
    for it. The job fails, writing nothing; answers are cached, so a rerun asks only the rest."""
    failed = [r.error for r in results if r.status != STATUS_OK]
    if failed:
        raise UnansweredRequests(
            f"{len(failed)} of {len(results)} prompt drafts got no answer from {model} (api_error): "
            f"{count_errors(failed)}. Not written; the answered ones are cached: rerun to ask again for the rest."
        )


def _record_from_result(fn: FunctionRecord, result: LLMResult, model: str, cfg: PromptsConfig) -> PromptRecord:
    usage = {
        "cache_key": result.cache_key,
        "input_tokens": result.input_tokens or 0,
        "output_tokens": result.output_tokens or 0,
        "cost_usd": result.cost_usd or 0.0,
    }
    if result.finish_reasons[:1] == ["length"]:
        problem = "truncated answer (max_tokens reached)"
    else:
        problem = check_llm_text(result.text, fn, cfg.protocol)
    additions = additions_of(cfg)
    if problem:
        return _template_record(fn, additions, model=model, status=STATUS_FALLBACK, error=problem, **usage)
    prompt = with_additions(result.text.strip(), fn, additions)
    return PromptRecord(
        task_id=fn.task_id, repo=fn.repo, prompt=prompt, source=PromptSource.LLM, model=model,
        protocol=cfg.protocol, additions=additions, **usage,
    )  # fmt: skip


def draft_prompts_file(
    functions_path: str | Path, out_path: str | Path, cfg: PromptsConfig, llm_cache: str | Path
) -> list[PromptRecord]:
    """Rule entry point: ``results/mine/{repo}/functions.jsonl`` → ``results/prompts/{repo}.jsonl``."""
    records = draft_prompts(read_jsonl(functions_path, FunctionRecord), cfg, llm_cache)
    write_jsonl(out_path, records)
    how = f"llm, {cfg.protocol} protocol" if cfg.llm else "template"
    log.info(
        "drafted %d prompts (%s; additions: %s) into %s",
        len(records),
        how,
        ", ".join(additions_of(cfg)) or "none",
        out_path,
    )
    return records
