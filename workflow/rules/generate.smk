# Generation: candidates per (model, technique, repository), the stage classifier that
# stage-few-shot prompting needs, and the token/cost table. All logic is in dlbench.generate.


rule classify_stages:
    # Leave-one-repo-out: each task's stage is predicted by a model that never saw its repository.
    input:
        "results/benchmark/dlbench.jsonl",
    output:
        predictions="results/stages/predictions.jsonl",
        report=report("results/stages/report.json", category="Generate"),
    log:
        "logs/classify_stages.log",
    benchmark:
        "benchmarks/classify_stages.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/classify_stages.py"


rule generate:
    # Responses are cached (generate.cache_dir) and journalled outside the output, so a
    # failed or killed job reruns without paying for a finished request again.
    input:
        unpack(get_generate_inputs),
    output:
        "results/generations/{model}/{technique}/{repo}.jsonl",
    params:
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
        report("results/usage.csv", category="Generate"),
    log:
        "logs/generation_usage.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/generation_usage.py"
