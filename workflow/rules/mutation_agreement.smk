# Technique mutation_agreement: prompt mutations + model-written tests + dual execution
# agreement. It needs the sandbox during generation, so it has its own rule; its output is
# an ordinary generations file that the evaluate and tables rules score like any other.
# Logic lives in dlbench.generate.mutation_agreement.


ruleorder: agree_mutations > generate


rule agree_mutations:
    # LLM responses are cached (storage.llm_cache), and the runs against model-written tests
    # kept (storage.agreement_runs), so a rerun pays for nothing twice.
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        clone="results/repos/{repo}.json",
        # docker backend only: the image gold's runs settled on, where the project's tests run
        image=["results/images/{repo}.repaired.json"] if BACKEND == "docker" else [],
    output:
        generations="results/generations/{model}/mutation_agreement/{repo}.jsonl",
        evidence="results/agreement/{model}/{repo}.jsonl",
    params:
        backend=BACKEND,
        model_cfg=lambda wildcards: CFG.models[wildcards.model],
        generate=CFG.generate,
        evaluate=CFG.evaluate,
        storage=CFG.storage,
        # what shapes the candidates: the model's sampling, the technique's settings, and
        # the limits and screen of the runs against model-written tests
        model=lambda wildcards: CFG.models[wildcards.model].model_dump(
            mode="json", exclude={"concurrency", "timeout_s", "max_retries", "batch"}
        ),
        agreement=CFG.generate.mutation_agreement.model_dump(mode="json"),
        limits=CFG.evaluate.model_dump(mode="json", exclude={"jobs", "backend", "preload", *SUBSET_KEYS}),
        **SUBSET_PARAMS,  # the run's task subset, when one is set
    threads: CFG.evaluate.jobs
    log:
        "logs/agree_mutations/{model}/{repo}.log",
    benchmark:
        "benchmarks/agree_mutations/{model}/{repo}.tsv"
    resources:
        llm_api=1,
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/agree_mutations.py"
