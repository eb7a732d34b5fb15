# scripts/agree_mutations.py — adapter: one (model, repository) mutation_agreement job.
from dlbench.generate.mutation_agreement.technique import agreement_file
from dlbench.logs import script_logging

with script_logging(snakemake.log[0]):
    inp, out, w, params = snakemake.input, snakemake.output, snakemake.wildcards, snakemake.params
    image = inp.image[0] if inp.image else None  # docker backend only
    evaluate = params.evaluate.model_copy(update={"jobs": snakemake.threads})  # candidates at once: the rule's threads
    agreement_file(
        inp.benchmark,
        inp.clone,
        image,
        out.generations,
        out.evidence,
        w.model,
        w.repo,
        params.model_cfg,
        params.generate,
        evaluate,
        params.backend,
        params.storage.llm_cache,
        params.storage.agreement_runs,
    )
