"""`zfslab merge`: several hosts' results databases into one, with host provenance.

Inputs are read through the safe readers (store/readback.py validates every row; schema.py's
open_readonly refuses foreign or newer files) and never written, nor anything beside them: an
input with a write-ahead log beside it (a bench still running, or one killed) holds committed
rows only in that -wal, and SQLite reads a -wal only through a -shm index it creates beside the
file; so such an input is copied, file and log, into a private folder once for the whole merge,
the copy's log replayed there (store/wal_copy.py), and the copy read (docs/fleet.md#merge). A run or drill is one thing wherever it was
copied: its uid (migration 5), or for rows from before it, a digest of what identifies it. Measurements of one run are the union over the
copies (a copy taken mid-run holds fewer). The output is built whole in a temporary file, in an
order fixed by the rows' content, then renamed over `-o`: merge(A, B) and merge(B, A) give the
same rows with the same ids, and an existing output is one more input, so merging again changes
nothing (docs/fleet.md#merge).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from zfslab.errors import ParamError, ZfslabError, shown
from zfslab.store.readback import DamagedDatabase, read_results
from zfslab.store.schema import NotOurDatabase, atomic, connect, has_table, open_readonly
from zfslab.store.wal_copy import CopyFailed, copy_with_log, log_beside


class MergeError(ZfslabError, ValueError):
    """Results files merge cannot merge, or an output it cannot write: the message names the file
    and the fix; the output is the setting `output`, which the command layer words as its flag."""


@dataclass(frozen=True, slots=True)
class MergeSummary:
    inputs: int
    runs: int               # in the output
    runs_added: int         # not in the output before
    measurements: int
    drills: int
    drills_added: int
    origins: tuple[str, ...]  # the hosts the output's runs and drills came from


_RUN_IDENTITY = ("key", "started_at", "hostname", "command", "options_json")
_DRILL_IDENTITY = ("layout", "scenario", "started_at", "seconds", "outcome", "verdict", "data_json", "zfs_version")


def _digest(row: dict, columns: Sequence[str], kind: str) -> str:
    text = json.dumps([row.get(c) for c in columns], sort_keys=True, default=str)
    return f"{kind}-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _rows(conn: sqlite3.Connection, sql: str, args: tuple = ()) -> list[dict]:
    return [dict(r) for r in conn.execute(sql, args)]


def _regular(path: str, what: str) -> os.stat_result:
    """The file's status, or the reason it is no results file: missing, a folder, a FIFO, a device."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise MergeError(f"merge: {what} {shown(path, 200)}: no such file; give results files bench, drill or "
                         "merge wrote") from None
    except OSError as e:
        raise MergeError(f"merge: {what} {shown(path, 200)}: cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):   # a FIFO would block the copy, a device is not ours to read
        raise MergeError(f"merge: {what} {shown(path, 200)}: not a regular file; give results files bench, drill "
                         "or merge wrote")
    return st


@contextlib.contextmanager
def _readable(paths: Sequence[str], output: str) -> Iterator[dict[str, str]]:
    """Each input (and an existing -o) -> the file to read for it: itself, or for one with a log
    beside it, a private copy with the log replayed (the folder removed at the end)."""
    private = None
    try:
        out: dict[str, str] = {}
        for path in paths:
            _regular(path, "`output`" if path == output else "input")
            log = log_beside(path)
            if log is None:
                out[path] = path
                continue
            private = private or tempfile.mkdtemp(prefix="zfslab-merge-read-")
            out[path] = os.path.join(private, f"{len(out)}.sqlite")
            try:   # one copy for the whole merge (open_readonly would copy at each open)
                copy_with_log(path, log, out[path])
            except CopyFailed as e:
                raise MergeError(f"merge: {shown(path, 200)}: {e}") from None
        yield out
    finally:
        if private:
            shutil.rmtree(private, ignore_errors=True)


def _input_error(e: ZfslabError, path: str, read: str, what: str = "") -> MergeError:
    """A reader's error about `read` (the input, or its private copy) as merge's own, naming the
    input: the readers' words name their setting `db` and offer bench, which merge does not."""
    if isinstance(e, (DamagedDatabase, NotOurDatabase)) and len(e.args) == 2:
        detail = str(e.args[1])
    elif isinstance(e, ParamError):
        detail = e.rule
    else:
        detail = str(e)
        for prefix in (f"--db {shown(read, 200)}: ", f"{read}: "):
            detail = detail.removeprefix(prefix)
        detail = detail.split("; give --db", 1)[0].split("; `zfslab bench", 1)[0]
    detail = detail.replace(read, path)
    return MergeError(f"merge: {what}{shown(path, 200)}: {detail}; give results files bench, drill or merge wrote")


def _check_inputs(paths: Sequence[str], output: str, readable: dict[str, str]) -> list[str]:
    out = []
    for path in paths:
        if os.path.exists(output) and os.path.samefile(path, output):
            raise MergeError(f"merge: `output` {shown(output, 200)} is also an input, and merge never changes its inputs; "
                             "give `output` a new file name")
        try:
            read_results(readable[path])   # every row vetted; refuses foreign, damaged or newer files
        except ZfslabError as e:
            raise _input_error(e, path, readable[path]) from None
        if not any(os.path.samefile(path, seen) for seen in out):
            out.append(path)
    return out


def _read_input(path: str) -> dict:
    """One input's runs (their rows only: measurements are read run by run, when written) and
    drills, each under its identity, and its pools."""
    conn = open_readonly(path)
    try:
        data: dict = {"runs": {}, "drills": {}, "pools": [], "intents": []}
        if has_table(conn, "runs"):
            for run in _rows(conn, "SELECT * FROM runs"):
                data["runs"][run.get("uid") or _digest(run, _RUN_IDENTITY, "run")] = {"row": run, "path": path}
        if has_table(conn, "drills"):
            resilvers = has_table(conn, "resilvers")
            for drill in _rows(conn, "SELECT * FROM drills"):
                ident = drill.get("uid") or _digest(drill, _DRILL_IDENTITY, "drill")
                rs = _rows(conn, "SELECT * FROM resilvers WHERE drill_id = ? ORDER BY id", (drill["id"],)) \
                    if resilvers else []
                for r in rs:
                    r["disks"] = _rows(conn, "SELECT * FROM resilver_disks WHERE resilver_id = ? ORDER BY position",
                                       (r["id"],))
                data["drills"][ident] = {"row": drill, "resilvers": rs}
        ids = {r["row"]["id"]: ident for ident, r in data["runs"].items()}
        if has_table(conn, "pools"):
            data["pools"] = [dict(p, run_uid=ids.get(p["run_id"])) for p in _rows(conn, "SELECT * FROM pools")]
        if has_table(conn, "pool_intents"):   # a create recorded before it ran: how a resume knows a pool
            data["intents"] = [dict(i, run_uid=ids.get(i["run_id"])) for i in _rows(conn, "SELECT * FROM pool_intents")]
        return data
    finally:
        conn.close()


def _run_detail(path: str, run_id: int) -> dict:
    """One run's disks, measurements and capacities, as one input holds them."""
    conn = open_readonly(path)
    try:
        def rows(table: str) -> list[dict]:
            return _rows(conn, f"SELECT * FROM {table} WHERE run_id = ?", (run_id,)) if has_table(conn, table) else []
        return {"disks": rows("run_disks"), "measurements": rows("measurements"), "capacity": rows("layout_capacity")}
    finally:
        conn.close()


def _insert(conn: sqlite3.Connection, table: str, row: dict, known: set[str]) -> int:
    cols = [c for c in row if c in known]
    cur = conn.execute(f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                       [row[c] for c in cols])
    return int(cur.lastrowid)


def _sort_key(row: dict) -> str:
    return json.dumps({k: v for k, v in row.items() if k != "id"}, sort_keys=True, default=str)


def merge(inputs: Sequence[str], output: str, *,
          accept: Callable[[str | None, str], bool] | None = None) -> MergeSummary:
    """Merge `inputs` (and what `output` already holds) into `output`, replaced whole at the end.
    `accept(origin, layout)`, from a fleet run's ledger, keeps only the measurements that count:
    a lost host's result for a layout that was run again elsewhere is left out."""
    if not inputs:
        raise MergeError("merge: give at least one results file to merge")
    if not output or output.endswith(os.sep) or os.path.isdir(output):
        raise MergeError(f"merge: `output` {shown(output, 200)!s}: give the merged file's name, e.g. `output` all.sqlite")
    folder = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(folder):
        raise MergeError(f"merge: `output` {shown(output, 200)}: the folder {shown(folder, 200)} does not exist")
    existing = [output] if os.path.exists(output) else []
    with _readable([*existing, *inputs], output) as readable:
        paths = _check_inputs(inputs, output, readable)
        before_runs: set[str] = set()
        before_drills: set[str] = set()
        if existing:
            try:
                read_results(readable[output])   # the output, too, is read as an input: vetted the same way
                previous = _read_input(readable[output])
            except ZfslabError as e:
                raise _input_error(e, output, readable[output], "`output` ") from None
            before_runs, before_drills = set(previous["runs"]), set(previous["drills"])
            paths = [output, *paths]

        runs: dict[str, list[dict]] = {}
        drills: dict[str, list[dict]] = {}
        pools: dict[str, dict] = {}
        intents: dict[tuple, dict] = {}
        for path in paths:
            try:
                data = _read_input(readable[path])
            except ZfslabError as e:
                raise _input_error(e, path, readable[path]) from None
            for ident, r in data["runs"].items():
                runs.setdefault(ident, []).append(r)
            for ident, d in data["drills"].items():
                drills.setdefault(ident, []).append(d)
            for p in data["pools"]:   # one pool, one GUID: the same row wherever copied, whatever its local run id
                seen = pools.get(p["guid"])
                if seen is None or _sort_key(dict(p, run_id=None)) < _sort_key(dict(seen, run_id=None)):
                    pools[p["guid"]] = p
            for i in data["intents"]:   # one create, one row: its run (by identity), name, mark and layout
                intents.setdefault((i["run_uid"] or "", i["purpose"], i["name"], i["mark"], i["layout"]), i)
        return _write_output(output, folder, runs, drills, pools, intents, len(inputs), before_runs, before_drills,
                             accept)


def _write_output(output, folder, runs, drills, pools, intents, inputs, before_runs, before_drills,
                  accept) -> MergeSummary:
    """The merged file built whole under a temporary name beside -o, then renamed over it."""
    def unwritable(reason: str) -> MergeError:
        return MergeError(f"merge: `output` {shown(output, 200)}: cannot be written ({reason}); give `output` a file in a "
                          "folder you can write, with room for it")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".zfslab-merge-", suffix=".sqlite", dir=folder)
    except OSError as e:   # a folder the user cannot write, a full or read-only file system
        raise unwritable(e.strerror or str(e)) from None
    os.close(fd)
    os.unlink(tmp)   # connect() makes a zfslab database of a new name, not of someone's empty file
    try:
        try:
            conn = connect(tmp)
            try:
                summary = _write(conn, runs, drills, pools, intents, inputs, before_runs, before_drills, accept)
                conn.execute("PRAGMA journal_mode = DELETE")   # one self-contained file, no -wal beside it
            finally:
                conn.close()
            os.replace(tmp, output)
        except OSError as e:
            raise unwritable(e.strerror or str(e)) from None
        except sqlite3.Error as e:   # "database or disk is full", "disk I/O error"
            raise unwritable(str(e)) from None
        except ZfslabError as e:   # connect()'s own refusal of the new file (no room to create it)
            raise unwritable(str(e.args[-1]) if e.args else str(e)) from None
    finally:
        for leftover in (tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return summary


def _write(conn, runs, drills, pools, intents, inputs, before_runs, before_drills, accept) -> MergeSummary:
    cols = {t: set(_columns(conn, t)) - {"id"} for t in
            ("runs", "run_disks", "measurements", "layout_capacity", "drills", "resilvers", "resilver_disks", "pools",
             "pool_intents")}
    run_ids: dict[str, int] = {}
    measurements = 0
    origins: set[str] = set()
    with atomic(conn):
        # the copy to keep: a finished one first, then by content, so the order of the inputs is moot
        order = sorted(runs, key=lambda i: (min(c["row"]["started_at"] for c in runs[i]), i))
        for ident in order:
            copies = sorted(runs[ident], key=lambda c: (c["row"].get("finished_at") is None, _sort_key(c["row"])))
            copies = [dict(c, **_run_detail(c["path"], c["row"]["id"])) for c in copies]   # one run in memory at once
            row = dict(copies[0]["row"], uid=ident)
            row["origin"] = row.get("origin") or row.get("hostname")
            if row["origin"]:
                origins.add(row["origin"])
            rid = run_ids[ident] = _insert(conn, "runs", row, cols["runs"])
            for d in sorted(copies[0]["disks"], key=lambda d: d["position"]):
                _insert(conn, "run_disks", dict(d, run_id=rid), cols["run_disks"])
            seen: dict[tuple, dict] = {}
            for c in copies:
                for m in c["measurements"]:
                    if accept is not None and not accept(row["origin"], m["layout"]):
                        continue
                    key = (m["layout"], m["test"], m["repeat"])
                    if key not in seen or _sort_key(m) < _sort_key(seen[key]):
                        seen[key] = m
            for key in sorted(seen):
                _insert(conn, "measurements", dict(seen[key], run_id=rid), cols["measurements"])
            measurements += len(seen)
            caps = {c2["layout"]: c2 for c in reversed(copies) for c2 in c["capacity"]}
            for layout in sorted(caps):
                _insert(conn, "layout_capacity", dict(caps[layout], run_id=rid), cols["layout_capacity"])
        for ident in sorted(drills, key=lambda i: (min(c["row"]["started_at"] for c in drills[i]), i)):
            copy = min(drills[ident], key=lambda c: _sort_key(c["row"]))
            row = dict(copy["row"], uid=ident)
            if row.get("origin"):
                origins.add(row["origin"])
            did = _insert(conn, "drills", row, cols["drills"])
            for r in copy["resilvers"]:
                rsid = _insert(conn, "resilvers", dict(r, drill_id=did), cols["resilvers"])
                for d in r["disks"]:
                    _insert(conn, "resilver_disks", dict(d, resilver_id=rsid), cols["resilver_disks"])
        for guid in sorted(pools):
            p = pools[guid]
            _insert(conn, "pools", dict(p, run_id=run_ids.get(p["run_uid"])), cols["pools"])
        for key in sorted(intents):
            i = intents[key]
            _insert(conn, "pool_intents", dict(i, run_id=run_ids.get(i["run_uid"])), cols["pool_intents"])
    return MergeSummary(inputs, len(runs), len(set(runs) - before_runs), measurements, len(drills),
                        len(set(drills) - before_drills), tuple(sorted(origins)))
