# Tasks: draft prompts, annotation sheets, merged labels, the assembled benchmark, its
# environments and its dataset card (written after the report tables, for the mutant kill rates).
# Logic lives in dlbench.tasks; each rule maps its files to one call (scripts/<rule>.py).


rule draft_prompts:
    input:
        functions="results/mine/{repo}/functions.jsonl",
    output:
        "results/prompts/{repo}.jsonl",
    params:
        prompts=CFG.prompts,
        storage=CFG.storage,
        # the drafting LLM shapes the prompts (null: templates); how fast it answers does not
        llm=CFG.prompts.llm and CFG.prompts.llm.model_dump(mode="json", exclude={"concurrency", "timeout_s", "max_retries"}),
        drafting=CFG.prompts.model_dump(mode="json", include={"protocol", "append_signature", "append_class_context"}),
    log:
        "logs/draft_prompts/{repo}.log",
    benchmark:
        "benchmarks/draft_prompts/{repo}.tsv"
    resources:
        llm_api=1,
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/draft_prompts.py"


rule export_annotation:
    input:
        prompts=get_all("results/prompts/{repo}.jsonl"),
        functions=get_all("results/mine/{repo}/functions.jsonl"),
    output:
        csv="results/labels/sheet.csv",
        xlsx=report_built("results/labels/sheet.xlsx", category="Labels"),
        labelstudio="results/labels/labelstudio.json",
        labelstudio_config="results/labels/labelstudio_config.xml",
    log:
        "logs/export_annotation.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/export_annotation.py"


rule merge_labels:
    input:
        prompts=get_all("results/prompts/{repo}.jsonl"),
        sheets=CFG.labels.sheets,
    output:
        merged="results/labels/merged.jsonl",
        agreement=report_built("results/labels/agreement.csv", category="Labels"),
        disagreements=report_built("results/labels/disagreements.csv", category="Labels"),
    params:
        labels=CFG.labels,
        require_labels=CFG.labels.require_labels,
    log:
        "logs/merge_labels.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/merge_labels.py"


rule assemble:
    input:
        merged="results/labels/merged.jsonl",
        functions=get_all("results/mine/{repo}/functions.jsonl"),
        clones=get_all("results/repos/{repo}.json"),
    output:
        jsonl="results/benchmark/dlbench.jsonl",
        parquet="results/benchmark/dlbench.parquet",
        schema="results/benchmark/dlbench.schema.json",
        repos=report_built("results/benchmark/repos.csv", category="Benchmark"),
    params:
        select=CFG.select,
        task_filter=[CFG.select.min_tests_per_function, CFG.select.min_docstring_coverage],
    log:
        "logs/assemble.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/assemble.py"


rule dataset_card:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        repos="results/benchmark/repos.csv",
        merged="results/labels/merged.jsonl",
        agreement="results/labels/agreement.csv",
        prompts=get_all("results/prompts/{repo}.jsonl"),  # how each prompt was drafted
        skipped=get_all("results/mine/{repo}/skipped.jsonl"),  # what mining left out
        tables="results/tables",
        environments="results/benchmark/environments",  # what the card tells how to rebuild
    output:
        report_built("results/benchmark/README.md", category="Benchmark"),
    params:
        mutant_kill_threshold=CFG.report.mutant_kill_threshold,
    log:
        "logs/dataset_card.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/dataset_card.py"


# Per repository with tasks, beside them: the image record, its lock and a Dockerfile that
# rebuilds the test environment without this workflow (none on the local backend: no image).
rule export_environments:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        clones=get_all("results/repos/{repo}.json"),
        images=get_image_records,
    output:
        directory("results/benchmark/environments"),
    params:
        images=CFG.images,
        storage=CFG.storage,  # the wheelhouse: wheels built from sdists go beside the Dockerfiles
        # the framework index and system packages are written into the Dockerfiles
        recipe=CFG.images.model_dump(mode="json", include={"framework_index_url", "system_packages"}),
    log:
        "logs/export_environments.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/export_environments.py"


# The DL-Bench authors' published tasks as benchmark records (run when published.tasks is set).
rule import_published:
    input:
        tasks=CFG.published.tasks or [],
        repos=CFG.published.repos or [],
    output:
        tasks="results/published/dlbench.jsonl",
        rows="results/published/import.jsonl",
    params:
        mine=CFG.mine,
        published=CFG.published,
        storage=CFG.storage,
        # what mining counts as a test shapes the records; its workers and cache do not
        settings=[CFG.mine.tested_by, CFG.mine.reach, CFG.published.min_tests],
        # clones of bundles beside the workflow's checkouts, where `dlbench evaluate` finds them
        work="results/repos",
    log:
        "logs/import_published.log",
    benchmark:
        "benchmarks/import_published.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/import_published.py"


# The DL-Bench authors' own tasks at this build's pins, beside what mining found (run when authors.source is set).
rule import_authors:
    input:
        functions=get_all("results/mine/{repo}/functions.jsonl"),
        clones=get_all("results/repos/{repo}.json"),
    output:
        rows="results/authors/tasks.jsonl",
        tasks="results/authors/dlbench.jsonl",
        summary=report_built("results/authors/repos.csv", category="Benchmark"),
    params:
        authors=CFG.authors,
        work="results/authors/work",
    log:
        "logs/import_authors.log",
    benchmark:
        "benchmarks/import_authors.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/import_authors.py"
