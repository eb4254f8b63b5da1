"""The ``trajaudit`` console command: ``audit`` (pytest run the safe way), ``merge``, ``trace-grader``."""
