"""The ``dlbench`` command line, for work outside Snakemake and for scripted checks."""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import os
import sys
from pathlib import Path
from typing import TypeVar, get_args

from pydantic import BaseModel

from dlbench.config import Config, ConfigError, MineConfig, load_config_file
from dlbench.store import ArtifactError

log = logging.getLogger("dlbench")
S = TypeVar("S", bound=BaseModel)


def _config(args: argparse.Namespace) -> Config:
    """``--config``, validated (its keys, not the workflow's input files: a command reads only
    its sections), or the defaults."""
    return load_config_file(args.config, check_files=False) if args.config else Config()


def _given(section: S, **options: object) -> S:
    """``section`` with the options given on the command line (None: not given) over it,
    validated as the config file is: the command line overrides the file."""
    given = {key: value for key, value in options.items() if value is not None}
    return type(section).model_validate(section.model_dump() | given) if given else section


def _mine_settings(args: argparse.Namespace, mine: MineConfig) -> MineConfig:
    """The ``mine`` section with ``_mine_options`` over it."""
    return _given(
        mine, min_tests=getattr(args, "min_tests", None), tested_by=args.tested_by, reach=args.reach,
        test_helpers=args.test_helpers, max_tests=args.max_tests,
    )  # fmt: skip


def _mine(args: argparse.Namespace) -> int:
    from dlbench.mine.api import mine_checkout

    config = _config(args)
    cfg = _mine_settings(args, config.mine)
    if cfg.dynamic_check:
        log.warning("mine.dynamic_check is the workflow's trace_tests rule (a run in the project's image): "
                    "dlbench mine runs the static stages only")  # fmt: skip
    out = mine_checkout(
        Path(args.repo).resolve(), Path(args.out), config.storage.parse_cache, sha=args.sha, name=args.name,
        min_tests=cfg.min_tests, cfg=cfg,
    )  # fmt: skip
    log.info("mined with min_tests %d, tested_by %s, reach %s, test_helpers %s, max_tests %d",
             cfg.min_tests, cfg.tested_by, cfg.reach, cfg.test_helpers, cfg.max_tests)  # fmt: skip
    print(out)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from dlbench.harness.evaluate import InfrastructureFaults, refuse_infrastructure_faults
    from dlbench.report.render import scores_summary
    from dlbench.standalone import WORK_DIR, Places, Subset, evaluate_exported

    config = _config(args)
    config = config.model_copy(update={"report": _given(config.report, k=args.k)})
    places = Places(
        work=Path(args.work) if args.work else WORK_DIR, repos_from=Path(args.repos_from) if args.repos_from else None,
        evidence=Path(args.evidence) if args.evidence else None,
    )  # fmt: skip
    seed = config.evaluate.sample_seed if args.seed is None else args.seed
    subset = Subset(args.limit or 0, args.task_ids or (), args.repos or (), seed)
    gold, null = (Path(path) if path else None for path in (args.gold, args.null))
    done = evaluate_exported(
        Path(args.tasks), Path(args.predictions), Path(args.out), args.backend, args.jobs, config, places, subset, gold,
        null,
    )  # fmt: skip
    results = done.evaluations
    passed = sum(r.passed for r in results)
    drawn = f" (of {done.chosen} tasks drawn)" if done.chosen is not None else ""
    print(
        f"{passed}/{len(results)} candidates passed{drawn}; records in {args.out}, evidence in {places.evidence_root()}"
    )
    if not done.table.empty:
        print()
        print(scores_summary(done.table))
    for line in done.notes(config.report.k):
        print(line)
    try:
        refuse_infrastructure_faults(results)  # the workflow rule's test: such a run is not complete
    except InfrastructureFaults as exc:
        print(f"dlbench: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    return 0


def _run(args: argparse.Namespace) -> int:
    from dlbench.run import ModelRequest, RunError, TaskRequest, run

    request = ModelRequest(args.model, args.name, args.base_url, args.api_key_env, args.temperature, args.n, args.runs)
    tasks = TaskRequest(args.limit, args.task_ids or (), args.repos or (), args.seed)
    try:
        return run(
            Path(args.workdir), Path(args.config), request, tasks, args.techniques, args.cores,
            Path(args.overlay_dir) if args.overlay_dir else None, args.dry_run, args.snakemake_args,
            command=["dlbench", *args.argv],
        )  # fmt: skip
    except RunError as exc:
        print(f"dlbench: {exc}", file=sys.stderr)
        return 2


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _run_parser(sub: argparse._SubParsersAction) -> None:
    from typing import get_args

    from dlbench.config import Technique

    run = sub.add_parser(
        "run",
        help="score a model in one command: the workflow on a config made of these options, then its tables",
        description="Score a model with the workflow (snakemake results/tables.csv) in one command: the options "
        "become a config overlay, written as the run's resolved config under results/configs/, and the overall and "
        "per-stage scores are printed at the end. Snakemake options go after '--' (e.g. -- --rerun-incomplete).",
    )
    run.add_argument(
        "--model", required=True, help="a model id at an OpenAI-compatible endpoint, or a key of the config's models:"
    )
    run.add_argument("--name", help="its key under models: and in results/ (default: the model id, made file-safe)")
    run.add_argument("--base-url", help="OpenAI-compatible endpoint (default: api.openai.com)")
    run.add_argument("--api-key-env", help="environment variable holding the API key (default: OPENAI_API_KEY)")
    run.add_argument(
        "--techniques", nargs="+", choices=get_args(Technique), metavar="TECHNIQUE",
        help=f"prompting techniques ({', '.join(get_args(Technique))}; default: the config's generate.techniques)",
    )  # fmt: skip
    run.add_argument("--n", type=_positive, help="samples per task (pass@k needs n >= k; default 1)")
    run.add_argument("--temperature", type=float, help="sampling temperature (default 0)")
    run.add_argument("--runs", type=_positive, help="independent runs (seeds) of every task (default 1)")
    _subset_arguments(run, "(evaluate.sample_limit, task_ids, repos, sample_seed: default 0)")
    run.add_argument("--config", default="config/config.yaml", help="base config file (default: config/config.yaml)")
    run.add_argument("--cores", type=_positive, default=os.cpu_count() or 1, help="snakemake --cores (default: all)")
    run.add_argument("--dry-run", action="store_true", help="plan only (snakemake --dry-run)")
    run.add_argument("--workdir", default=".", help="the project folder, holding the Snakefile (default: .)")
    run.add_argument("--overlay-dir", help="where the run's config is written (default: results/configs)")
    run.set_defaults(func=_run, snakemake_args=[])


def _prune_images(args: argparse.Namespace) -> int:
    from dlbench.images.build import prune_unrecorded

    removed = prune_unrecorded(Path(args.records))
    print(f"removed {len(removed)} image tag(s) not named in {args.records}: {' '.join(removed) or '-'}")
    return 0


def _import_published(args: argparse.Namespace) -> int:
    from collections import Counter

    from dlbench.tasks.published import import_published_files

    cfg = _config(args)
    min_tests = args.min_tests or cfg.published.min_tests
    out = Path(args.out)
    result = import_published_files(
        args.tasks, args.repos, args.work, out / "dlbench.jsonl", out / "import.jsonl", _mine_settings(args, cfg.mine),
        cfg.storage.parse_cache, min_tests,
    )  # fmt: skip
    counts = Counter(row.status for row in result.rows)
    print(f"{len(result.rows)} task files: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())))
    print(
        f"{len(result.tasks)} benchmark records in {out / 'dlbench.jsonl'}; what became of each file: {out / 'import.jsonl'}"
    )
    return 0


def _import_authors(args: argparse.Namespace) -> int:
    from dlbench.tasks.authors import import_authors_files

    aliases = _config(args).authors.aliases
    out = Path(args.out)
    done = import_authors_files(
        args.source, args.dleval, aliases, sorted(Path(args.repos).glob("*.json")),
        sorted(Path(args.mined).glob("*/functions.jsonl")), out / "work",
        out / "tasks.jsonl", out / "dlbench.jsonl", out / "repos.csv",
    )  # fmt: skip
    present = sum(r.status == "present" for r in done.rows)
    print(
        f"{len(done.rows)} authors' tasks, {present} present at the pins, {len(done.tasks)} benchmark records in {out}"
    )
    return 0


def _compare(args: argparse.Namespace) -> int:
    from dlbench.report.compare import compare_benchmarks

    cfg = _given(_config(args).compare, perplexity=args.perplexity, seed=args.seed, code_encoder=args.code_encoder)
    try:
        compare_benchmarks(_sources(args, cfg.benchmarks), Path(args.out), cfg.perplexity, cfg.seed, cfg.code_encoder)
    except ValueError as exc:  # a file in the wrong format, or fewer than two benchmarks
        print(f"dlbench: {exc}", file=sys.stderr)
        return 2
    print(f"tasks.csv, similarity.csv, summary.md, tsne_prompt.png, tsne_code.png in {args.out}")
    return 0


def _classify_stages(args: argparse.Namespace) -> int:
    from dlbench.generate.classifier import classify_prompts
    from dlbench.report.paper_tables import benchmark_prompts

    sources = _sources(args, _config(args).compare.benchmarks)
    if not sources:
        print(
            "dlbench: no benchmark to classify: give --benchmark, or --config with compare.benchmarks", file=sys.stderr
        )
        return 2
    predictions = classify_prompts(Path(args.model), benchmark_prompts(sources), Path(args.out), args.threads)
    print(f"{len(predictions)} prompts labelled with their predicted stage in {args.out}")
    return 0


def _benchmark_source(spec: str):
    """``NAME:FORMAT:PATH`` → a comparison source."""
    from dlbench.report.compare import Source

    parts = spec.split(":", 2)
    if len(parts) != 3 or not all(parts):
        raise argparse.ArgumentTypeError(f"expected NAME:FORMAT:PATH, got {spec!r}")
    return Source(*parts)


def _sources(args: argparse.Namespace, configured: list) -> list:
    """The ``--benchmark`` files, else the config's ``compare.benchmarks``."""
    from dlbench.report.compare import Source

    return args.benchmark or [Source(b.name, b.format, b.path) for b in configured]


def _benchmark_argument(parser: argparse.ArgumentParser, how_many: str) -> None:
    parser.add_argument(
        "--benchmark", action="append", metavar="NAME:FORMAT:PATH", type=_benchmark_source,
        help=f"a benchmark file (FORMAT: ds1000, aicodereval, dlbench); {how_many} (default: the config's "
        "compare.benchmarks)",
    )  # fmt: skip


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def _choices(section: type[BaseModel], key: str) -> tuple[str, ...]:
    return get_args(section.model_fields[key].annotation)


def _mine_options(parser: argparse.ArgumentParser) -> None:
    """The ``mine`` keys that decide which functions become tasks and with which tests; each
    overrides the ``--config`` file's (default: its value, else the config's default)."""
    parser.add_argument(
        "--tested-by", choices=_choices(MineConfig, "tested_by"),
        help="which tests count for a function: reached, called or focused (mine.tested_by; default focused)",
    )  # fmt: skip
    parser.add_argument(
        "--reach", choices=_choices(MineConfig, "reach"),
        help="direct: functions test code calls; transitive: also the repository functions they call "
        "(mine.reach; default direct)",
    )  # fmt: skip
    parser.add_argument(
        "--test-helpers", action=argparse.BooleanOptionalAction, default=None,
        help="functions of test helper modules are task candidates too (mine.test_helpers; default no)",
    )  # fmt: skip
    parser.add_argument(
        "--max-tests", type=_non_negative, metavar="N",
        help="a task keeps at most N of the tests reaching it, 0: all (mine.max_tests; default 0)",
    )  # fmt: skip


def _subset_arguments(parser: argparse.ArgumentParser, where: str) -> None:
    """The tasks a run or an evaluation takes: --limit or --task-ids, --repos, --seed."""
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--limit", type=_positive, metavar="N",
        help=f"a seeded sample of N tasks, stratified by pipeline stage and repository {where}",
    )  # fmt: skip
    which.add_argument("--task-ids", nargs="+", metavar="ID", help="only these tasks")
    parser.add_argument("--repos", nargs="+", metavar="OWNER/NAME", help="only these repositories' tasks (and images)")
    parser.add_argument("--seed", type=int, help="seed of the --limit sample")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dlbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"dlbench {importlib.metadata.version('dlbench')}")
    sub = parser.add_subparsers(dest="command", required=True)

    mine = sub.add_parser("mine", help="find tests, call graph and functions under test in a checkout")
    mine.add_argument("--repo", required=True, help="checkout on disk")
    mine.add_argument("--sha", help="commit to mine (default: the checkout's HEAD)")
    mine.add_argument("--name", help="owner/name for task ids (default: the folder name)")
    mine.add_argument("--out", required=True, help="output folder (tests.jsonl, calls.jsonl, functions.jsonl)")
    mine.add_argument(
        "--min-tests", type=_positive, help="tests a function needs to become a task (mine.min_tests; default 3)"
    )
    _mine_options(mine)
    mine.add_argument(
        "--config", help="config file: its mine section (the options above override it) and storage.parse_cache"
    )
    mine.set_defaults(func=_mine)

    ev = sub.add_parser(
        "evaluate", help="evaluate a predictions file against the benchmark",
        description="Evaluate a predictions file against the benchmark, in any folder: each repository is the "
        "workflow's checkout (results/repos) when run in the workflow's folder, else checked out at the tasks' "
        "commit from --repos-from or GitHub into --work; its image is built (or reused) for it. Prints pass@k "
        "overall and per pipeline stage.",
    )  # fmt: skip
    ev.add_argument("--tasks", required=True, help="the benchmark: results/benchmark/dlbench.jsonl, or an export's")
    ev.add_argument("--predictions", required=True, help="JSON Lines: task_id, code, [sample], [model]")
    ev.add_argument("--out", required=True, help="evaluation records (JSON Lines)")
    ev.add_argument("--backend", choices=["auto", "docker", "local"], default="auto")
    ev.add_argument(
        "--gold", metavar="FILE",
        help="gold's evaluation records of these tasks (an earlier `dlbench evaluate` of the reference, or the "
        "workflow's results/evaluations/gold/): the other models are graded on the tests gold kept, within its time "
        "limits, and what the project's own code was seen doing under gold is not held against them",
    )  # fmt: skip
    ev.add_argument(
        "--null", metavar="FILE",
        help="null's evaluation records of these tasks (graded with --gold and no --null): with evaluate.test_budget_s "
        "the other models run the kept tests within the budget, those null fails first; without it, every kept test",
    )  # fmt: skip
    ev.add_argument("--jobs", type=int, default=2)
    ev.add_argument(
        "--config", help="config file: its evaluate (limits, base image), images, storage (download cache) and "
        "report (k, intervals) sections",
    )  # fmt: skip
    ev.add_argument(
        "--repos-from", metavar="DIR",
        help="the repositories: git bundles (NAME.bundle, owner+name.bundle, owner__name.bundle), bare mirrors "
        "(owner+name/repo, owner/name) or checkouts (NAME/, owner__name/); a repository not there is cloned from "
        "GitHub",
    )  # fmt: skip
    ev.add_argument(
        "--work", metavar="DIR",
        help="where checkouts (repos/) and image records (images/) go, reused by the next run (default: dlbench-work)",
    )  # fmt: skip
    ev.add_argument(
        "--evidence", metavar="DIR",
        help="per-candidate evidence (default: results/evidence in the workflow's folder, else WORK/evidence)",
    )  # fmt: skip
    _subset_arguments(ev, "(as dlbench run's; seed default: the config's evaluate.sample_seed)")
    ev.add_argument(
        "--k", nargs="+", type=_positive, metavar="K",
        help="pass@k values, reported where every task has k samples or more (default: the config's report.k, 1 3 5)",
    )  # fmt: skip
    ev.set_defaults(func=_evaluate)

    imp = sub.add_parser("import-published", help="turn the DL-Bench authors' task files into benchmark records")
    imp.add_argument("--tasks", required=True, help="folder of their task files (the DL-Bench release's dleval folder)")
    imp.add_argument("--repos", required=True, help="folder of NAME.bundle (+ NAME.shamap.tsv) or NAME/ checkouts")
    imp.add_argument("--work", required=True, help="where bundles are cloned (kept and reused)")
    imp.add_argument("--out", required=True, help="output folder (dlbench.jsonl, import.jsonl)")
    imp.add_argument(
        "--min-tests", type=_positive,
        help="tests a published function needs to become a record (published.min_tests; default 1)",
    )  # fmt: skip
    _mine_options(imp)
    imp.add_argument(
        "--config", help="config file: its mine section sets how tests are counted (the options above override it), "
        "published.min_tests and storage.parse_cache",
    )  # fmt: skip
    imp.set_defaults(func=_import_published)

    auth = sub.add_parser("import-authors", help="the DL-Bench authors' tasks at this build's pins, beside mining's")
    auth.add_argument(
        "--source", required=True, help="their repository (alirezadaghigh99/DL-Bench): checkout or git dir"
    )
    auth.add_argument("--dleval", help="their release's task files: folder, zip, or the git dir holding the zip")
    auth.add_argument("--repos", default="results/repos", help="clone records (results/repos/<slug>.json)")
    auth.add_argument("--mined", default="results/mine", help="mined functions (results/mine/<slug>/functions.jsonl)")
    auth.add_argument("--out", required=True, help="output folder (tasks.jsonl, dlbench.jsonl, repos.csv)")
    auth.add_argument("--config", help="config file whose 'authors.aliases' name repositories their files rename")
    auth.set_defaults(func=_import_authors)

    cmp = sub.add_parser("compare", help="the paper's comparisons of benchmarks: embeddings, DL/ML tokens, complexity")
    _benchmark_argument(cmp, "give two or more")
    cmp.add_argument("--out", required=True, help="output folder")
    cmp.add_argument("--perplexity", type=float, help="t-SNE perplexity (compare.perplexity; default 30)")
    cmp.add_argument("--seed", type=int, help="t-SNE random state (compare.seed; default 0)")
    cmp.add_argument(
        "--code-encoder", help="encoder of the solutions' embeddings (compare.code_encoder; default all-MiniLM-L6-v2)"
    )
    cmp.add_argument("--config", help="config file: its compare section (the options above override it)")
    cmp.set_defaults(func=_compare)

    stages = sub.add_parser("classify-stages", help="predict the pipeline stage of other benchmarks' prompts (Table 4)")
    stages.add_argument("--model", default="results/stages/model", help="a classifier saved by rule classify_stages")
    _benchmark_argument(stages, "repeatable")
    stages.add_argument("--out", required=True, help="predictions (JSON Lines of StagePrediction)")
    stages.add_argument("--threads", type=int, default=1, help="torch threads")
    stages.add_argument(
        "--config", help="config file: its compare.benchmarks are classified when no --benchmark is given"
    )
    stages.set_defaults(func=_classify_stages)

    _run_parser(sub)

    images = sub.add_parser("images", help="manage project and framework images").add_subparsers(
        dest="action", required=True
    )
    prune = images.add_parser("prune", help="remove dlbench images that no image record names (frees disk)")
    prune.add_argument("--records", default="results/images", help="folder of image records to keep (results/images)")
    prune.set_defaults(func=_prune_images)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    argv = sys.argv[1:] if argv is None else list(argv)
    ours, extra = argv, []
    if argv[:1] == ["run"] and "--" in argv:  # dlbench run ... -- SNAKEMAKE OPTIONS
        ours, extra = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    args = build_parser().parse_args(ours)
    if args.command == "run":
        args.snakemake_args, args.argv = extra, argv
    try:
        return args.func(args)
    except (ConfigError, ArtifactError, OSError) as exc:  # bad input: a message, not a traceback
        print(f"dlbench: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
