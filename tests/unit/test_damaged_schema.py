"""A results file damaged in a table's schema, not in a row. SQLite takes a byte above 0x7f as part
of a name, so the schema still parses: the damage shows only when a read meets that table, as a
column name sqlite3 cannot decode as UTF-8 (SELECT *) or a column that is not there (a SELECT by
name). Each reader must word it as damage, in one line. Issue 38's fuzz campaign of 2026-11-28
found `plan --db` ending in an internal error (UnicodeDecodeError) on the resilvers table, read
after read_results() had passed the file; the bench and drill gates' readers had no check at all."""

from __future__ import annotations

import pytest

from cli_fuzz import zfslab_db_bytes

from zfslab.store.readback import DamagedDatabase, read_resilvers
from zfslab.store.runs import drill_records, recorded_histories


def damaged(tmp_path, table: str, column: bytes) -> str:
    """zfslab's own results file with the first byte of `column` in `table`'s CREATE TABLE made 0x89."""
    data = bytearray(zfslab_db_bytes())
    create = data.find(b"CREATE TABLE " + table.encode() + b" ")
    assert create >= 0, f"no CREATE TABLE {table} in the file"
    at = data.find(b" " + column + b" ", create, data.find(b"\n        )", create)) + 1
    assert at > create, f"no column {column!r} in CREATE TABLE {table}"   # find()'s -1, plus 1, is 0
    data[at] = 0x89
    path = tmp_path / f"{table}.sqlite"
    path.write_bytes(bytes(data))
    return str(path)


def test_plan_db_words_a_damaged_resilvers_schema_in_one_line(tmp_path, run_cli):
    path = damaged(tmp_path, "resilvers", b"drill_id")
    with pytest.raises(DamagedDatabase, match="not UTF-8"):
        read_resilvers(path)
    r = run_cli("plan", "6x4TB", "--db", path)
    assert r.exit_code == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "damaged" in lines[0] and "internal error" not in lines[0], r.stderr


@pytest.mark.parametrize("read, table, column", [(drill_records, "pools", b"purpose"),
                                                 (drill_records, "pool_intents", b"mark"),
                                                 (recorded_histories, "disk_history", b"written_bytes")])
def test_the_gates_readers_word_a_damaged_schema_as_damage(tmp_path, read, table, column):
    with pytest.raises(DamagedDatabase, match="SQLite cannot read it"):
        read(damaged(tmp_path, table, column))
