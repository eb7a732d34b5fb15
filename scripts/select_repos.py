# scripts/select_repos.py — adapter: crawl + config/repos.yaml → selection with reasons.
from dlbench.collect.select import select_file
from dlbench.config import load_config
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    select_file(snakemake.input.repos[0] if snakemake.input.repos else None, cfg.repos_file, snakemake.output.jsonl, snakemake.output.csv, cfg)
