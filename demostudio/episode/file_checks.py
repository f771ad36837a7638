"""Whether a path names a regular file to read, or a file a command may overwrite: looked at
with ``stat`` (and an HDF5 signature) before anything is opened."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def not_a_regular_file(path: Path, expected: str) -> str | None:
    """Why ``path`` cannot be read as ``expected`` ("an episode file") without opening it, or
    None when it is a regular file: opening a FIFO blocks until a writer comes, a device
    never ends, so every file is looked at with ``stat`` first. A link is followed only to
    see what it names."""
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            target = f"{os.readlink(path)!r:.200}"
            return f"expected {expected}, got a link to a missing file ({target})"
        return "no such file"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"expected {expected}, got a link loop (it leads back to itself)"
        return f"cannot read it ({exc.strerror})"
    if stat.S_ISDIR(st.st_mode):
        return f"expected {expected}, got a folder"
    if not stat.S_ISREG(st.st_mode):
        return f"expected {expected}, got a special file (FIFO, device)"
    return None


HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def output_file_problem(path: Path, expected: str) -> str | None:
    """Why a command must not write ``expected`` ("a GIF file", "a key map JSON file") to
    ``path``, or None (nothing there, or a regular file it may replace): a folder, a FIFO or
    device (writing would wait forever), a link loop, or an HDF5 file (an episode is never
    overwritten by an export or a template, whatever its name)."""
    try:
        if not os.path.lexists(path):
            return None
    except OSError:  # a name the system refuses: the writer says so
        return None
    problem = not_a_regular_file(path, expected)
    if problem is not None:
        return problem
    try:
        with open(path, "rb") as fh:
            hdf5 = fh.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE
    except OSError as exc:
        return f"cannot read it ({exc.strerror or exc})"
    if hdf5:
        return f"expected {expected}, got an HDF5 file (an episode?): it is never overwritten"
    return None
