"""One line for an operating-system error about a path the user gave: an output folder that
cannot be made (a file in its way, no permission, a read-only disk), a disk that is full.
Commands name their flag where they check a path themselves (``export --out``, ``record
--out``, ``trim --out``); this is the net under every command, so that no such error reaches
the user as a traceback, whichever step of whichever command met it."""

from __future__ import annotations

import errno
import os
import re

PATH_ERRNOS = {
    errno.EACCES: "expected a place this user may write to",
    errno.EPERM: "expected a place this user may write to",
    errno.EROFS: "expected a place on a disk that can be written",
    errno.EEXIST: "expected a folder, or nothing, at that path",
    errno.ENOTDIR: "expected folders all the way down to it",
    errno.EISDIR: "expected a file, not a folder",
    errno.ENOSPC: "expected room on the disk",
    errno.EDQUOT: "expected room in this user's disk quota",
    errno.ENAMETOOLONG: "expected a shorter path",
}
"""The errors this net reports, and what was expected instead."""

_H5_NAME = re.compile(r"name = '([^']*)'")


def os_error_line(exc: OSError) -> str | None:
    """``PATH: cannot make, read or write it (REASON); EXPECTED`` for an error in
    :data:`PATH_ERRNOS`, else None (not a user's error: let it propagate). h5py's errors
    carry no ``filename``: the path is read from their message."""
    expected = PATH_ERRNOS.get(exc.errno) if exc.errno is not None else None
    if expected is None:
        return None
    path = exc.filename
    if path is None:
        found = _H5_NAME.search(str(exc))
        path = found.group(1) if found else "a file"
    reason = os.strerror(exc.errno)  # h5py's strerror is its own long message
    return f"{path}: cannot make, read or write it ({reason}); {expected}"


__all__ = ["PATH_ERRNOS", "os_error_line"]
