# scripts/generate.py — adapter: one (model, technique, repository) generation job.
from dlbench.config import load_config
from dlbench.generate.run import generate_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    w = snakemake.wildcards
    stages = snakemake.input.get("stages")
    generate_file(snakemake.input.benchmark, snakemake.output[0], w.model, w.technique, w.repo, cfg, stages=stages)
