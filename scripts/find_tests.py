# scripts/find_tests.py — adapter: clone record → tests.jsonl (TestCase).
from dlbench.logs import script_logging
from dlbench.mine.tests import find_tests_file

with script_logging(snakemake.log[0]):
    mine = snakemake.params.mine.model_copy(update={"workers": snakemake.threads})  # the rule's threads parse
    find_tests_file(snakemake.input.clone, snakemake.output[0], mine, snakemake.params.storage.parse_cache)
