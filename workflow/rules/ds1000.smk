# The DS-1000 track (docs/DS1000.md): DS-1000's problems in their released format, generated
# like DL-Bench's tasks, run in the Docker sandbox in one shared environment image, scored by
# pass@1 and set beside DL-Bench in Tables 1 and 5 (rule tables). Runs only with
# ds1000.enabled; all logic is in dlbench.ds1000 and dlbench.harness.ds1000.
from dlbench.harness.code import ds1000_support_files
from dlbench.store import files_digest


rule ds1000_problems:
    input:
        CFG.ds1000.path,
    output:
        problems="results/ds1000/problems.jsonl",
        benchmark="results/ds1000/benchmark.jsonl",
    params:
        ds1000=CFG.ds1000,
        sample=CFG.ds1000.model_dump(mode="json", include={"path", "sample_size", "seed"}),  # another sample reruns
    log:
        "logs/ds1000_problems.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/ds1000_problems.py"


rule ds1000_image:
    output:
        "results/ds1000/image.json",
    params:
        build_log="logs/ds1000_image.build.log",
        ds1000=CFG.ds1000,
        evaluate=CFG.evaluate,
        images=CFG.images,
        storage=CFG.storage,  # the machine's download cache
        recipe=CFG.ds1000.model_dump(mode="json", include={"packages", "exclude_newer"}),  # a new recipe rebuilds
        base_image=CFG.evaluate.base_image,
        runner=files_digest(ds1000_support_files()),  # and a new runner (it ships in the image)
    resources:
        docker=1,
    log:
        "logs/ds1000_image.log",
    benchmark:
        "benchmarks/ds1000_image.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/ds1000_image.py"


rule ds1000_stages:
    # stage-few-shot on DS-1000: the stage classifier's stage of each problem's prompt
    input:
        model="results/stages/model",
        benchmark="results/ds1000/benchmark.jsonl",
    output:
        "results/ds1000/stages.jsonl",
    threads: 2
    log:
        "logs/ds1000_stages.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/ds1000_stages.py"


rule ds1000_generate:
    # The same providers, cache and journal as rule generate (storage.llm_cache, storage.journal).
    input:
        unpack(get_ds1000_generate_inputs),
    output:
        "results/ds1000/generations/{model}/{technique}.jsonl",
    params:
        model_cfg=lambda wildcards: CFG.models[wildcards.model],
        storage=CFG.storage,
        model=lambda wildcards: CFG.models[wildcards.model].model_dump(
            mode="json", exclude={"concurrency", "timeout_s", "max_retries", "batch"}
        ),
    log:
        "logs/ds1000_generate/{model}/{technique}.log",
    benchmark:
        "benchmarks/ds1000_generate/{model}/{technique}.tsv"
    resources:
        llm_api=lambda wildcards: int(CFG.models[wildcards.model].provider == "openai"),
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/ds1000_generate.py"


rule ds1000_evaluate:
    input:
        problems="results/ds1000/problems.jsonl",
        generations="results/ds1000/generations/{model}/{technique}.jsonl",
        image="results/ds1000/image.json",
    output:
        "results/ds1000/evaluations/{model}/{technique}.jsonl",
    params:
        evaluate=CFG.evaluate,
        timeout_s=CFG.ds1000.timeout_s,
        limits=CFG.evaluate.model_dump(mode="json", include={"memory_mb", "cpus", "pids", "screen"}),
        runner=files_digest(ds1000_support_files()),  # a new runner re-evaluates
    threads: CFG.evaluate.jobs
    resources:
        docker=1,
    log:
        "logs/ds1000_evaluate/{model}/{technique}.log",
    benchmark:
        "benchmarks/ds1000_evaluate/{model}/{technique}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/ds1000_evaluate.py"


rule ds1000_tables:
    input:
        benchmark="results/ds1000/benchmark.jsonl",
        problems="results/ds1000/problems.jsonl",
        evaluations=get_ds1000_evaluations,
    output:
        validation=report_built("results/ds1000/validation.csv", category="DS-1000"),
        csv=report_built("results/ds1000/tables.csv", category="DS-1000"),
        tables=report_built(directory("results/ds1000/tables"), patterns=["{name}.md"], category="DS-1000"),
    params:
        report=CFG.report,
        settings=CFG.report.model_dump(mode="json"),
        models=ModelTable(CFG.models),
    log:
        "logs/ds1000_tables.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/ds1000_tables.py"
