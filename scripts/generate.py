# scripts/generate.py — adapter: one (model, technique, repository) generation job.
from dlbench.generate.jobs import generate_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    w, params = snakemake.wildcards, snakemake.params
    stages = snakemake.input.get("stages")
    generate_file(
        snakemake.input.benchmark,
        snakemake.output[0],
        w.model,
        w.technique,
        w.repo,
        params.model_cfg,
        params.storage.llm_cache,
        params.storage.journal,
        stages=stages,
        subset=params.get("evaluate"),  # the run's task subset (a rule parsed before it existed passes none)
    )
