# scripts/agree_mutations.py — adapter: one (model, repository) mutation_agreement job.
from dlbench.config import load_config
from dlbench.generate.mutation_agreement.technique import agreement_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    cfg = load_config(snakemake.config)
    inp, out, w = snakemake.input, snakemake.output, snakemake.wildcards
    image = inp.image[0] if inp.image else None  # docker backend only
    agreement_file(inp.benchmark, inp.clone, image, out.generations, out.evidence, w.model, w.repo, cfg, snakemake.params.backend)
