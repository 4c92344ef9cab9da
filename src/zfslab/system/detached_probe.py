"""What a host says of its detached bench (`zfslab bench --probe-detached PREFIX`, run there by the
controller's status, collect and stop): whether it started, whether a process of its session
still runs in this boot (or the host booted since it started), its exit code once it ended by itself, the layouts its database holds
finished. Reads only."""

from __future__ import annotations

import os

from zfslab.store.schema import EmptyDatabase, has_table, open_readonly

BOOT_ID = "/proc/sys/kernel/random/boot_id"


def probe(prefix: str, db: str, origin: str) -> dict:
    """The host's answer as JSON-ready data; `pid`: the session leader the launch script recorded."""
    pid, boot = _pid_file(prefix + ".pid")
    rebooted = pid is not None and boot != _read(BOOT_ID)   # its pid is another boot's: the run died with it
    alive = pid is not None and not rebooted and _session_alive(pid)
    code = _read(prefix + ".exit")
    return {"started": pid is not None, "pid": pid, "alive": alive, "rebooted": rebooted,
            "exit_code": int(code) if code and code.lstrip("-").isdigit() else None,
            "done": finished_layouts(db, origin)}


def finished_layouts(db: str, origin: str) -> list[str]:
    """Layouts of this host's finished runs in its database (one layout a run)."""
    if not os.path.exists(db):
        return []
    try:
        conn = open_readonly(db)
    except EmptyDatabase:   # a bench creating it: the file is there, its first migration not yet
        return []
    try:
        if not has_table(conn, "measurements"):
            return []
        if "origin" not in {r[1] for r in conn.execute("PRAGMA table_info(runs)")}:
            return []   # a bench still migrating a new database (one transaction a step): nothing of it finished
        rows = conn.execute("SELECT DISTINCT m.layout FROM runs r JOIN measurements m ON m.run_id = r.id "
                            "WHERE r.finished_at IS NOT NULL AND r.origin = ? ORDER BY m.layout", (origin,))
        return [r[0] for r in rows]
    finally:
        conn.close()


def _pid_file(path: str) -> tuple[int | None, str]:
    parts = (_read(path) or "").split()
    if not parts or not parts[0].isdigit():
        return None, ""
    return int(parts[0]), parts[1] if len(parts) > 1 else ""


def _session_alive(sid: int) -> bool:
    """Any process of the session the launch began (its shell, the bench, fio): the shell may be
    gone while the bench it started still cleans up."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if stat and ")" in stat:
            fields = stat.rsplit(")", 1)[1].split()
            if len(fields) > 3 and fields[0] != "Z" and fields[3] == str(sid):
                return True
    return False


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None
