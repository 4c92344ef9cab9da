"""The controller's record of a detached fleet bench: `<db>.fleet-RUN.json` beside --db, written
once, atomically, never over a file (zfslab did not make it, or another run did)."""

from __future__ import annotations

import json
import os
import tempfile

from zfslab.errors import ZfslabError

STATE_VERSION = 1


class StateExists(ZfslabError):
    """{} already exists; zfslab writes a run's record only once and never over a file: start again for a new run id"""
    exit_code = 2


class StateMissing(ZfslabError):
    """no detached run {} beside --db {} (no {}): give the --db and the run id `bench --detach` printed"""
    exit_code = 2


class StateUnreadable(ZfslabError):
    """{} is not a detached run's record zfslab wrote ({}); nothing was done"""
    exit_code = 2


def state_path(db: str, run_id: str) -> str:
    return f"{db}.fleet-{run_id}.json"


def write_state(db: str, run_id: str, state: dict) -> str:
    """Write the record whole in a temporary file, then link it to its name: it appears complete
    or not at all, and an existing file is never replaced."""
    path = state_path(db, run_id)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".zfslab-state-", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"zfslab_detached_run": STATE_VERSION, **state}, f, indent=1, sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise StateExists(path) from None
    finally:
        os.unlink(tmp)
    return path


def read_state(db: str, run_id: str) -> dict:
    path = state_path(db, run_id)
    try:
        with open(path) as f:
            state = json.load(f)
    except FileNotFoundError:
        raise StateMissing(run_id, db, path) from None
    except (OSError, ValueError) as e:
        raise StateUnreadable(path, type(e).__name__) from None
    if not isinstance(state, dict) or state.get("zfslab_detached_run") != STATE_VERSION:
        raise StateUnreadable(path, "no zfslab_detached_run version 1")
    return state
