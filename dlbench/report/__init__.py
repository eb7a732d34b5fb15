"""Aggregation and reporting: pass@k tables, failure taxonomy, dataset statistics, plots."""
