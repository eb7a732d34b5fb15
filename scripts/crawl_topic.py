# scripts/crawl_topic.py — adapter: one topic's search → RepoMeta JSONL.
from dlbench.collect.crawl import crawl_topic_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    crawl_topic_file(snakemake.wildcards.topic, snakemake.output[0], snakemake.params.crawl)
