"""The DS-1000 track (docs/DS1000.md): DS-1000's problems in their released format, generated
like DL-Bench's tasks, run in the sandbox in one shared environment image, scored by pass@1
and set beside DL-Bench in Tables 1 and 5.

``problems`` selects the problems and writes them with their benchmark-record view, ``image``
builds the shared environment, ``generate`` asks a model, ``evaluate`` runs the candidates
(``harness/ds1000.py``), ``tables`` validates the problems by gold and null and writes the
track's tables. Each is one rule's call (``workflow/rules/ds1000.smk``).
"""
