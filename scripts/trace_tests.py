# scripts/trace_tests.py — adapter: clone record + image record + tests.jsonl → trace.jsonl.
from pathlib import Path

from dlbench.config import load_config
from dlbench.logs import script_logging
from dlbench.trace.stage import trace_tests_file

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    i = snakemake.input
    trace_tests_file(
        i.clone,
        i.image,
        i.tests,
        snakemake.output[0],
        Path(snakemake.params.run_log),
        cfg.mine,
    )
