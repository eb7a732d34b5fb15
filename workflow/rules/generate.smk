# Generation: candidates per (model, technique, repository), the stage classifier that
# stage-few-shot prompting needs, and the token/cost table. All logic is in dlbench.generate.


rule classify_stages:
    # The paper's protocol: the encoder fine-tuned with a linear head, k-fold weighted F1; each
    # labelled task's stage comes from the fold that held it out.
    input:
        "results/benchmark/dlbench.jsonl",
    output:
        predictions="results/stages/predictions.jsonl",
        report=report_built("results/stages/report.json", category="Generate"),
        model=directory("results/stages/model"),
    params:
        stages=CFG.stages,
        # encoder, epochs, learning rate, folds...: a change retrains (the manual check's keys do not)
        settings=CFG.stages.model_dump(mode="json", exclude={"check"}),
    threads: 2
    log:
        "logs/classify_stages.log",
    benchmark:
        "benchmarks/classify_stages.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/classify_stages.py"


rule classify_benchmarks:
    # The stages of other benchmarks' prompts (compare.benchmarks), for Table 4.
    input:
        model="results/stages/model",
        others=[b.path for b in CFG.compare.benchmarks],
    output:
        "results/stages/benchmarks.jsonl",
    params:
        compare=CFG.compare,
        sources=[b.model_dump(mode="json") for b in CFG.compare.benchmarks],  # names and formats
    threads: 2
    log:
        "logs/classify_benchmarks.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/classify_benchmarks.py"


rule export_stage_check:
    # The paper checked 100 of its DS-1000 predictions by hand: a seeded sample of each other
    # benchmark's predicted stages, with a column to mark each correct.
    input:
        predictions="results/stages/benchmarks.jsonl",
        others=[b.path for b in CFG.compare.benchmarks],
    output:
        xlsx=report_built("results/stages/check_sheet.xlsx", category="Generate"),
        csv="results/stages/check_sheet.csv",
    params:
        compare=CFG.compare,
        check=CFG.stages.check,
        settings=CFG.stages.check.model_dump(mode="json", include={"size", "seed"}),  # a new sample
    log:
        "logs/export_stage_check.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/export_stage_check.py"


rule score_stage_check:
    # A filled check sheet (stages.check.sheet): the accuracy with the paper's interval.
    input:
        sheet=CFG.stages.check.sheet or [],
        predictions="results/stages/benchmarks.jsonl",
    output:
        report_built("results/stages/check.jsonl", category="Generate"),
    params:
        confidence=CFG.stages.check.confidence,
    log:
        "logs/score_stage_check.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/score_stage_check.py"


rule generate:
    # Responses are cached (storage.llm_cache) and journalled (storage.journal) outside the
    # output, so a failed or killed job reruns without paying for a finished request again.
    input:
        unpack(get_generate_inputs),
    output:
        "results/generations/{model}/{technique}/{repo}.jsonl",
    params:
        model_cfg=lambda wildcards: CFG.models[wildcards.model],
        storage=CFG.storage,  # where LLM responses are cached and journalled
        evaluate=CFG.evaluate,  # the run's task subset (dlbench.subset), if one is set
        **SUBSET_PARAMS,
        # what shapes the candidates (not how fast they are fetched) triggers a rerun
        model=lambda wildcards: CFG.models[wildcards.model].model_dump(
            mode="json", exclude={"concurrency", "timeout_s", "max_retries", "batch"}
        ),
    log:
        "logs/generate/{model}/{technique}/{repo}.log",
    benchmark:
        "benchmarks/generate/{model}/{technique}/{repo}.tsv"
    resources:
        llm_api=lambda wildcards: int(CFG.models[wildcards.model].provider == "openai"),
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/generate.py"


rule generation_usage:
    input:
        get_generations,
    output:
        report_built("results/usage.csv", category="Generate"),
    log:
        "logs/generation_usage.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/generation_usage.py"
