"""Files the user names on the command line or in the ini (waivers, a baseline summary.json): read whole, bounded.

They are the user's, outside the audited tree (the callers refuse one inside a root), so they are read by their
path as given; what is bounded is the size, and every problem becomes one line naming the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def read_bounded(path: Path, max_bytes: int, what: str, error: type[Exception]) -> bytes:
    """The bytes of the regular file ``path`` (at most ``max_bytes``); ``error(<one line>)`` otherwise.

    ``what`` names the expected kind of file in the messages ("a waivers file", "a summary.json")."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{path}: not a regular file (give {what})")
        if st.st_size > max_bytes:
            raise error(f"{path}: {st.st_size} bytes, more than {max_bytes} for {what}")
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise error(f"{path}: not found") from None
    except OSError as exc:
        raise error(f"{path}: unreadable: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew after the stat
        raise error(f"{path}: more than {max_bytes} bytes for {what}")
    return data
