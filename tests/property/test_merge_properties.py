"""merge is a set union of runs and measurements: order of inputs is moot, merging again changes
nothing, and the inputs are byte-identical after (issue 27)."""

import hashlib
import os
import sqlite3
import tempfile

from hypothesis import given, settings, strategies as st

from tests.fleet_data import RunSpec, content, write_db
from zfslab.store.merge import merge

MEASURES = tuple((layout, test, rep) for layout in ("mirror:2", "raidz2:6") for test in ("seqread", "randwrite")
                 for rep in range(2))
UNIVERSE = [(f"u{i}" if i % 3 else None, f"st0{i % 3}", f"2026-11-0{1 + i}T10:00:00+00:00") for i in range(5)]

# each file: for some runs of the universe, a copy holding the first k of its measurements
files_st = st.lists(st.dictionaries(st.integers(0, len(UNIVERSE) - 1), st.integers(1, len(MEASURES)), max_size=4),
                    min_size=1, max_size=4)
drills_st = st.lists(st.lists(st.sampled_from([("d1", "st01", "2026-11-09T00:00"), (None, "st02", "2026-11-09T01:00")]),
                              max_size=2, unique=True), min_size=4, max_size=4)


def _write(folder, files, drills):
    paths = []
    for n, spec in enumerate(files):
        path = os.path.join(folder, f"in{n}.sqlite")
        runs = [RunSpec(UNIVERSE[i][0], UNIVERSE[i][1], UNIVERSE[i][2], MEASURES[:k], finished=k == len(MEASURES))
                for i, k in sorted(spec.items())]
        write_db(path, runs, drills[n])
        paths.append(path)
    return paths


def _sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _rows_with_ids(path):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in
                ("runs", "run_disks", "measurements", "drills", "layout_capacity")]
    finally:
        conn.close()


@settings(max_examples=25, deadline=None)
@given(files=files_st, drills=drills_st, data=st.data())
def test_merge_commutes_is_idempotent_and_leaves_inputs_alone(files, drills, data):
    with tempfile.TemporaryDirectory() as folder:
        paths = _write(folder, files, drills)
        before = {p: _sha(p) for p in paths}
        listing = set(os.listdir(folder))
        shuffled = data.draw(st.permutations(paths))
        ab, ba = os.path.join(folder, "ab.sqlite"), os.path.join(folder, "ba.sqlite")
        merge(paths, ab)
        merge(shuffled, ba)
        assert content(ab) == content(ba)
        assert _rows_with_ids(ab) == _rows_with_ids(ba)   # ids too: the output's order follows content alone
        assert {p: _sha(p) for p in paths} == before
        assert set(os.listdir(folder)) == listing | {"ab.sqlite", "ba.sqlite"}
        # merging again, into the same output or from it, changes nothing
        once = content(ab)
        again = merge(paths, ab)
        assert content(ab) == once and again.runs_added == 0 and again.drills_added == 0
        twice = os.path.join(folder, "twice.sqlite")
        merge([ab, *paths], twice)
        assert content(twice) == once
        # every run of the universe that any file holds is there once, with every measurement any copy held
        runs = {i: max(spec[i] for spec in files if i in spec) for i in {i for spec in files for i in spec}}
        assert len(once["runs"]) == len(runs)
        assert len(once["measurements"]) == sum(runs.values())
        assert len(once["drills"]) == len({d for ds in drills[:len(files)] for d in ds})
