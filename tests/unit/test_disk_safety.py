"""The safety gate's parts that run without ZFS: the emptiness sample, what counts as zfslab's
own leftover, foreign databases, children that die with zfslab, engines ended on a pool.
The same gate on real disks and the real module: tests/e2e/inside/test_safety.py."""

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO
from zfslab.store.schema import NoDatabase, NotOurDatabase, connect, open_readonly
from zfslab.system.disk_gate import Consent, gate
from zfslab.system.disks import (SAMPLE_DEADLINE_S, SAMPLE_DENSE_MAX_BYTES, SAMPLE_REGION_BYTES, SAMPLE_REGIONS_MAX,
                                 SAMPLE_SPACING_BYTES, DiskInfo, DisksRefused, Finding, inspect_file, is_leftover_of,
                                 read_samples, sample_findings, sample_offsets, sample_plan, zero_samples)
from zfslab.system.processes import PoolInUse, end_engines_on, users_of

GIB = 1 << 30


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)
    return str(path)


def unread_stretches(size, offsets):
    ends = [o + SAMPLE_REGION_BYTES for o in offsets]
    return [b - a for a, b in zip(ends, offsets[1:])] + [offsets[0], size - ends[-1]]


def test_the_sample_spans_the_whole_disk():
    for size in ((256 << 20) + 4096, 2 * GIB, 16 * GIB - (1 << 20), 16 * GIB - 4096, 16 * GIB, 4 * 10**12,
                 4 * 10**12 + 512, 20 * 10**12):
        offsets = sample_offsets(size)
        assert len(offsets) <= SAMPLE_REGIONS_MAX and offsets[0] == 0
        assert offsets[-1] + SAMPLE_REGION_BYTES <= size and size - (offsets[-1] + SAMPLE_REGION_BYTES) < 4096
        assert all(b - a >= SAMPLE_REGION_BYTES for a, b in zip(offsets, offsets[1:]))  # no region read twice
        assert all(o % 4096 == 0 for o in offsets)
        gaps = [b - a for a, b in zip(offsets, offsets[1:])]
        assert len(set(gaps[:-1])) == 1 and gaps[-1] <= gaps[0]  # evenly spread, the last page at the end
        if size <= SAMPLE_DENSE_MAX_BYTES:  # a page at every MiB: no unread stretch holds a whole MiB
            assert gaps[0] == SAMPLE_SPACING_BYTES and max(unread_stretches(size, offsets)) < SAMPLE_SPACING_BYTES
        else:  # too large for a page a MiB within the cap: as many pages as allowed
            assert len(offsets) > SAMPLE_REGIONS_MAX - 100
        assert sample_offsets(size) == offsets  # the same regions every time: the wipe and the check agree
        passes = sample_plan(size).passes()
        assert sorted(o for p in passes for o in p) == offsets and all(p == sorted(p) for p in passes)
        assert passes[0] == [0, offsets[-1]] and len(passes[1]) == 1
    assert len(sample_offsets(20 * 10**12)) == SAMPLE_REGIONS_MAX
    assert len(sample_offsets(2 * GIB)) == 2049 and (768 << 20) in sample_offsets(2 * GIB)
    assert sample_offsets(3 << 20) == [0, 1 << 20, 2 << 20, (3 << 20) - 4096]  # 3 MiB: a page a MiB and the last
    assert sample_offsets(4096) == [0] and sample_offsets(0) == [] and sample_offsets(4095) == []
    assert sample_offsets(12288) == [0, 8192]


def test_a_page_a_mib_ends_exactly_where_the_code_says_and_the_docs_say_so():
    """Issue 38: docs/safety.md said "no unread MiB below 16 GiB", but in the last MiB below
    16 GiB a page a MiB needs one page more than the cap, and the step grows past a MiB. Sizes
    over that last MiB and every page around the limit (and a byte either side of each page);
    the figures in the docs are computed here."""
    def dense(size):
        return max(unread_stretches(size, sample_offsets(size))) < SAMPLE_SPACING_BYTES
    pages = range(SAMPLE_DENSE_MAX_BYTES - 8 * 4096, SAMPLE_DENSE_MAX_BYTES + 8 * 4096, 4096)
    for size in {*range(16 * GIB - (1 << 20), 16 * GIB + 1, 1 << 16), *(p + d for p in pages for d in (-1, 0, 1))}:
        assert dense(size) == (size <= SAMPLE_DENSE_MAX_BYTES), size
    assert dense(SAMPLE_DENSE_MAX_BYTES) and not dense(SAMPLE_DENSE_MAX_BYTES + 1)
    assert SAMPLE_DENSE_MAX_BYTES < 16 * GIB - (1 << 20) + 8192
    text = " ".join(open(os.path.join(REPO, "docs", "safety.md")).read().split())
    limit_mib = (SAMPLE_DENSE_MAX_BYTES + 1) / (1 << 20)  # the first size that no longer gets a page a MiB
    assert f"up to {SAMPLE_DENSE_MAX_BYTES:,} bytes" in text and f"({limit_mib:,.3f} MiB)" in text
    tb4 = sample_offsets(4 * 10**12)
    assert f"{(tb4[1] - tb4[0]) / (1 << 20):.2f} MiB on a 4 TB disk" in text
    assert "244 MiB" not in text and "below 16 GiB no unread" not in text.lower()


def test_an_island_at_a_mib_boundary_is_read_early():
    """The audit's island (768 MiB of a 2 GiB disk) holds a page of the fourth sweep: the 7th
    read, so a read the budget cuts short still finds it."""
    order = [o for sweep in sample_plan(2 * GIB).passes() for o in sweep]
    assert order.index(768 << 20) == 6


def write_at(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def test_one_mib_between_the_old_samples_reads_as_data(tmp_path):
    """Issue 26's audit: 1 MiB of random data at 768 MiB lay between 64 regions of 1 MiB."""
    for size in (GIB, 2 * GIB):
        path = sparse(tmp_path / f"d{size}", size)
        write_at(path, 768 << 20, os.urandom(1 << 20))
        sample = read_samples(path, exclusive=False)
        assert sample.complete and sample.dirty >= 1 and (768 << 20) <= sample.first_dirty < (769 << 20)
        assert not inspect_file(path).safe
        zero_samples(path)  # zfslab's own wipe: the disk reads as empty again
        assert read_samples(path, exclusive=False).dirty == 0 and inspect_file(path).safe


def test_a_wiped_header_with_data_behind_it_reads_as_holding_data(tmp_path):
    path = sparse(tmp_path / "d", 2 * GIB)
    empty = read_samples(path, exclusive=False)
    assert (empty.sampled, empty.planned, empty.dirty, empty.first_dirty) == (2049, 2049, 0, None)
    write_at(path, 16 << 20, os.urandom(1 << 20) * 256)  # the header is zero, data from 16 MiB on (issue 19)
    sample = read_samples(path, exclusive=False)
    # the read stops at the first region that is not zero: one is proof enough, and it is the
    # first the coarse-to-fine order reaches (256 MiB, the sixth read), not the lowest
    assert sample.dirty == 1 and sample.complete and sample.first_dirty == 256 << 20
    assert sample.sampled == 6
    info = inspect_file(path)
    assert not info.safe and "holds data of unknown kind: the sampled 4 KiB at byte" in info.reasons[0]
    zero_samples(path)
    assert read_samples(path, exclusive=False).dirty == 0 and inspect_file(path).safe


class Ticks:
    """A clock that moves `step_s` each time it is read: a read of the sample as slow as the
    machine's load or the disk makes it (the clock is read once before each page after the first)."""

    def __init__(self, step_s=1.0):
        self.now, self.step_s = 0.0, step_s

    def __call__(self):
        self.now += self.step_s
        return self.now


def test_a_loaded_machine_still_reads_every_planned_page(tmp_path):
    """Issue 38: with 3-4 TCG guests on 2 cores a 4 s budget read 122-895 of 1,025 pages of
    blank disks, with a note and no refusal, so an island at a page planned late was accepted.
    Here each page takes 0.2 s (2,049 pages: 410 s, a hundred times that budget): every page is
    read, and an island at the page read last is found."""
    path = sparse(tmp_path / "d", 2 * GIB)
    sample = read_samples(path, exclusive=False, clock=Ticks(0.2))
    assert (sample.sampled, sample.planned, sample.dirty) == (2049, 2049, 0) and sample.complete
    assert sample_findings(sample) == [] and inspect_file(path).safe
    last = [o for sweep in sample_plan(2 * GIB).passes() for o in sweep][-1]
    write_at(path, last + 4000, b"island")
    sample = read_samples(path, exclusive=False, clock=Ticks(0.2))
    assert sample.sampled == 2049 and sample.first_dirty == last
    assert [f.kind for f in sample_findings(sample)] == ["content"]


def test_a_disk_too_slow_to_read_its_sample_is_refused_as_unverified(tmp_path):
    path = sparse(tmp_path / "d", 2 * GIB)
    offsets = sample_offsets(2 * GIB)
    # 1 s a page and 2.5 s allowed: 3 pages are read, the first sweep (first, last) and the middle
    sample = read_samples(path, exclusive=False, deadline_s=2.5, clock=Ticks())
    assert (sample.sampled, sample.planned, sample.dirty) == (3, 2049, 0) and not sample.complete
    [found] = sample_findings(sample)
    assert found.kind == "unverified"
    assert found.text.startswith("could not verify it holds no data: read 3 of 2,049 planned pages in 4 s")
    disk = DiskInfo("/dev/sdb", "/dev/sdb", 2 * GIB, "SER1", "disk", True, (found,))
    with pytest.raises(DisksRefused) as refused:
        gate([disk], set(), Consent(), sandbox=False)
    assert refused.value.exit_code == 10 and "/dev/sdb (/dev/sdb, serial SER1): could not verify" in str(refused.value)
    assert not is_leftover_of(disk, {"111"})
    gate([disk], set(), Consent(wipe=True, serials=frozenset({"SER1"})), sandbox=False)  # the user's typed consent
    write_at(path, offsets[len(offsets) // 2], b"x")  # the middle page, read third: data found in time
    sample = read_samples(path, exclusive=False, deadline_s=2.5, clock=Ticks())
    assert sample.sampled == 3 and sample.dirty == 1 and sample.first_dirty == offsets[len(offsets) // 2]
    assert sample.complete and [f.kind for f in sample_findings(sample)] == ["content"]
    assert SAMPLE_DEADLINE_S >= 16384 * 0.030  # a healthy HDD's largest plan (~7 ms a page) fits with room


def test_the_wipe_zeroes_every_planned_region(tmp_path):
    path = sparse(tmp_path / "d", 2 * GIB)
    offsets = sample_offsets(2 * GIB)
    for o in offsets[1::97]:
        write_at(path, o + 100, b"y")
    zero_samples(path)
    assert read_samples(path, exclusive=False).dirty == 0


def test_an_old_zfslab_wipe_reads_as_data_under_the_new_sample(tmp_path):
    """Before issue 26 the wipe zeroed 64 regions of 1 MiB; fio's data between them stays. The
    new sample reads it: such a disk needs --wipe with its serial once (docs/safety.md)."""
    path = sparse(tmp_path / "d", GIB)
    write_at(path, 8 << 20, os.urandom(4 << 20))  # fio's patterns, between the old regions
    last = GIB - (1 << 20)
    with open(path, "r+b") as f:
        for i in range(64):  # the old wipe, as it was
            f.seek((last * i // 63) // 4096 * 4096)
            f.write(bytes(1 << 20))
    assert not inspect_file(path).safe


def label(guid, name="zfslab-bench"):
    return Finding("zfs-label", f"holds a zfs_member signature of pool {name!r} (GUID {guid}) on /dev/x1", "zfs_member",
                   guid)


def info(*findings):
    return DiskInfo("/dev/x", "/dev/x", 10**12, "S", "M", True, tuple(findings))


def test_a_leftover_is_proven_only_by_a_recorded_guid():
    gpt = Finding("partition-table", "holds a gpt partition table", "gpt")
    pmbr = Finding("signature", "holds a PMBR signature", "PMBR")
    data = Finding("content", "holds data of unknown kind: 60 of 64 ...")
    ours = {"111"}
    assert is_leftover_of(info(gpt, pmbr, label("111"), data), ours)
    # the user's own pool made on the disk after the interrupted run (issue 19's second case)
    assert not is_leftover_of(info(gpt, pmbr, label("222", "tank"), data), ours)
    assert not is_leftover_of(info(gpt, label("111"), label("222", "tank")), ours)
    assert not is_leftover_of(info(gpt, pmbr, data), ours)  # no label: nothing proves it is ours
    assert not is_leftover_of(info(label("")), {""})  # a label whose GUID could not be read
    for other in (Finding("signature", "holds a ext4 signature on /dev/x2", "ext4"),
                  Finding("partition-table", "holds a dos partition table", "dos"),
                  Finding("mounted", "is mounted at /mnt"), Finding("busy", "is in use"),
                  Finding("held", "is held by dm-0")):
        assert not is_leftover_of(info(gpt, label("111"), other), ours), other
    assert not is_leftover_of(info(gpt, label("111")), set())


def test_a_foreign_database_is_refused_and_left_byte_identical(tmp_path):
    other = tmp_path / "photos.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE runs (id INTEGER, what TEXT)")
    conn.execute("INSERT INTO runs VALUES (1, 'holiday')")
    conn.commit()
    conn.close()
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    before = {p: p.read_bytes() for p in (other, text)}
    for path, words in ((other, "not zfslab's"), (text, "not an SQLite database"), (tmp_path, "a directory")):
        for opener in (connect, open_readonly):
            with pytest.raises(NotOurDatabase, match=words):
                opener(str(path))
    with pytest.raises(NoDatabase):
        open_readonly(str(tmp_path / "missing.sqlite"))
    assert not (tmp_path / "missing.sqlite").exists()
    assert {p: p.read_bytes() for p in (other, text)} == before
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "photos.sqlite"]  # no -wal, no -shm


def test_schema_version_holding_text_is_not_ours(tmp_path):
    path = tmp_path / "v.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version)")
    conn.execute("INSERT INTO schema_version VALUES ('one')")
    conn.commit()
    conn.close()
    with pytest.raises(NotOurDatabase, match="version numbers"):
        open_readonly(str(path))


def test_reading_our_database_changes_nothing(tmp_path):
    path = str(tmp_path / "r.sqlite")
    conn = connect(path)
    conn.execute("INSERT INTO pools VALUES ('7', 'zfslab-bench', 'bench', NULL, 'mirror:2', 'now')")
    conn.close()
    before = open(path, "rb").read()
    ro = open_readonly(path)
    assert ro.execute("SELECT guid FROM pools").fetchall()[0][0] == "7"
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        ro.execute("CREATE TABLE x (y)")
    ro.close()
    assert open(path, "rb").read() == before and os.listdir(tmp_path) == ["r.sqlite"]


def test_a_child_dies_with_zfslab(tmp_path):
    """SIGKILL the process that runs a child through Runner: the kernel kills the child too."""
    pidfile = tmp_path / "child.pid"
    script = ("from zfslab.system.runner import Runner\n"
              f"Runner().run(['sh', '-c', 'echo $$ > {pidfile}; exec sleep 300'], timeout_s=600)\n")
    parent = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline and parent.poll() is None, "the child never started"
        time.sleep(0.02)
    child = int(pidfile.read_text())
    assert os.path.exists(f"/proc/{child}")
    parent.kill()
    parent.wait()
    while os.path.exists(f"/proc/{child}") and open(f"/proc/{child}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        assert time.monotonic() < deadline + 30, "the child outlived its parent"
        time.sleep(0.02)


def _start(name, cwd, tmp_path):
    """A long-running process called `name` working in cwd (a copy of sleep, renamed)."""
    exe = tmp_path / name
    shutil.copy(shutil.which("sleep"), exe)
    return subprocess.Popen([str(exe), "300"], cwd=cwd)


def test_engines_on_our_pool_are_ended_and_nothing_else_is(tmp_path):
    pool = tmp_path / "pool"
    (pool / "fs").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    fio = _start("fio", pool / "fs", tmp_path)
    bystander = _start("bonnie++", elsewhere, tmp_path)  # an engine, but not on this pool
    try:
        assert [u.pid for u in users_of(str(pool))] == [fio.pid]
        ended = end_engines_on(str(pool))
        assert [(u.pid, u.name) for u in ended] == [(fio.pid, "fio")]
        assert fio.wait(timeout=30) == -signal.SIGKILL
        assert bystander.poll() is None
        shell = _start("bash", pool, tmp_path)  # someone's shell in the pool: never killed
        try:
            with pytest.raises(PoolInUse, match=f"bash \\(pid {shell.pid}\\)"):
                end_engines_on(str(pool))
            assert shell.poll() is None
        finally:
            shell.kill()
            shell.wait()
    finally:
        for p in (fio, bystander):
            p.kill()
            p.wait()


def test_a_refusal_lists_one_disk_a_line_and_nothing_else_breaks_a_line(capsys):
    from zfslab.cli import main
    from zfslab.system.disks import DisksRefused, check_wipe_allowed

    def refused(*_):
        check_wipe_allowed([info(label("222", "tank")), DiskInfo("/dev/y\n\x1b[2J", "/dev/y", 1, "T", "M", True,
                                                                (Finding("content", "holds data"),))],
                           wipe=False, confirmed_serials=set())
    import zfslab.commands.layout as layout_cmd
    original = layout_cmd.run
    layout_cmd.run = refused
    try:
        code = main(["layout", "mirror:2"])
    finally:
        layout_cmd.run = original
    err = capsys.readouterr().err
    assert code == DisksRefused.exit_code
    lines = err.splitlines()
    assert lines[0] == "zfslab: error: refusing disks that hold data (nothing was written):"
    assert [line.split(" (")[0] for line in lines[1:3]] == ["  /dev/x", "  /dev/y\\n\\x1b[2J"]
    assert len(lines) == 4 and lines[3].startswith("to destroy their contents, pass --wipe")


def test_a_fifo_given_as_a_database_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "results.sqlite"
    os.mkfifo(fifo)
    for opener in (connect, open_readonly):
        with pytest.raises(NotOurDatabase, match="not a regular file"):
            opener(str(fifo))


def test_a_dry_run_says_what_the_gate_would_do_without_asking(capsys, monkeypatch):
    import argparse
    from zfslab.commands._disks import dry_run_verdict
    from zfslab.system.disks import DiskInfo, Finding
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    data = DiskInfo("/dev/sdb", "/dev/sdb", 4 * 10**12, "SER1", "disk", True,
                    (Finding("content", "holds data of unknown kind"),))
    empty = DiskInfo("/dev/sdc", "/dev/sdc", 4 * 10**12, "SER2", "disk", True)

    def verdict(**kw):
        args = argparse.Namespace(**({"wipe": False, "confirm_serials": None} | kw))
        code = dry_run_verdict([data, empty], frozenset(), args, sandbox=False)
        return code, capsys.readouterr().err
    code, err = verdict()
    assert code == 10 and "would be refused" in err and "/dev/sdb" in err and "/dev/sdc" not in err
    code, err = verdict(wipe=True, confirm_serials="SER1")
    assert code == 0 and "would wipe them first" in err
    code, err = verdict(wipe=True, confirm_serials="SERX")
    assert code == 10 and "would be refused" in err
    code, err = verdict(wipe=True)  # no terminal to type the serials at: the run would refuse
    assert code == 10
    assert dry_run_verdict([empty], frozenset(), argparse.Namespace(wipe=False, confirm_serials=None), False) == 0
