"""A project's test environment: declared dependencies, test imports, and a dated lock.

Selection (``collect/select.py``) and the image builder (``images/build.py``) read a
project's dependencies through this package only. It sits on the ground floor beside
``records`` and imports nothing above it.
"""
