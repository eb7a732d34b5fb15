# Mine: test cases, the test call graph and the functions under test of each checkout.
# Logic lives in dlbench.mine; each rule maps its files to one call (scripts/<rule>.py).
# Per-file parse summaries are cached by content hash under storage.parse_cache (outside
# the declared outputs), so the three rules parse each file once between them.
# trace_tests (the dynamic truth, a target of its own) runs the tests once in the project
# image with a tracer; with mine.dynamic_check, check_functions drops the tasks whose
# listed tests never executed them (recorded in untraced.jsonl).

from dlbench.mine import code_digest

STATIC_FUNCTIONS = "results/mine/{repo}/functions.static.jsonl"
MINING = code_digest()  # new mining code remines


rule find_tests:
    input:
        clone="results/repos/{repo}.json",
    output:
        "results/mine/{repo}/tests.jsonl",
    params:
        mine=CFG.mine,
        storage=CFG.storage,
        mining=MINING,
    log:
        "logs/find_tests/{repo}.log",
    benchmark:
        "benchmarks/find_tests/{repo}.tsv"
    threads: CFG.mine.workers
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/find_tests.py"


rule call_graph:
    input:
        clone="results/repos/{repo}.json",
        tests="results/mine/{repo}/tests.jsonl",
    output:
        "results/mine/{repo}/calls.jsonl",
    params:
        mine=CFG.mine,
        storage=CFG.storage,
        tested_by=CFG.mine.tested_by,
        reach=CFG.mine.reach,
        test_helpers=CFG.mine.test_helpers,
        mining=MINING,
    log:
        "logs/call_graph/{repo}.log",
    benchmark:
        "benchmarks/call_graph/{repo}.tsv"
    threads: CFG.mine.workers
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/call_graph.py"


rule extract_functions:
    input:
        clone="results/repos/{repo}.json",
        tests="results/mine/{repo}/tests.jsonl",
        calls="results/mine/{repo}/calls.jsonl",
    output:
        # With the dynamic check, check_functions writes functions.jsonl from these.
        functions=STATIC_FUNCTIONS if CFG.mine.dynamic_check else "results/mine/{repo}/functions.jsonl",
        skipped="results/mine/{repo}/skipped.jsonl",  # files and functions left out, with why
    params:
        mine=CFG.mine,
        storage=CFG.storage,
        min_tests=CFG.mine.min_tests,
        max_tests=CFG.mine.max_tests,
        mining=MINING,
    log:
        "logs/extract_functions/{repo}.log",
    benchmark:
        "benchmarks/extract_functions/{repo}.tsv"
    threads: CFG.mine.workers
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/extract_functions.py"


rule trace_tests:
    input:
        clone="results/repos/{repo}.json",
        image="results/images/{repo}.json",
        tests="results/mine/{repo}/tests.jsonl",
    output:
        "results/mine/{repo}/trace.jsonl",
    params:
        mine=CFG.mine,
        storage=CFG.storage,
        trace=CFG.mine.trace.model_dump(mode="json"),
        run_log="logs/trace_tests/{repo}.run.log",
    resources:
        docker=1,
    log:
        "logs/trace_tests/{repo}.log",
    benchmark:
        "benchmarks/trace_tests/{repo}.tsv"
    conda:
        "../envs/dlbench.yaml"
    script:
        "../../scripts/trace_tests.py"


if CFG.mine.dynamic_check:

    rule check_functions:
        input:
            functions=STATIC_FUNCTIONS,
            trace="results/mine/{repo}/trace.jsonl",
        output:
            functions="results/mine/{repo}/functions.jsonl",
            untraced="results/mine/{repo}/untraced.jsonl",
        log:
            "logs/check_functions/{repo}.log",
        benchmark:
            "benchmarks/check_functions/{repo}.tsv"
        conda:
            "../envs/dlbench.yaml"
        script:
            "../../scripts/check_functions.py"
