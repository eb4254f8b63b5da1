"""Format loaders: each turns one parsed file into the normalized :class:`~pytest_trajaudit.model.Trajectory`.

A loader module defines ``NAME`` (the format name recorded in the audit), ``sniff(parsed) -> bool`` and
``load(parsed, path) -> Trajectory``. :mod:`.sniff` tries them in order. No principle parses a format.
A format whose files hold several runs (one job each) also defines ``MULTI``, ``members`` and
``load_member`` (and optionally ``claims``/``scan_members``): see :mod:`.multi`.
"""
