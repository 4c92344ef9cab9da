"""What zfslab is installed here, as fleet preflight compares it between the controller and each
host: the version and a digest of the package's own files, so another checkout or a modified copy
of the same version is told apart (docs/fleet.md#preflight). `zfslab --installed` prints it as
JSON on a host; the controller computes the same here."""

from __future__ import annotations

import hashlib
import json
import os

import zfslab

SKIPPED_DIRS = {"__pycache__"}
SKIPPED_SUFFIXES = (".pyc", ".pyo")


def package_files(root: str) -> list[str]:
    """Every file of the package below root, as paths relative to it with '/' separators, sorted:
    the same order on every host whatever its file system lists first. Bytecode caches are left out
    (written by whichever Python ran it last, not part of what was installed)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in files:
            if not name.endswith(SKIPPED_SUFFIXES):
                found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return sorted(found)


def package_digest(root: str) -> tuple[str, int]:
    """sha256 over each file's relative path and its bytes' own sha256, in package_files' order;
    and the number of files."""
    total = hashlib.sha256()
    files = package_files(root)
    for rel in files:
        with open(os.path.join(root, rel), "rb") as f:
            body = hashlib.sha256(f.read()).hexdigest()
        total.update(f"{rel}\0{body}\n".encode())
    return total.hexdigest(), len(files)


def installed() -> dict:
    """This zfslab: {"version", "digest", "files", "path"}; what `zfslab --installed` prints."""
    root = os.path.dirname(os.path.abspath(zfslab.__file__))
    digest, count = package_digest(root)
    return {"version": zfslab.__version__, "digest": digest, "files": count, "path": root}


def installed_json() -> str:
    return json.dumps(installed(), sort_keys=True)
