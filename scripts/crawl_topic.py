# scripts/crawl_topic.py — adapter: one topic's search → RepoMeta JSONL.
from dlbench.collect.crawl import crawl_topic_file
from dlbench.config import load_config
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    crawl_topic_file(snakemake.wildcards.topic, snakemake.output[0], cfg.crawl)
