# scripts/ds1000_generate.py — adapter: one model × technique over the DS-1000 problems.
from dlbench.ds1000.generate import generate_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    w, params = snakemake.wildcards, snakemake.params
    generate_file(
        snakemake.input.benchmark,
        snakemake.output[0],
        w.model,
        w.technique,
        params.model_cfg,
        params.storage.llm_cache,
        params.storage.journal,
        stages=snakemake.input.get("stages"),
    )
