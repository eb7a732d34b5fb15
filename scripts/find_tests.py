# scripts/find_tests.py — adapter: clone record → tests.jsonl (TestCase).
from dlbench.config import load_config
from dlbench.logs import script_logging
from dlbench.mine.tests import find_tests_file

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    find_tests_file(snakemake.input.clone, snakemake.output[0], cfg.mine)
