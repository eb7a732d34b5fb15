# scripts/trace_tests.py — adapter: clone record + image record + tests.jsonl → trace.jsonl.
from pathlib import Path

from dlbench.logs import script_logging
from dlbench.trace.stage import trace_tests_file

with script_logging(snakemake.log[0]):
    i, params = snakemake.input, snakemake.params
    trace_tests_file(
        i.clone, i.image, i.tests, snakemake.output[0], Path(params.run_log), params.mine, params.storage.parse_cache
    )
