"""The fuzz campaign's own machinery (tests/cli_fuzz.py): what it draws for issue 38's items 5-8
reaches the sizes the issue names and beyond, and its before-and-after snapshot of a run's folder
hashes a sparse file of terabytes by its data, never reading its holes."""

import collections
import os
import re
import shutil
import signal
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from cli_fuzz import ISSUE_38_SIZES, TB, RandomChooser, check_safe, issue_38_line, snapshot  # noqa: E402
from sparse_files import write_sparse  # noqa: E402


@pytest.fixture
def cpu_guard():
    """Fail (not hang) what spends more than 5 s of CPU: reading 8 TiB of holes would take hours."""
    def over(*_):
        raise AssertionError("more than 5 s of CPU")
    old = signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, 5.0)
    yield
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.signal(signal.SIGPROF, old)


def _sparse(path, size, writes=()):
    write_sparse(path, size, writes)
    if os.stat(path).st_blocks * 512 >= 1 << 30:
        pytest.skip("this file system keeps no holes")


def test_snapshot_hashes_an_8_tib_sparse_file_by_its_data_never_its_holes(tmp_path, cpu_guard):
    big = tmp_path / "big.img"
    try:
        _sparse(big, 8 << 40, [(0, b"head"), (5 << 40, b"middle" * 1000)])
    except OSError:
        pytest.skip("this file system takes no 8 TiB file")
    first = snapshot(str(tmp_path))
    assert snapshot(str(tmp_path)) == first
    fd = os.open(big, os.O_WRONLY)
    os.pwrite(fd, b"M", 5 << 40)          # one byte of its data changed
    os.close(fd)
    second = snapshot(str(tmp_path))
    assert second != first
    os.truncate(big, (8 << 40) + 1)         # one byte more of hole
    assert snapshot(str(tmp_path)) != second


def test_snapshot_of_a_plain_file_still_sees_every_byte(tmp_path):
    f = tmp_path / "x"
    f.write_bytes(b"a" * 300_000)
    before = snapshot(str(tmp_path))
    f.write_bytes(b"a" * 299_999 + b"b")
    assert snapshot(str(tmp_path)) != before


def _levels(path: str) -> tuple[str, int]:
    """Which hostile inventory a file is, and its size in the issue's terms."""
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace").lstrip("\ufeff")
    if ":children]" in text and re.search(r"\[g0:children\]\ng1\ng1\n", text):
        return "ini levels", text.count(":children]")
    if "&a0" in text:
        return "laughs levels", text.count("&a")
    if "&g0" in text and ", b1: *g0}" in text and "c1:" not in text:
        return "yaml doubled levels", text.count("&g") - 1
    if "h[1:20000].invalid" in text:
        return "sections of h[1:20000]", text.count("h[1:20000].invalid")
    return "other", 0


SEEDS = range(450_000, 450_700)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """issue_38_line over 700 seeds of the campaign's: the tags each reached, and the largest size
    of each class found in the files themselves (not taken from the tags)."""
    tags: collections.Counter = collections.Counter()
    largest: dict[str, int] = collections.defaultdict(int)
    exact: collections.Counter = collections.Counter()
    for seed in SEEDS:
        workdir = str(tmp_path_factory.mktemp("run"))
        case = issue_38_line(RandomChooser(seed), workdir)
        check_safe(case)
        tags.update(case.tags)
        for arg in case.argv:
            if arg.startswith(workdir) and arg.endswith(("hosts.ini", "hosts.yml")) and os.path.isfile(arg):
                what, n = _levels(arg)
                largest[what] = max(largest[what], n)
                size = os.path.getsize(arg)
                exact[(what, n, size)] += 1
            if arg.startswith(workdir) and arg.endswith("-sparse"):
                for name in os.listdir(arg):
                    st = os.stat(os.path.join(arg, name))
                    largest["sparse bytes"] = max(largest["sparse bytes"], st.st_size)
                    if st.st_size >= TB:
                        assert st.st_blocks * 512 < 64 << 20, (name, st.st_blocks)   # holes: nothing on disk
                        if "--sample" in case.argv:
                            exact[("sparse sample", st.st_size)] += 1
        shutil.rmtree(workdir)
    return tags, largest, exact


def test_the_issue_38_lines_reach_every_item_at_the_issues_sizes(drawn):
    tags, _, _ = drawn
    assert {tag for tag in ISSUE_38_SIZES if tags[tag] == 0} == set(), tags


def test_the_issue_38_lines_draw_the_issues_exact_inputs_and_larger_ones(drawn):
    _, largest, exact = drawn
    # item 5: 22 levels of doubled INI children in 496 bytes, to 60 (past the nesting limit of 50)
    assert exact[("ini levels", 22, 496)] > 0 and largest["ini levels"] >= 51
    # item 5 through YAML anchors: 8 levels, to 12 and more (past 10,000 groups walked)
    assert any(n == 8 for (what, n, *_) in exact if what == "yaml doubled levels")
    assert largest["yaml doubled levels"] >= 12
    # item 6: billion laughs of 543 bytes (8 levels), and 9 to 12 levels
    assert exact[("laughs levels", 8, 543)] > 0 and largest["laughs levels"] == 12
    assert {n for (what, n, *_) in exact if what == "laughs levels"} >= {8, 9, 10, 11, 12}
    # item 7: 400 sections of h[1:20000].invalid (10 KB), to 1,000
    assert exact[("sections of h[1:20000]", 400, 10290)] > 0 and largest["sections of h[1:20000]"] >= 900
    # item 8: --sample 1s --recordsize 4K on 1 TB and on 8 TB or more; sparse files up to 8 TiB
    assert exact[("sparse sample", TB)] + exact[("sparse sample", 1 << 40)] > 0
    assert any(size >= 8 * TB for (what, *rest) in exact if what == "sparse sample" for size in rest)
    assert largest["sparse bytes"] == 8 << 40


def test_a_seed_draws_the_same_line_and_files_every_time(tmp_path):
    for seed in (450_007, 450_123, 450_311):
        runs = []
        for k in range(2):
            workdir = str(tmp_path / f"{seed}-{k}")
            os.mkdir(workdir)
            case = issue_38_line(RandomChooser(seed), workdir)
            files = {os.path.relpath(os.path.join(root, f), workdir): os.path.getsize(os.path.join(root, f))
                     for root, _, names in os.walk(workdir) for f in names}
            runs.append(([a.replace(workdir, "W") for a in case.argv], files, case.tags,
                         sorted((os.path.relpath(p, workdir), h) for p, h in snapshot(workdir).items())))
        assert runs[0] == runs[1]
