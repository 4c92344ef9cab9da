"""Writing files so that a reader never sees half of one: a temporary file, then os.replace."""

from __future__ import annotations

import os
import tempfile

from zfslab.errors import ZfslabError, shown


class OutputError(ZfslabError):
    """cannot write {}: {}; give a file name in an existing folder"""

    exit_code = 2


def check_output_path(path: str) -> None:
    """Refuse, before any work, a target that cannot become a file: a directory, a missing folder."""
    if not path:
        raise OutputError("''", "the name is empty")
    if len(os.fsencode(os.path.basename(path))) > 255 or len(os.fsencode(os.path.abspath(path))) >= 4096:
        raise OutputError(shown(path, 200), "the name is too long (255 bytes a name, 4095 a path)")
    if os.path.isdir(path):
        raise OutputError(shown(path, 200), "it is a directory")
    if os.path.exists(path) and not os.path.isfile(path):
        raise OutputError(shown(path, 200), "it exists and is not a regular file")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OutputError(shown(path, 200), f"the folder {shown(folder, 200)} does not exist")


def write_atomically(path: str, text: str | bytes) -> None:
    """Write the file whole or not at all: a temporary file beside it, then os.replace."""
    check_output_path(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".zfslab-", suffix=".tmp")
    except OSError as e:
        raise OutputError(shown(path, 200), e.strerror or str(e)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is for reading
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):  # a full disk, a target that became a directory meanwhile ...
            raise OutputError(shown(path, 200), e.strerror or str(e)) from None
        raise
