"""system/suites.py: the tests of each suite, the fio argv they build, checked against fio itself.

fio's documented options (fio(1), `fio --cmdhelp=OPTION`): size is per job (each of numjobs
clones does its own); fsync=N issues an fsync after every N writes (1: every write, a sync
workload); end_fsync=1 syncs the file when the write stage ends; time_based runs for runtime
even when the file is done; overwrite=1 writes over existing data; filename_format names the
files from $jobnum and $filenum (default $jobname.$jobnum.$filenum).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from zfslab.commands._common import PARAM_FLAGS
from zfslab.errors import ParamError
from zfslab.model.units import parse_fio_size
from zfslab.system.fio import Fio, FioJob
from zfslab.system.runner import CommandFailed, Runner
from zfslab.system.suites import BONNIE_TESTS, DEFAULTS, SUITES, suite_tests, with_overrides
from zfslab.system.suites import Test as SuiteTest  # not `Test`: pytest would try to collect it

needs_fio = pytest.mark.usefixtures("needs_fio")  # skips, or fails under ZFSLAB_TEST_REQUIRE_TOOLS=1
MNT = "/zfslab-bench"


def all_tests():
    return [(suite, t) for suite, tests in SUITES.items() for t in tests]


def job_of(suite: str, t: SuiteTest, directory: str = MNT) -> FioJob:
    size, runtime, ramp = DEFAULTS[suite]
    return t.job(directory, size=size, runtime_s=runtime, ramp_s=ramp)


# ---- the suites --------------------------------------------------------------------------------

def test_ars_is_every_chart_of_the_article_once():
    ars = {t.name: t for t in SUITES["ars"]}
    assert len(ars) == len(SUITES["ars"]) == 12
    for bs in ("4k", "1m"):
        for tag, jobs in (("t1q1", 1), ("t8q8", 8)):
            read, write, sync = (ars[f"{kind}-{bs}-{tag}"] for kind in ("randread", "randwrite", "syncwrite"))
            for t in (read, write, sync):
                assert (t.bs, t.numjobs, t.iodepth, t.time_based, t.overwrite) == (bs, jobs, jobs, True, False)
            assert (read.rw, read.fsync, read.end_fsync) == ("randread", None, False)
            assert (write.rw, write.fsync, write.end_fsync) == ("randwrite", None, True)
            assert (sync.rw, sync.fsync, sync.end_fsync) == ("randwrite", 1, False)  # fsync after every write
    assert [t.name for t in SUITES["ars"]][:3] == ["randread-4k-t1q1", "randwrite-4k-t1q1", "syncwrite-4k-t1q1"]


def test_seq_writes_rewrites_in_place_then_reads_a_large_file():
    seqwrite, rewrite, seqread = SUITES["seq"]
    assert [(t.name, t.rw, t.bs, t.numjobs, t.iodepth) for t in SUITES["seq"]] == [
        ("seqwrite", "write", "1m", 1, 1), ("rewrite", "write", "1m", 1, 1), ("seqread", "read", "1m", 1, 1)]
    assert not any(t.time_based for t in SUITES["seq"])  # each runs through the whole file
    assert (seqwrite.end_fsync, seqwrite.overwrite) == (True, False)
    assert (rewrite.end_fsync, rewrite.overwrite) == (True, True)
    assert (seqread.end_fsync, seqread.overwrite) == (False, False)


def test_quick_is_four_short_tests():
    assert [(t.name, t.rw, t.bs, t.fsync, t.time_based) for t in SUITES["quick"]] == [
        ("seqwrite", "write", "1m", None, False), ("seqread", "read", "1m", None, False),
        ("randread-4k-t1q1", "randread", "4k", None, True), ("syncwrite-4k-t1q1", "randwrite", "4k", 1, True)]


@pytest.mark.parametrize("suite", ["seq", "quick"])
def test_each_read_test_follows_a_write_of_the_same_files(suite):
    # the files are named by job number only (filename_format below): a read test of N jobs
    # reads what an earlier write test of N jobs wrote, at the suite's one size
    written: set[int] = set()
    for t in SUITES[suite]:
        if t.rw in ("read", "randread"):
            assert t.numjobs in written, t.name
        else:
            written.add(t.numjobs)


def test_names_are_unique_in_each_suite_and_name_their_block_size():
    for suite, tests in SUITES.items():
        names = [t.name for t in tests]
        assert len(set(names)) == len(names), suite
        for t in tests:
            if "-" in t.name:
                assert t.name.split("-")[1] == t.bs, t.name


def test_reads_is_true_for_read_tests_only():
    assert {t.name for _, t in all_tests() if t.reads} == {
        "randread-4k-t1q1", "randread-4k-t8q8", "randread-1m-t1q1", "randread-1m-t8q8", "seqread"}


def test_defaults_per_suite():
    assert DEFAULTS == {"ars": ("4g", 60, 10), "seq": ("16g", 0, 0), "quick": ("1g", 10, 2), "bonnie": ("16g", 0, 0)}
    assert set(DEFAULTS) == set(SUITES) | {"bonnie"}
    # fio sizes are powers of two (kb_base=1024): 4g = 4 GiB
    assert parse_fio_size(DEFAULTS["ars"][0]) == 4 * 2**30
    assert parse_fio_size(DEFAULTS["seq"][0]) == 16 * 2**30


def test_suite_tests_by_name():
    assert suite_tests("ars") is SUITES["ars"]
    assert suite_tests("quick") == SUITES["quick"]
    assert suite_tests("bonnie") == []  # bonnie++ runs itself; its columns are these three
    assert BONNIE_TESTS == ("bonnie-write", "bonnie-rewrite", "bonnie-read")


@pytest.mark.parametrize("name", ["nope", "", "ARS", "job.fio"])
def test_an_unknown_suite_says_what_to_use(name):
    with pytest.raises(ParamError) as e:
        suite_tests(name)
    # the library names its setting; the command layer words it as the flag (issue 37)
    assert str(e.value) == f"suite {name}: use ars, seq, quick, bonnie or a FILE.fio job file"
    assert e.value.worded(PARAM_FLAGS) == f"--suite {name}: use ars, seq, quick, bonnie or a FILE.fio job file"
    assert e.value.exit_code == 2


def test_with_overrides_changes_copies_and_leaves_the_suite_alone():
    before = list(SUITES["quick"])
    changed = with_overrides(SUITES["quick"], ioengine="psync", iodepth=4)
    assert [(t.name, t.ioengine, t.iodepth) for t in changed] == [(t.name, "psync", 4) for t in before]
    assert SUITES["quick"] == before
    assert all(t.ioengine == "posixaio" and t.iodepth == 1 for t in SUITES["quick"])
    assert with_overrides([], bs="8k") == []
    with pytest.raises(TypeError):
        with_overrides(before, no_such_field=1)


def test_a_test_is_frozen():
    with pytest.raises(FrozenInstanceError):
        SUITES["quick"][0].bs = "4k"


# ---- the fio job each test builds ----------------------------------------------------------------

def test_a_time_based_test_builds_this_argv():
    t = {x.name: x for x in SUITES["ars"]}["syncwrite-4k-t8q8"]
    assert job_of("ars", t).args() == [
        "--name=syncwrite-4k-t8q8", "--rw=randwrite", "--bs=4k", "--size=4g", "--numjobs=8", "--iodepth=8",
        "--ioengine=posixaio", "--thread", f"--directory={MNT}", "--runtime=60", "--ramp_time=10", "--time_based",
        "--fsync=1", "--group_reporting", "--filename_format=bench.$jobnum.$filenum"]


def test_a_whole_file_test_has_no_runtime_even_when_one_is_given():
    rewrite = SUITES["seq"][1]
    job = rewrite.job(MNT, size="16g", runtime_s=60, ramp_s=10)
    assert (job.runtime_s, job.ramp_time_s, job.time_based) == (None, None, False)
    assert job.args() == [
        "--name=rewrite", "--rw=write", "--bs=1m", "--size=16g", "--numjobs=1", "--iodepth=1",
        "--ioengine=posixaio", "--thread", f"--directory={MNT}", "--end_fsync=1", "--group_reporting",
        "--filename_format=bench.$jobnum.$filenum", "--overwrite=1"]


@pytest.mark.parametrize("suite,t", all_tests(), ids=[f"{s}-{t.name}" for s, t in all_tests()])
def test_every_job_keeps_the_test_and_writes_only_in_the_directory(suite, t):
    job = job_of(suite, t)
    a = job.args()
    assert (job.name, job.rw, job.bs, job.numjobs, job.iodepth, job.ioengine) == (
        t.name, t.rw, t.bs, t.numjobs, t.iodepth, t.ioengine)
    assert f"--directory={MNT}" in a and not any(x.startswith("--filename=") for x in a)
    # one file name for every test of a suite, without $jobname: read tests find the written files
    assert a.count("--filename_format=bench.$jobnum.$filenum") == 1
    assert ("--time_based" in a) == t.time_based
    assert ("--overwrite=1" in a) == t.overwrite
    assert ("--fsync=1" in a) == (t.fsync == 1)
    assert "--thread" in a  # jobs die with the one fio process


def _option_names() -> list[str]:
    """The job options of every test (fio's own --output-format is checked apart: not a job option)."""
    names = set()
    for suite, t in all_tests():
        for arg in job_of(suite, t).args():
            names.add(arg[2:].split("=", 1)[0])
    return sorted(names)


def test_fio_is_run_with_json_output_then_the_job():
    job = job_of("quick", SUITES["quick"][0])
    assert Fio().argv(job) == ["fio", "--output-format=json", *job.args()]


@needs_fio
def test_json_output_is_an_option_of_this_fio():
    assert "--output-format=type" in Runner().run(["fio", "--help"], timeout_s=30).stdout


@needs_fio
@pytest.mark.parametrize("option", _option_names())
def test_every_option_is_one_fio_documents(option):
    out = Runner().run(["fio", f"--cmdhelp={option}"], timeout_s=30).stdout
    assert "No such command" not in out
    assert out.split(":", 1)[0].strip() == option


@needs_fio
@pytest.mark.parametrize("suite,t", all_tests(), ids=[f"{s}-{t.name}" for s, t in all_tests()])
def test_fio_parses_every_job(tmp_path, suite, t):
    argv = Fio().argv(job_of(suite, t, str(tmp_path)))
    done = Runner().run([argv[0], "--parse-only", *argv[1:]], timeout_s=60)
    assert done.returncode == 0
    assert list(tmp_path.iterdir()) == []  # parsing lays out no file


@needs_fio
def test_fio_parse_only_does_refuse_an_unknown_option(tmp_path):
    # the control for the test above: --parse-only checks what it is given
    job = FioJob("bad", "read", size="1m", directory=str(tmp_path), extra=(("no_such_option", "1"),))
    with pytest.raises(CommandFailed, match="unrecognized option '--no_such_option=1'"):
        Runner().run(["fio", "--parse-only", *job.args()], timeout_s=60)
