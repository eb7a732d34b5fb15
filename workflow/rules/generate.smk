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
        settings=CFG.stages.model_dump(mode="json"),  # epochs, learning rate, folds...: a change retrains
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
