"""The advisor-leakage audit (the seed's advisor-audit.md): one core shared by the ADV-1..ADV-5 pytest items
(``principles/advisor.py``) and the ``trajaudit audit`` / ``trajaudit summarize`` commands (``advisor/cli.py``).

- ``layout.py`` — which privileged material: ``--privileged-root`` > the task's own
  ``<task-dir>/advisor/task_material_manifest.json`` > the default Harbor layout (never the attempt's); the refusals
  when the layout is unknown;
- ``scan.py`` — the mechanical checks' haystack (rendered text, then every decoded string, JSON inside strings up to
  three layers) and one linear pass for ADV-3's patterns (``patterns.py``) and ADV-4's verbatim privileged lines;
- ``judging.py`` — the coherence and leakage judges: prompts, schemas, clipping, outcomes;
- ``core.py`` — ``prepare`` (mechanical checks and prompts), ``assemble`` (verdict and checks), ``run_audit``;
- ``collect.py`` — which jobs get ADV items (stat only).

Nothing here imports pytest; importing this package imports none of its modules.
"""
