"""Candidate generation: providers, prompting techniques, code extraction, mutants."""
