import os

import pytest

from tests.conftest import DATA
from zfslab.system.fio import Fio, FioFailed, FioJob, parse_fio_json
from zfslab.system.runner import Runner


def data(series, name):
    with open(os.path.join(DATA, f"zfs-{series}", name)) as f:
        return f.read()


@pytest.mark.parametrize("series", ["2.1", "2.3", "2.4"])
def test_parse_captured_json(series):
    w = parse_fio_json(data(series, "fio_write.json")).jobs[0]
    assert w.error == 0 and w.write.io_bytes == 64 << 20 and w.write.bw_bytes_s > 0
    # a read-verify job under another name than the writer: fio reports the mismatch as error 84 (EILSEQ)
    r = parse_fio_json(data(series, "fio_read_verify_mismatch.json")).jobs[0]
    assert r.error == 84 and r.read.clat_p99_ns >= r.read.clat_p50_ns > 0
    s = parse_fio_json(data(series, "fio_randwrite_sync.json")).jobs[0]
    assert s.sync_count > 0 and s.sync_mean_ns > 0 and s.write.iops > 0


def test_text_before_the_json_is_skipped():
    text = "fio: note: something\n" + data("2.1", "fio_write.json")
    assert parse_fio_json(text).jobs[0].name == "w"


def test_no_json_is_a_clear_error():
    with pytest.raises(FioFailed, match="no JSON in fio's output"):
        parse_fio_json("fio: failed to open file\n")


def test_job_arguments():
    job = FioJob("r", "randread", bs="4k", size="1g", directory="/tank", numjobs=8, iodepth=8, ioengine="posixaio",
                 runtime_s=60, ramp_time_s=5, time_based=True, fsync=1, verify="crc32c")
    args = job.args()
    for a in ["--rw=randread", "--bs=4k", "--numjobs=8", "--iodepth=8", "--runtime=60", "--ramp_time=5",
              "--time_based", "--fsync=1", "--verify=crc32c", "--directory=/tank", "--ioengine=posixaio"]:
        assert a in args
    with pytest.raises(ValueError):
        FioJob("x", "sideways", directory="/t")
    with pytest.raises(ValueError):
        FioJob("x", "read")


def test_real_fio_on_a_file(tmp_path, monkeypatch, needs_fio):
    fio = Fio()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    data = tmp_path / "data"
    data.mkdir()
    w = fio.run(FioJob("w", "write", bs="64k", size="8m", directory=str(data), verify="crc32c", do_verify=False))
    assert w.jobs[0].write.io_bytes == 8 << 20
    r = fio.run(FioJob("w", "read", bs="64k", size="8m", directory=str(data), verify="crc32c"))
    assert r.jobs[0].read.io_bytes >= 8 << 20
    assert list(cwd.iterdir()) == []  # no verify-state file left where the user ran zfslab
    # corrupt the file behind fio's back: verify must fail loudly
    path = next(data.iterdir())
    with open(path, "r+b") as f:
        f.seek(100_000)
        f.write(os.urandom(4096))
    with pytest.raises(FioFailed, match="fio job 'w' failed"):
        fio.run(FioJob("w", "read", bs="64k", size="8m", directory=str(data), verify="crc32c"))


def test_missing_fio_is_named(tmp_path):
    fio = Fio(Runner(path=str(tmp_path)))
    from zfslab.system.runner import ToolMissing
    with pytest.raises(ToolMissing, match=r"fio is not installed or not on PATH; install it \(Debian/Ubuntu: apt-get install fio\)"):
        fio.run(FioJob("w", "write", directory=str(tmp_path)))
