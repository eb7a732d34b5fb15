# Sandboxed evaluation: project images, candidate evaluation, benchmark validation.
# Logic lives in dlbench.harness; these rules only map files to calls.
from dlbench.harness.code import digest, grader_files, support_files


rule build_image:
    input:
        clone="results/repos/{repo}.json",
    output:
        "results/images/{repo}.json",
    params:
        build_log="logs/build_image/{repo}.build.log",
        evaluate=CFG.evaluate,
        images=CFG.images,
        storage=CFG.storage,  # the machine's download cache
        recipe=CFG.images.model_dump(mode="json"),  # a changed environment recipe rebuilds
        base_image=CFG.evaluate.base_image,  # and so does another base
        runner=digest(support_files()),  # and a new supervisor or plugin (they ship in the image)
    resources:
        docker=1,
    log:
        "logs/build_image/{repo}.log",
    benchmark:
        "benchmarks/build_image/{repo}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/build_image.py"


rule evaluate:
    input:
        unpack(get_evaluate_inputs),
        # every model but gold is graded on the tests gold's runs keep (dlbench.harness.testset)
        gold=lambda wc: [] if wc.model == "gold" else [f"results/evaluations/gold/{REFERENCE}/{wc.repo}.jsonl"],
    output:
        "results/evaluations/{model}/{technique}/{repo}.jsonl",
    params:
        backend=BACKEND,
        harness=digest(support_files() | grader_files()),  # new harness code re-evaluates
        evaluate=CFG.evaluate,
        # what decides verdicts (limits, screen, gold runs, task sample), not how fast they come
        limits=CFG.evaluate.model_dump(mode="json", exclude={"jobs", "backend", "preload"}),
    threads: CFG.evaluate.jobs
    resources:
        docker=1 if BACKEND == "docker" else 0,
    log:
        "logs/evaluate/{model}/{technique}/{repo}.log",
    benchmark:
        "benchmarks/evaluate/{model}/{technique}/{repo}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/evaluate.py"


rule validate_tasks:
    input:
        benchmark="results/benchmark/dlbench.jsonl",
        gold=get_evaluations(["gold"]),
        null=get_evaluations(["null"]),
    output:
        "results/validation.csv",
    params:
        evaluate=CFG.evaluate,
        min_tests=CFG.mine.min_tests,
        sample=[CFG.evaluate.sample_tasks, CFG.evaluate.sample_seed],
    log:
        "logs/validate_tasks.log",
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/validate_tasks.py"
