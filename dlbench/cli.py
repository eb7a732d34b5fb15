"""The ``dlbench`` command line, for work outside Snakemake and for scripted checks."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from dlbench.config import ConfigError, EvaluateConfig, load_config_file
from dlbench.store import ArtifactError


def _mine(args: argparse.Namespace) -> int:
    from dlbench.mine.api import mine_checkout

    out = mine_checkout(Path(args.repo).resolve(), Path(args.out), sha=args.sha, name=args.name, min_tests=args.min_tests)
    print(out)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from dlbench.harness.evaluate import evaluate_predictions

    cfg = load_config_file(args.config).evaluate if args.config else EvaluateConfig()
    results = evaluate_predictions(
        Path(args.tasks), Path(args.predictions), Path(args.out), backend=args.backend, jobs=args.jobs, cfg=cfg
    )
    passed = sum(r.passed for r in results)
    print(f"{passed}/{len(results)} candidates passed; records in {args.out}")
    return 0


def _prune_images(args: argparse.Namespace) -> int:
    from dlbench.harness.image import prune_unrecorded

    removed = prune_unrecorded(Path(args.records))
    print(f"removed {len(removed)} image tag(s) not named in {args.records}: {' '.join(removed) or '-'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dlbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    mine = sub.add_parser("mine", help="find tests, call graph and functions under test in a checkout")
    mine.add_argument("--repo", required=True, help="checkout on disk")
    mine.add_argument("--sha", help="commit to mine (default: the checkout's HEAD)")
    mine.add_argument("--name", help="owner/name for task ids (default: the folder name)")
    mine.add_argument("--out", required=True, help="output folder (tests.jsonl, calls.jsonl, functions.jsonl)")
    mine.add_argument("--min-tests", type=int, default=3, help="tests a function needs to become a task")
    mine.set_defaults(func=_mine)

    ev = sub.add_parser("evaluate", help="evaluate a predictions file against the benchmark")
    ev.add_argument("--tasks", required=True, help="results/benchmark/dlbench.jsonl")
    ev.add_argument("--predictions", required=True, help="JSON Lines: task_id, code, [sample], [model]")
    ev.add_argument("--out", required=True, help="evaluation records (JSON Lines)")
    ev.add_argument("--backend", choices=["auto", "docker", "local"], default="auto")
    ev.add_argument("--jobs", type=int, default=2)
    ev.add_argument("--config", help="config file whose 'evaluate' section sets limits and the base image")
    ev.set_defaults(func=_evaluate)

    images = sub.add_parser("images", help="manage project and framework images").add_subparsers(dest="action", required=True)
    prune = images.add_parser("prune", help="remove dlbench images that no image record names (frees disk)")
    prune.add_argument("--records", default="results/images", help="folder of image records to keep (results/images)")
    prune.set_defaults(func=_prune_images)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ConfigError, ArtifactError, OSError) as exc:  # bad input: a message, not a traceback
        print(f"dlbench: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
