# scripts/merge_crawl.py — adapter: topic files → one deduplicated RepoMeta JSONL.
from dlbench.collect.crawl import merge_crawl
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    merge_crawl(snakemake.input, snakemake.output[0])
