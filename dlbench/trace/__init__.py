"""The dynamic truth: a repository's tests run once in its image with a tracer.

``plugin`` runs inside the container (stdlib + pytest only); ``plan`` and ``truth`` are
host code over mining's records; ``container`` reaches the engine through ``harness``, so
this package sits above both ``mine`` and ``harness``. The check that drops tasks their
tests never execute is ``mine.trace_check`` (it needs only the records).
"""
