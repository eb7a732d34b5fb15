"""Prompt mutations: seeded, rule-based lexical, grammatical and naming transformations.

A prompt is split into *prose* and a protected *tail*: the tail starts at the paragraph
holding the first fenced code block (the "Required signature" block, the class context
and the closing instruction) and is never changed, so the required signature, function
name and class name reach the model verbatim and the tail stays last. Inside the prose,
backtick spans are protected too, except that a span naming exactly a parameter is
renamed by the naming mutation (the signature keeps the real name).

- lexical: synonyms from a small curated table of programming/ML words;
- grammatical: active ↔ passive voice for simple one-clause sentences ("Compute the sum."
  ↔ "The sum is computed."), or reordering of sentences within a paragraph or of the
  paragraphs after the first one;
- naming: parameters mentioned in the prose get new names (a table of ML names, else
  snake_case → camelCase, else a ``_value`` suffix).

Variant ``i`` (1-based) uses ``lexical``, ``grammatical``, ``naming`` in turn, then pairs
and all three; a kind with nothing to change hands over to the next. Every variant records
the transformations that made it; a variant equal to an earlier one is dropped.
``rewrite_request`` asks a model for paraphrases of the prose (sent through the cached LLM
client) and ``llm_variants`` turns its answer into variants, the tail re-attached verbatim.
"""

from __future__ import annotations

import ast
import itertools
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from dlbench.llm.client import ChatRequest, LLMResult
from dlbench.records import BenchmarkTask, PromptVariant

LEXICAL, GRAMMATICAL, NAMING = "lexical", "grammatical", "naming"
KINDS = (LEXICAL, GRAMMATICAL, NAMING)
PLANS = [(LEXICAL,), (GRAMMATICAL,), (NAMING,), (LEXICAL, GRAMMATICAL), (GRAMMATICAL, NAMING), (NAMING, LEXICAL)]
RESEEDS = 3  # attempts at a variant unlike the earlier ones before it is dropped

SYNONYMS: dict[str, list[str]] = {
    "compute": ["calculate", "evaluate"], "computes": ["calculates", "evaluates"], "computed": ["calculated"],
    "calculate": ["compute"], "calculates": ["computes"], "calculated": ["computed"],
    "implement": ["write", "code"], "create": ["build", "construct"], "creates": ["builds", "constructs"],
    "given": ["provided", "supplied"], "apply": ["perform"], "applies": ["performs"],
    "gradient": ["derivative"], "gradients": ["derivatives"], "loss": ["cost"],
    "normalize": ["rescale"], "normalizes": ["rescales"], "normalized": ["rescaled"],
    "elementwise": ["per element"], "element-wise": ["per element"],
    "sample": ["example"], "samples": ["examples"], "probability": ["likelihood"], "probabilities": ["likelihoods"],
    "matrix": ["2-D array"], "vector": ["1-D array"], "array": ["ndarray"], "arrays": ["ndarrays"],
    "randomly": ["at random"], "initialize": ["initialise", "set up"], "initialized": ["initialised"],
    "each": ["every"], "fraction": ["proportion", "share"], "function": ["routine"], "method": ["member function"],
    "returned": ["given back"], "unchanged": ["untouched", "as is"], "mean": ["average"], "average": ["mean"],
    "shape": ["dimensions"], "check": ["verify"], "checks": ["verifies"], "split": ["divide"], "splits": ["divides"],
    "largest": ["biggest", "greatest"], "smallest": ["least"], "predicted": ["estimated"],
    "prediction": ["estimate"], "predictions": ["estimates"], "label": ["target"], "labels": ["targets"],
    "image": ["picture"], "images": ["pictures"], "produce": ["generate"], "produces": ["generates"],
    "use": ["employ"], "uses": ["employs"], "output": ["result"], "outputs": ["results"],
    "rescale": ["scale"], "drop": ["discard"],
}  # fmt: skip
# Verbs whose one-clause sentences may change voice: base form → past participle.
PARTICIPLES: dict[str, str] = {
    "compute": "computed", "calculate": "calculated", "return": "returned", "apply": "applied", "create": "created",
    "initialize": "initialized", "normalize": "normalized", "build": "built", "scale": "scaled", "clip": "clipped",
    "update": "updated", "shuffle": "shuffled", "pad": "padded", "encode": "encoded", "decode": "decoded",
    "flatten": "flattened", "resize": "resized", "crop": "cropped", "convert": "converted", "reshape": "reshaped",
    "load": "loaded", "save": "saved", "count": "counted", "rescale": "rescaled", "evaluate": "evaluated",
    "sample": "sampled", "split": "split", "merge": "merged", "sort": "sorted", "remove": "removed",
}  # fmt: skip
RENAMES: dict[str, str] = {
    "x": "inputs", "y": "targets", "lr": "learning_rate", "n": "count", "k": "top_k", "w": "weights", "b": "bias",
    "p": "prob", "eps": "epsilon", "dim": "axis", "axis": "dim", "logits": "scores", "rate": "drop_rate",
    "seed": "random_seed", "labels": "targets", "preds": "predictions", "training": "is_training",
    "img": "image", "image": "img", "text": "document", "tokens": "words", "batch": "minibatch",
}  # fmt: skip

_FENCE = re.compile(r"^\s*```")
_TICKS = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`])")
_ACTIVE = re.compile(r"^([A-Z][a-z]+) ((?:the|a|an) .+)\.$")
_PREPOSITIONS = {"of", "in", "to", "with", "from", "for", "along", "by", "on", "over", "at", "into", "across"}
_PASSIVE = re.compile(r"^((?:The|A|An) .+) (?:is|are) ([a-z]+)\.$")


class VariantError(ValueError):
    """A mutation changed what the prompt must keep (a bug in a rule, never expected)."""


@dataclass
class Prompt:
    """A prompt as changeable prose lines and a protected tail (joined back with newlines)."""

    prose: list[str]
    tail: list[str]
    notes: list[str] = field(default_factory=list)

    @classmethod
    def split(cls, text: str) -> Prompt:
        lines = text.split("\n")
        fence = next((i for i, line in enumerate(lines) if _FENCE.match(line)), None)
        if fence is None:
            return cls(lines, [])
        start = fence
        while start > 0 and lines[start - 1].strip():
            start -= 1
        return cls(lines[:start], lines[start:])

    def text(self) -> str:
        return "\n".join(self.prose + self.tail)


@dataclass(frozen=True)
class Context:
    """What a mutation of one task must know: names to keep and parameters to rename."""

    protected: frozenset[str]
    params: tuple[str, ...]

    @classmethod
    def of(cls, task: BenchmarkTask) -> Context:
        keep = {task.function, task.class_name or "", "self", "cls"} - {""}
        params = tuple(p for p in signature_params(task.signature) if p not in keep)
        return cls(frozenset(keep), params)


def signature_params(signature: str) -> list[str]:
    """Parameter names of a ``def`` line (empty when it does not parse)."""
    line = signature.strip().rstrip(":") + ":"
    try:
        node = ast.parse(line + "\n    ...\n").body[0]
    except (SyntaxError, IndexError):
        return []
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return []
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return names


# ------------------------------------------------------------------ prose helpers


def map_free_text(line: str, change: Callable[[str], str]) -> str:
    """Apply ``change`` to the parts of ``line`` outside backtick spans."""
    out, end = [], 0
    for match in _TICKS.finditer(line):
        out += [change(line[end : match.start()]), match.group(0)]
        end = match.end()
    return "".join(out + [change(line[end:])])


def _match_case(word: str, template: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    return word[0].upper() + word[1:] if template[0].isupper() else word


def _paragraphs(lines: list[str]) -> list[tuple[int, int]]:
    """(start, end) line ranges of the non-blank paragraphs."""
    spans, start = [], None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            spans.append((start, i))
            start = None
    return spans


def _is_plain(line: str) -> bool:
    """A line of running text (not a list item, an indented block or a section label)."""
    stripped = line.strip()
    return (
        bool(stripped) and line == line.lstrip() and not stripped.startswith(("-", "*")) and not stripped.endswith(":")
    )


def _sentences(text: str) -> list[str]:
    """Sentences of one line; backtick spans are masked so their dots never split."""
    masked = _TICKS.sub(lambda m: "x" * len(m.group(0)), text)
    cuts = [m.end() for m in _SENTENCE_END.finditer(masked)]
    bounds = [0, *cuts, len(text)]
    return [text[a:b].strip() for a, b in itertools.pairwise(bounds) if text[a:b].strip()]


# ------------------------------------------------------------------ lexical


def lexical(prompt: Prompt, ctx: Context, rng: random.Random) -> bool:
    """Replace about half of the table words found in the prose (at least one) by a synonym."""
    keep = {w.lower() for w in ctx.protected | set(ctx.params)}
    sites = []
    for n, line in enumerate(prompt.prose):
        map_free_text(line, lambda text, n=n: _collect_words(text, n, keep, sites))
    if not sites:
        return False
    chosen = set(rng.sample(range(len(sites)), max(1, len(sites) // 2)))
    picks = {i: rng.choice(SYNONYMS[sites[i][1].lower()]) for i in sorted(chosen)}
    counter = iter(range(len(sites)))

    def swap(text: str) -> str:
        def one(match: re.Match) -> str:
            word = match.group(0)
            if word.lower() in keep or word.lower() not in SYNONYMS:
                return word
            i = next(counter)
            return _match_case(picks[i], word) if i in picks else word

        return _WORD.sub(one, text)

    prompt.prose = [map_free_text(line, swap) for line in prompt.prose]
    prompt.notes += [f"{LEXICAL}: {sites[i][1]}→{picks[i]}" for i in sorted(picks)]
    return True


def _collect_words(text: str, line_no: int, keep: set[str], sites: list[tuple[int, str]]) -> str:
    for match in _WORD.finditer(text):
        word = match.group(0)
        if word.lower() in SYNONYMS and word.lower() not in keep:
            sites.append((line_no, word))
    return text


# ------------------------------------------------------------------ grammatical


def grammatical(prompt: Prompt, ctx: Context, rng: random.Random) -> bool:
    """Change the voice of simple sentences, or reorder sentences / paragraphs (seeded choice)."""
    options = [op for op in (_voice, _reorder_sentences, _reorder_paragraphs) if op(prompt, rng, dry=True)]
    if not options:
        return False
    return rng.choice(options)(prompt, rng, dry=False)


def _voice(prompt: Prompt, rng: random.Random, dry: bool) -> bool:
    found = False
    for n, line in enumerate(prompt.prose):
        if not _is_plain(line) or n == _first_text_line(prompt.prose):
            continue  # the opening instruction ("Implement the function …") keeps its form
        parts = _sentences(line)
        turned = [_turn(s) for s in parts]
        if any(t is not None for t in turned):
            found = True
            if not dry:
                prompt.prose[n] = " ".join(t or s for s, t in zip(parts, turned))
                prompt.notes += [f"{GRAMMATICAL}: voice {s!r}→{t!r}" for s, t in zip(parts, turned) if t]
    return found


def _turn(sentence: str) -> str | None:
    """Active imperative/third person ↔ passive, for one-clause sentences; None otherwise."""
    if ":" in sentence or ";" in sentence or len(sentence) > 200:
        return None
    active = _ACTIVE.match(sentence)
    if active:
        base = _verb_base(active.group(1).lower())
        if base is None:
            return None
        obj = active.group(2)
        head = _head_noun(obj)
        verb = "are" if head.endswith("s") and not head.endswith("ss") else "is"
        return f"{obj[0].upper()}{obj[1:]} {verb} {PARTICIPLES[base]}."
    passive = _PASSIVE.match(sentence)
    if passive:
        base = next((b for b, pp in PARTICIPLES.items() if pp == passive.group(2)), None)
        if base is None:
            return None
        obj = passive.group(1)
        return f"{base.capitalize()} {obj[0].lower()}{obj[1:]}."
    return None


def _head_noun(phrase: str) -> str:
    """Last word before the first preposition (``the scaled values of x`` → ``values``)."""
    words = phrase.split()
    cut = next((i for i, w in enumerate(words) if w in _PREPOSITIONS), len(words))
    return words[max(cut - 1, 0)].strip("`,.")


def _verb_base(word: str) -> str | None:
    for base in PARTICIPLES:
        if word in (base, base + "s", base + "es") or (base.endswith("y") and word == base[:-1] + "ies"):
            return base
    return None


def _first_text_line(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if line.strip()), None)


def _reorder_sentences(prompt: Prompt, rng: random.Random, dry: bool) -> bool:
    first = _first_text_line(prompt.prose)
    lines = [n for n, line in enumerate(prompt.prose) if n != first and _is_plain(line) and len(_sentences(line)) > 1]
    if dry or not lines:
        return bool(lines)
    n = rng.choice(lines)
    parts = _sentences(prompt.prose[n])
    order = _derangement(len(parts), rng)
    prompt.prose[n] = " ".join(parts[i] for i in order)
    prompt.notes.append(f"{GRAMMATICAL}: sentences of line {n + 1} reordered {order}")
    return True


def _reorder_paragraphs(prompt: Prompt, rng: random.Random, dry: bool) -> bool:
    spans = _paragraphs(prompt.prose)[1:]  # the opening instruction stays first
    if dry or len(spans) < 2:
        return len(spans) >= 2
    order = _derangement(len(spans), rng)
    blocks = [prompt.prose[a:b] for a, b in spans]
    start, end = spans[0][0], spans[-1][1]
    body: list[str] = []
    for k, i in enumerate(order):
        body += ([""] if k else []) + blocks[i]
    prompt.prose = prompt.prose[:start] + body + prompt.prose[end:]
    prompt.notes.append(f"{GRAMMATICAL}: paragraphs after the first reordered {order}")
    return True


def _derangement(n: int, rng: random.Random) -> list[int]:
    """A seeded order of ``n`` items that differs from the identity (n ≥ 2)."""
    order = list(range(n))
    while order == list(range(n)):
        rng.shuffle(order)
    return order


# ------------------------------------------------------------------ naming


def naming(prompt: Prompt, ctx: Context, rng: random.Random) -> bool:
    """Rename a seeded subset (at least one) of the parameters the prose mentions."""
    mentioned = [p for p in ctx.params if any(_rename_line(line, p, p + "_") != line for line in prompt.prose)]
    if not mentioned:
        return False
    chosen = sorted(rng.sample(mentioned, max(1, (len(mentioned) + 1) // 2)), key=mentioned.index)
    taken = set(ctx.params) | ctx.protected
    for name in chosen:
        new = new_name(name, taken)
        taken.add(new)
        prompt.prose = [_rename_line(line, name, new) for line in prompt.prose]
        prompt.notes.append(f"{NAMING}: {name}→{new}")
    return True


def new_name(name: str, taken: set[str]) -> str:
    """A new identifier for ``name``: the table, camelCase, or a suffix; never one in ``taken``."""
    if name in RENAMES:
        new = RENAMES[name]
    elif "_" in name.strip("_"):
        head, *rest = name.split("_")
        new = head + "".join(part.capitalize() for part in rest if part)
    else:
        new = name + "_value"
    while new in taken:
        new += "_"
    return new


def _rename_line(line: str, old: str, new: str) -> str:
    """``old`` → ``new`` in backtick spans naming exactly it, at an item's start, and (for
    names that cannot be English words: with ``_`` or a digit) as a whole word anywhere."""

    def in_ticks(match: re.Match) -> str:
        return match.group(0).replace(old, new) if match.group(2) == old else match.group(0)

    line = _TICKS.sub(in_ticks, line)
    item = re.match(rf"^(\s*(?:[-*]\s+)?){re.escape(old)}(?=\s*(?:[:(]|$))", line)
    if item:
        line = item.group(1) + new + line[item.end() :]
    if re.search(r"[_\d]", old):
        pattern = re.compile(rf"(?<![\w.`]){re.escape(old)}(?![\w`])")
        line = map_free_text(line, lambda text: pattern.sub(new, text))
    return line


# ------------------------------------------------------------------ variants

MUTATIONS = {LEXICAL: lexical, GRAMMATICAL: grammatical, NAMING: naming}


def plan(index: int) -> tuple[str, ...]:
    """The kinds of variant ``index`` (1-based): each alone, then pairs, then all three."""
    return PLANS[index - 1] if index <= len(PLANS) else KINDS


def mutate(task: BenchmarkTask, kinds: tuple[str, ...], seed: str) -> Prompt:
    """The task's prompt with ``kinds`` applied; a kind with nothing to change hands over."""
    prompt = Prompt.split(task.prompt)
    ctx = Context.of(task)
    fallbacks = [k for k in KINDS if k not in kinds]
    applied = 0
    for kind in kinds:
        applied += MUTATIONS[kind](prompt, ctx, random.Random(f"{seed}:{kind}"))
    for kind in fallbacks:
        if applied:
            break
        applied += MUTATIONS[kind](prompt, ctx, random.Random(f"{seed}:{kind}"))
    return prompt


def check_variant(task: BenchmarkTask, text: str) -> None:
    """Raise ``VariantError`` when a variant lost the tail, the function or the class name."""
    tail = "\n".join(Prompt.split(task.prompt).tail)
    if tail and not text.endswith(tail):
        raise VariantError(f"{task.task_id}: the signature block changed or is not last")
    for name in (task.function, task.class_name):
        if name and name in task.prompt and name not in text:
            raise VariantError(f"{task.task_id}: the variant lost the name {name!r}")


def rule_variants(task: BenchmarkTask, count: int, seed: int = 0, include_original: bool = True) -> list[PromptVariant]:
    """The original (index 0, when included) and up to ``count`` distinct rule-based variants."""
    out = [PromptVariant(index=0, prompt=task.prompt, transformations=[], source="original")]
    seen = {task.prompt}
    for index in range(1, count + 1):
        for attempt in range(RESEEDS):
            prompt = mutate(task, plan(index), f"{seed}:{task.task_id}:{index}:{attempt}")
            text = prompt.text()
            if text not in seen:
                check_variant(task, text)
                seen.add(text)
                out.append(PromptVariant(index=index, prompt=text, transformations=prompt.notes, source="rules"))
                break
    return out if include_original else out[1:]


# ------------------------------------------------------------------ LLM rewriter

REWRITE_SYSTEM = (
    "You rewrite programming task descriptions. Keep the meaning, every name in backticks and "
    "every number exactly; change wording, sentence structure and order. Return only the "
    "rewritten description, without code blocks."
)


def rewrite_messages(prose: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": REWRITE_SYSTEM}, {"role": "user", "content": prose.strip()}]


def rewrite_request(task: BenchmarkTask, count: int, seed: int = 0) -> ChatRequest:
    """One request for ``count`` paraphrases of the task's prose (``n`` choices)."""
    prose = "\n".join(Prompt.split(task.prompt).prose)
    return ChatRequest(rewrite_messages(prose), {"n": count, "seed": seed})


def llm_variants(task: BenchmarkTask, result: LLMResult | None, include_original: bool = True) -> list[PromptVariant]:
    """The original and the paraphrases in ``result`` (the answer to ``rewrite_request``),
    the tail re-attached verbatim. A choice that is empty, holds a code fence, drops the
    function name or repeats an earlier one is left out."""
    prompt = Prompt.split(task.prompt)
    out = [PromptVariant(index=0, prompt=task.prompt, transformations=[], source="original")]
    seen = {task.prompt}
    for choice, text in enumerate(result.texts if result is not None else []):
        variant = _paraphrase(task, prompt, text)
        if variant is not None and variant not in seen:
            seen.add(variant)
            note = f"llm: paraphrase (choice {choice})"
            out.append(PromptVariant(index=len(out), prompt=variant, transformations=[note], source="llm"))
    return out if include_original else out[1:]


def _paraphrase(task: BenchmarkTask, prompt: Prompt, text: str) -> str | None:
    body = text.strip()
    prose = "\n".join(prompt.prose)
    if not body or "```" in body or (task.function in prose and task.function not in body):
        return None
    full = "\n".join([body, "", *prompt.tail]) if prompt.tail else body
    check_variant(task, full)
    return full
