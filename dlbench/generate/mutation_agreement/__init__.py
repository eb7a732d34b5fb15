"""Technique ``mutation_agreement``: prompt mutations with dual execution agreement.

``variants`` mutates a task's prompt (lexical, grammatical, naming; or an LLM paraphrase),
``modeltests`` asks the model for assertions and runs candidates against them in the
harness's sandbox, ``dual_execution`` picks the candidate (CodeT's dual execution agreement),
``technique`` runs it all for one (model, repository) job.
"""
