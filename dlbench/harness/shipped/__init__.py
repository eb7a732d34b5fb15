"""Code that runs beside the candidate, not on the host: the supervisor and its pytest plugin.

Shipped into every project image as ``/opt/dlbench`` (``harness/code.py``) and run from
here by the local backend. Standalone: stdlib, pytest and the shared ``harness/protocol.py``
only; the host never imports it (it talks to it over the session's pipe).
"""
