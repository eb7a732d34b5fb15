"""Project images: a project's test environment (``dlbench/deps``) built in layers on the base
image, checked by importing and collecting its tests, repaired where a module is missing.

``build`` builds and names an image by what made it, ``layers`` runs and commits the build
steps, ``envcheck`` is the check run inside the built image. Evaluation (``harness``) and
the tracer (``trace``) run in these images; nothing here runs candidates.
"""
