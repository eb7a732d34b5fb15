"""Pydantic models of every artifact passed between stages (the ground floor).

Each JSON Lines artifact holds one model instance per line; each model carries a
``schema_version`` so readers can refuse files written by an incompatible version.
Field names listed in DESIGN.md "Contracts" are fixed; add fields, never rename them.
The file formats are documented in docs/ARTIFACTS.md.
"""

from __future__ import annotations

from datetime import date, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION = 1


def repo_slug(full_name: str) -> str:
    """File-system and wildcard-safe name of a repository: ``owner/name`` → ``owner__name``."""
    return full_name.replace("/", "__")


def task_id_for(full_name: str, path: str, qualname: str) -> str:
    """Stable task id: ``owner__name:path/to/module.py:Class.method``."""
    return f"{repo_slug(full_name)}:{path}:{qualname}"


class Record(BaseModel):
    """Base of every artifact record: strict about unknown fields, versioned."""

    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION


# ---------------------------------------------------------------- collect


class RepoMeta(Record):
    """One repository as seen by the crawl (a subset of GitHub's repository object)."""

    full_name: str
    description: str | None = None
    language: str | None = None
    topics: list[str] = Field(default_factory=list)
    stars: int = 0
    forks: int = 0
    created_at: datetime | None = None
    pushed_at: datetime | None = None
    updated_at: datetime | None = None
    license: str | None = None  # SPDX id
    archived: bool = False
    fork: bool = False
    default_branch: str = "main"
    clone_url: str
    html_url: str | None = None
    found_by: list[str] = Field(default_factory=list)  # topics whose search returned it


class Selection(Record):
    """Selection verdict for one repository, with a reason for every keep and drop."""

    full_name: str
    slug: str
    keep: bool
    reasons: list[str]
    clone_url: str
    sha: str | None = None  # pinned commit (config/repos.yaml or resolved at clone time)
    license: str | None = None
    stars: int = 0
    forced: Literal["include", "exclude"] | None = None
    local_path: str | None = None  # repositories already on disk skip the clone
    as_of: date | None = None  # pinned by day: the default branch's last commit on or before it


class CloneStatus(StrEnum):
    OK = "ok"
    CLONE_ERROR = "clone_error"


class CloneRecord(Record):
    """A checkout on disk at a pinned commit (``results/repos/{repo}.json``)."""

    full_name: str
    slug: str
    clone_url: str
    path: str
    sha: str | None
    status: CloneStatus
    error: str | None = None
    license: str | None = None
    reused: bool = False  # an existing checkout at the right commit was kept (no new clone)
    missing_files: list[str] = Field(default_factory=list)  # blobs the source lacks (a mirror without large files)


# ---------------------------------------------------------------- mine


class TestKind(StrEnum):
    PYTEST_FUNCTION = "pytest_function"
    PYTEST_METHOD = "pytest_method"
    UNITTEST_METHOD = "unittest_method"


class TestCase(Record):
    """One test case as a pytest node id (parametrized cases collapse to their function)."""

    __test__ = False  # not a pytest class despite its name
    repo: str
    file: str
    node_id: str
    kind: TestKind
    class_name: str | None = None
    name: str
    line: int
    parametrized: bool = False
    skipped: str | None = None  # why the project never runs it (a skip mark's reason, its commands' -m)


class CallRecord(Record):
    """Repository functions one test reaches (qualified as ``path:qualname``)."""

    repo: str
    node_id: str
    calls: list[str]
    direct: list[str] | None = None  # transitive reach: what the test's own code calls (None: all of calls)


class FunctionRecord(Record):
    """A function or method under test, extracted with its context."""

    task_id: str
    repo: str
    sha: str | None
    path: str
    function: str
    class_name: str | None
    qualname: str
    signature: str
    source: str
    docstring: str | None
    class_context: str | None
    start_line: int
    end_line: int
    tests: list[str]
    first_added: date | None = None
    last_modified: date | None = None
    decorators: list[str] = Field(default_factory=list)


class SkipKind(StrEnum):
    FILE = "file"  # nothing of the file is mined: unreadable, undecodable or unparsable
    TEST_CODE = "test_code"  # its definitions are mined, but its test bodies are not followed
    FUNCTION = "function"  # a function under test that could not become a task


class SkippedRecord(Record):
    """Something of a repository mining could not take, and why."""

    repo: str
    path: str
    kind: SkipKind
    qualname: str | None = None  # for kind function
    reason: str


class TraceRecord(Record):
    """Repository functions one test executed when it ran with the tracer (``path:qualname``;
    a parametrized test's variants merged under the function's node id)."""

    repo: str
    node_id: str
    outcome: str  # passed, failed, skipped, error, timeout (the worst of its variants)
    variants: int = 1
    seconds: float
    called: list[str]  # called by the test body (and its helpers)
    direct: list[str]  # called by test code: the body, setup and the fixtures it uses
    executed: list[str]  # executed at any depth, fixtures included


class UntracedTask(Record):
    """A task the dynamic check dropped: its listed tests ran but never executed it."""

    task_id: str
    repo: str
    path: str
    qualname: str
    tests: list[str]
    traced: list[str]  # the listed tests that ran with the tracer
    reason: str


# ---------------------------------------------------------------- tasks


class PromptSource(StrEnum):
    LLM = "llm"
    TEMPLATE = "template"


class PromptRecord(Record):
    """A drafted prompt for one task (``results/prompts/{repo}.jsonl``)."""

    task_id: str
    repo: str
    prompt: str
    source: PromptSource
    model: str | None = None
    cache_key: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    status: str = "ok"
    error: str | None = None
    protocol: Literal["paper", "project"] | None = None  # the drafting LLM's instructions (None: a template prompt)
    additions: list[str] = Field(default_factory=list)  # blocks appended to the prompt: "signature", "class_context"


class MergedLabel(Record):
    """Annotators' labels for one task after majority vote (``results/labels/merged.jsonl``)."""

    task_id: str
    stage: str | None
    task: str | None
    data: str | None
    keep: bool
    discard_reason: str | None = None
    prompt: str
    prompt_source: Literal["draft", "edited"]
    votes: dict[str, list[str | None]] = Field(default_factory=dict)  # dimension → one vote per annotator_ids
    annotators: int = 0  # annotators with a row for this task
    annotator_ids: list[str] = Field(default_factory=list)  # order of every ``votes`` list


class BenchmarkTask(Record):
    """One benchmark task (``results/benchmark/dlbench.jsonl``); field names are a contract."""

    task_id: str
    repo: str
    sha: str | None
    path: str
    function: str
    class_name: str | None
    signature: str
    prompt: str
    ground_truth: str
    tests: list[str] = Field(min_length=1)  # a task without tests cannot be evaluated
    stage: str | None
    task: str | None
    data: str | None
    first_added: date | None
    last_modified: date | None
    qualname: str
    slug: str
    start_line: int
    end_line: int
    docstring: str | None = None
    class_context: str | None = None
    license: str | None = None
    prompt_source: str = "draft"


# ---------------------------------------------------------------- generate / evaluate


class GenStatus(StrEnum):
    OK = "ok"
    NO_CODE = "no_code"
    SYNTAX_ERROR = "syntax_error"
    TRUNCATED = "truncated"
    API_ERROR = "api_error"


class Generation(Record):
    """One candidate for one task (``results/generations/{model}/{technique}/{repo}.jsonl``)."""

    task_id: str
    model: str
    technique: str
    run: int = 0
    sample: int = 0
    code: str | None
    raw: str | None = None
    status: GenStatus = GenStatus.OK
    detail: str | None = None
    cache_key: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0


class PromptVariant(BaseModel):
    """One prompt of the mutation_agreement technique: the original or a mutation of it."""

    model_config = ConfigDict(extra="forbid")
    index: int  # 0: the original prompt
    prompt: str
    transformations: list[str] = Field(default_factory=list)  # e.g. "lexical: compute→calculate"
    source: Literal["original", "rules", "llm"] = "rules"


class ModelTestCase(BaseModel):
    """One model-written test: a pytest function around one assertion (node id known in advance)."""

    model_config = ConfigDict(extra="forbid")
    node_id: str
    assertion: str
    setup: list[str] = Field(default_factory=list)  # imports and assignments written before it


class AgreementCandidate(BaseModel):
    """One candidate of one variant and its outcome on every model test (pass matrix row)."""

    model_config = ConfigDict(extra="forbid")
    variant: int
    sample: int
    status: GenStatus
    code: str | None
    detail: str | None = None
    passed: list[bool] = Field(default_factory=list)  # one per model test, in test order
    run_status: str | None = None  # the sandbox verdict's status against the model tests


class AgreementGroup(BaseModel):
    """Candidates with one identical pass pattern (or identical normalised code)."""

    model_config = ConfigDict(extra="forbid")
    members: list[int]  # candidate indices
    tests_passed: int
    score: int


class AgreementRecord(Record):
    """Evidence of one task's mutation_agreement choice (``results/agreement/{model}/{repo}.jsonl``)."""

    task_id: str
    model: str
    run: int = 0
    variants: list[PromptVariant]
    tests: list[ModelTestCase]
    tests_detail: str | None = None  # why there are no (or few) model tests
    candidates: list[AgreementCandidate]
    groups: list[AgreementGroup]  # ranked, best first
    chosen: int | None  # index into candidates
    rule: str  # dual_agreement, code_agreement (no_tests / all_failing) or no_candidate


class StagePrediction(Record):
    """Predicted pipeline stage of one task (``results/stages/predictions.jsonl``) or of one
    prompt of another benchmark (``results/stages/benchmarks.jsonl``).

    A labelled task is predicted by the classifier of the cross-validation fold that held it
    out (never trained on its own label); other prompts by the classifier trained on every label.
    """

    task_id: str  # for another benchmark: its prompt's id
    repo: str  # slug; for another benchmark: its name
    stage: str | None  # the annotators' label, when there is one
    predicted: str | None  # None when no other repository has labelled tasks
    probability: float | None = None


class StageReport(Record):
    """Cross-validated evaluation of the stage classifier (``results/stages/report.json``)."""

    embedding: str
    classifier: str
    n_tasks: int
    n_labelled: int
    n_repos: int
    labels: list[str]
    macro_f1: float | None  # over labelled tasks, each predicted by the fold that held it out
    accuracy: float | None
    note: str | None = None
    weighted_f1: float | None = None  # pooled: every out-of-fold prediction at once, F1 per stage weighted by support
    folds: int | None = None  # folds actually run (fewer than asked when labels are few)
    training: dict[str, int | float | str] = Field(default_factory=dict)  # epochs, learning rate, batch size, split...
    # the paper's figure: each fold's weighted F1 on the tasks it held out, their mean and standard deviation
    fold_weighted_f1: list[float] = Field(default_factory=list)
    weighted_f1_mean: float | None = None
    weighted_f1_std: float | None = None  # population (numpy's default, ddof=0) over the folds


class StageCheck(Record):
    """Accuracy of the stage classifier's predictions on another benchmark, from a person's
    checks of a sample of them (``results/stages/check.jsonl``; the paper: 100 DS-1000 checks,
    95.0 ± 5.3% at 99% confidence)."""

    benchmark: str
    population: int  # the benchmark's predictions the sample was drawn from
    sampled: int  # rows on the sheet
    checked: int  # rows whose ``correct`` cell was filled
    correct: int
    accuracy: float | None  # correct / checked
    confidence: float
    z: float
    margin: float | None  # z * sqrt(p (1 - p) / n): the normal approximation's half-width
    margin_fpc: float | None  # times sqrt((N - n) / (N - 1)): drawn without replacement from N predictions
    ci_low: float | None  # accuracy -/+ margin_fpc, within [0, 1]
    ci_high: float | None


class StageModelInfo(Record):
    """What a saved stage classifier is (``results/stages/model/classifier.json``)."""

    encoder: str
    labels: list[str]  # the linear head's classes, in output order
    max_length: int
    pooling: Literal["mean", "pooler"] = "mean"  # what the head reads (stages.pooling, resolved)
    training: dict[str, int | float | str] = Field(default_factory=dict)


class EvalStatus(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"
    TIMEOUT = "timeout"
    NO_CODE = "no_code"
    SYNTAX_ERROR = "syntax_error"
    PATCH_ERROR = "patch_error"
    SANDBOX_VIOLATION = "sandbox_violation"
    IMAGE_ERROR = "image_error"
    INFRA_ERROR = "infra_error"
    API_ERROR = "api_error"  # the endpoint never answered (generation api_error): not the model's failure


class TestOutcome(StrEnum):
    __test__ = False
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    MISSING = "missing"
    XFAIL = "xfail"  # expected failure (xfail/xpass): never a pass
    DESELECTED = "deselected"  # removed by the project's own configuration (conftest, ``-m``/``-k`` in addopts)


class Evaluation(Record):
    """Verdict for one candidate (``results/evaluations/{model}/{technique}/{repo}.jsonl``)."""

    task_id: str
    model: str
    technique: str
    run: int = 0
    sample: int = 0
    status: EvalStatus
    passed: bool
    tests: dict[str, TestOutcome]
    duration_s: float
    detail: str | None = None
    backend: str = "local"
    exception: str | None = None  # first failing test's exception type and message
    causes: dict[str, str] = Field(default_factory=dict)  # node id (or case id) → why it did not pass, in words
    # Items that ran under a listed id without being it (parametrized cases, methods of a
    # listed class) → outcome: how a task keeps the cases of a test gold ran only in part.
    cases: dict[str, TestOutcome] = Field(default_factory=dict)
    # Node id (a listed test or a case of one) → seconds its setup, call and teardown took:
    # gold's are what ``evaluate.test_budget_s`` spends.
    durations: dict[str, float] = Field(default_factory=dict)
    # What candidate code was seen doing (reading the task's tests, replacing library functions,
    # registering hooks, code from writable places): gold's are what other models may also do.
    observed: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _passed_means_pass(self) -> Evaluation:
        if self.passed != (self.status == EvalStatus.PASS):
            raise ValueError(f"passed={self.passed} contradicts status {self.status.value}")
        return self


class Prediction(BaseModel):
    """A candidate produced outside the workflow (the predictions file contract)."""

    model_config = ConfigDict(extra="ignore")
    task_id: str
    code: str
    sample: int = 0
    model: str = "external"


# ---------------------------------------------------------------- report


class TableRow(Record):
    """One row of ``results/tables.csv`` (long format; column names are a contract)."""

    model: str
    technique: str
    slice: str
    dimension: Literal["overall", "stage", "task", "data"]
    category: str
    metric: str
    value: float
    n_tasks: int
    n_excluded: int = 0  # candidates of the row's tasks left out as infrastructure faults (not scored)
    # Uncertainty over tasks (dlbench.report.uncertainty): standard error of the mean and a
    # percentile-bootstrap interval, each task's runs kept inside it; empty below two tasks.
    stderr: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None


TABLE_COLUMNS = [
    "model", "technique", "slice", "dimension", "category", "metric", "value", "n_tasks", "n_excluded",
    "stderr", "ci_low", "ci_high",
]  # fmt: skip


class ManifestImage(Record):
    """An evaluation image a run's candidates ran in (from ``results/images/{repo}.json``)."""

    tag: str | None
    image_id: str | None
    base_image: str
    python: str | None = None  # the Python it was built on, where the record says


class RunManifest(Record):
    """What one run of the tables was made from (``results/manifest.json``, and a copy in
    ``results/runs/{run_id}/`` beside that run's tables): enough to say what was run."""

    run_id: str  # <finished, UTC, %Y%m%dT%H%M%SZ>-<config_digest[:8]>
    dlbench_version: str
    dlbench_commit: str | None  # the workflow's git HEAD; None outside a git checkout
    dlbench_dirty: bool | None  # uncommitted changes to tracked files
    started_at: datetime  # when the workflow invocation that made the tables began
    finished_at: datetime  # when the tables were written
    config_digest: str  # sha256 of the resolved config below
    config: dict  # the resolved config (every default filled in)
    models: dict[str, dict]  # each generated model's settings (a subset of config, for readers)
    dataset: str  # the benchmark file
    dataset_sha256: str
    n_tasks: int
    evaluations: dict[str, str]  # evaluation file -> sha256
    images: dict[str, ManifestImage]  # repository slug -> image
    python: str  # the interpreter that made the tables
    platform: str


class FailureLabel(Record):
    """A failing candidate's category in the paper's failure taxonomy (its Table 6): the
    automatic first pass (``results/failures/auto.jsonl``) or the annotators' majority
    (``results/failures/merged.jsonl``); vocabularies in ``dlbench.report.failures``."""

    candidate_id: str  # model/technique/run/sample/task_id
    task_id: str
    model: str
    technique: str
    run: int = 0
    sample: int = 0
    status: str
    category: str | None  # None: the evidence does not decide it (left for people) or a tie
    dl_subtype: str | None = None  # under category (failures.PARENT); "Not DL-related"; None: nobody said
    source: Literal["auto", "annotators", "none"]
    evidence: str = ""  # why the automatic pass chose it, or the annotators' notes
    # category / dl_subtype → one vote per annotator_ids
    votes: dict[str, list[str | None]] = Field(default_factory=dict)
    annotator_ids: list[str] = Field(default_factory=list)


class ComparedTask(Record):
    """One task of a benchmark under comparison with its measures (``results/compare/tasks.csv``)."""

    benchmark: str
    task_id: str
    loc: int | None  # None: the solution does not parse
    cyclomatic: int | None
    cognitive: int | None
    tokens: int  # distinct preprocessed tokens of prompt and solution (dlbench/report/compare.py)
    keyword_tokens: int  # of which contain a DL or ML keyword
    dl_tokens: int  # of which contain a deep-learning keyword
    ml_tokens: int  # of which contain a machine-learning keyword
    token_ratio: float | None  # keyword_tokens / tokens: the paper's per-task DL/ML token ratio (None: no token)


class Similarity(Record):
    """Mean cosine similarity of two benchmarks' prompt or code embeddings (``results/compare/similarity.csv``)."""

    kind: Literal["prompt", "code"]
    encoder: str  # the model that embedded them, in words (compare.code_encoder for code)
    benchmark: str
    other: str
    mean_cosine: float  # mean over all pairs (a benchmark with itself: distinct pairs)
    centroid_cosine: float  # cosine of the two mean embeddings


# ---------------------------------------------------------------- DS-1000


class Ds1000Problem(Record):
    """One DS-1000 problem in its released form (``xlangai/DS-1000``, ``data/ds1000.jsonl.gz``),
    as the DS-1000 track runs it (``results/ds1000/problems.jsonl``).

    ``code_context`` is a Python program defining ``test_execution(solution)`` (and, for some
    problems, ``test_string(solution)``): it puts the solution into its ``exec_context`` at
    ``[insert]``, runs it and compares what it computed; the problem passes when they return."""

    task_id: str  # <library>/<problem_id>, as the comparison's loader names DS-1000 problems
    library: str
    problem_id: int
    perturbation_type: str | None = None  # Origin, Surface, Semantic, Difficult-Rewrite
    prompt: str
    reference_code: str
    code_context: str
    metadata: dict = Field(default_factory=dict)  # the released metadata, as it came

    def has_test_string(self) -> bool:
        """The official evaluation calls ``test_string`` where the code context mentions it."""
        return "test_string(" in self.code_context


class Ds1000Evidence(Record):
    """What one DS-1000 candidate's verdict was made from (``results/ds1000/evidence/...json``)."""

    key: str  # hash of what decides the verdict (problem, code, image, runner, limits): a rerun reuses it
    solution: str | None
    reply: dict | None  # the runner's reply (outcome, test calls, output's head and tail), None when it never ran
    evaluation: Evaluation


# ---------------------------------------------------------------- published tasks


class PublishedTask(Record):
    """One task file the DL-Bench authors published, resolved against a checkout
    (``results/published/import.jsonl``; the imported tasks are BenchmarkTask records)."""

    source: str  # the task file's name
    repo: str | None  # None: no checkout has the linked commit
    path: str
    ref: str  # the link's commit id, or "master" (the default branch when they published)
    commit: str | None = None  # the linked commit in the checkout
    line: int | None = None
    qualname: str | None = None  # the function at that line (or named by the prompt) at ``commit``
    stage: str | None = None  # their labels, normalised to the project's vocabularies
    task: str | None = None
    data: str | None = None
    labels_raw: dict[str, str] = Field(default_factory=dict)
    prompt: str
    status: Literal["imported", "no_tests", "unresolved"]
    reason: str = ""
    tests: int = 0
    task_id: str | None = None


class AuthorsTask(Record):
    """One of the DL-Bench authors' tasks in one of its published forms, resolved at the
    pinned commit, with their tests and gold result beside ours (``results/authors/tasks.jsonl``)."""

    form: Literal["named", "taxonomy", "dleval"]
    source_id: str  # DLBench/N, Taxonomy/<file stem> or the task file's name
    repo_name: str  # as the authors name the repository
    repo: str | None  # owner/name; None: not reachable here
    function: str
    path: str | None = None
    qualname: str | None = None  # at the pinned commit; None: not there (reason)
    status: Literal["present", "unresolved", "unreachable"]
    reason: str = ""
    located_by: str = ""  # how the function was found: named file, reference similarity, link, shared test ids
    authors_tests: list[str] = Field(default_factory=list)  # the test ids they ran it against
    authors_gold: str | None = None  # their harness's gold run: pass, fail, error
    authors_passed: int | None = None
    authors_failed: int | None = None
    mined_task_id: str | None = None  # the task this project's mining made of it (None: not found)
    mined_tests: list[str] = Field(default_factory=list)


# ---------------------------------------------------------------- images


class ImageStatus(StrEnum):
    OK = "ok"
    IMAGE_ERROR = "image_error"


class ImageRecord(Record):
    """A per-project evaluation image (``results/images/{repo}.json``)."""

    repo: str  # slug
    sha: str
    base_image: str  # as configured (name or id), or the older Python's base the project needed
    base_image_id: str | None = None  # what it resolved to when built
    tag: str | None  # dlbench/project-<slug>:<hash12>; None when the base image is missing
    image_id: str | None = None
    recipe_hash: str | None = None
    status: ImageStatus
    error: str | None = None
    build_log: str
    build_seconds: float = 0.0
    reused: bool = False
    environment: Environment | None = None  # how the dependencies were found, resolved and repaired
    framework_image: str | None = None  # the shared framework layer it builds on, if any
    size_bytes: int | None = None
    extensions: str | None = None  # the checkout's own extension modules: built in place, or why not


class DeclaredRequirement(Record):
    """One dependency a project declares, or that its tests import, with where it was found."""

    spec: str  # a PEP 508 requirement
    name: str  # normalised distribution name
    source: str  # file (and section) or ``import <module> (<test file>)``
    group: str  # runtime, test, dev, ci, extra:<name>, group:<name>, import, repair, harness
    direct_url: str | None = None  # installed from this URL (a git branch): the index's releases stand in
    name_from_url: bool = False  # the name is the URL's repository's: a guess the index must confirm


class DroppedRequirement(Record):
    spec: str
    source: str
    reason: str


class RepairStep(Record):
    """A distribution added after the built image could not import a module its tests need,
    or pinned below the release that removed a name gold's tests use (``spec``); or a Debian
    package added for a shared library the system lacks (``debian``)."""

    round: int
    module: str  # the module, or the shared library's file name (``libgomp.so.1``)
    distribution: str  # the Python distribution, or the Debian package (``libgomp1``)
    reason: str
    spec: str | None = None  # the requirement added when it is not the bare distribution: ``numpy<2.4``
    debian: bool = False  # a Debian package installed with the project layer (images/libraries.py)


class Environment(Record):
    """A project's test environment: what it declares, what was installed, and why."""

    exclude_newer: datetime | None = None  # resolved as of the pinned commit's date
    # later dates for single distributions: those the project installs from a git branch,
    # whose first release after the commit stands in for the branch (deps.resolve)
    exclude_newer_package: dict[str, datetime] = Field(default_factory=dict)
    python_version: str
    platform: str
    python_tried: list[str] = Field(default_factory=list)  # each Python tried, what it loses (images/pythons.py)
    python_lost: list[str] = Field(default_factory=list)  # runtime and test requirements no configured Python keeps
    requirements: list[DeclaredRequirement] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    dropped: list[DroppedRequirement] = Field(default_factory=list)
    repairs: list[RepairStep] = Field(default_factory=list)
    lock: list[str] = Field(default_factory=list)  # name==version of every package installed
    frameworks: list[str] = Field(default_factory=list)  # the lock's framework pins (shared layer)
    framework_preferred: bool = False  # pins taken from an existing framework layer
    unresolved: list[str] = Field(default_factory=list)  # modules still missing after the repairs
    # shared libraries the system still lacks after the repairs (no package of its sources has them)
    unresolved_libraries: list[str] = Field(default_factory=list)


ImageRecord.model_rebuild()  # Environment is defined after it
