"""The dedup findings and `zpool status -D`'s table figures, on a pool real ZFS deduplicated in the
guest (tests/e2e/guest/capture_dedup.sh): raidz1:3, one 32 MiB file written four times and 16 MiB
once, so 384 table entries and a ratio of 3.00."""

from __future__ import annotations

import dataclasses

import pytest

from test_pool_model import version
from test_pool_read import POOLS, SERIES, captured, read_both
from zfslab.errors import InputError
from zfslab.model.pool_findings import findings
from zfslab.system.live_pool import memory_bytes
from zfslab.system.pool_read import read_json, read_text, text_ddt


def _dedup_pool(series: str):
    c = lambda name: captured(series, "dedup", name)  # noqa: E731
    j = read_json("dedup", c("zpool_status_DjP.json"), c("zpool_get_j.json"), c("zfs_get_j.json"),
                  c("zpool_get_vdevs_Hp.txt"))
    t = read_text("dedup", c("zpool_status_DP.txt"), c("zpool_list_vHPp.txt"), c("zpool_get_Hp.txt"),
                  c("zfs_get_Hp.txt"), c("zpool_get_vdevs_Hp.txt"))
    return j, t


@pytest.mark.parametrize("series", SERIES)
def test_the_dedup_table_read_from_json_and_from_text(series):
    if not (POOLS / series / "dedup").exists():
        pytest.skip("no dedup pool in this capture")
    j, t = _dedup_pool(series)
    assert j.ddt_entries == t.ddt_entries == 384   # 128 blocks once + 256 blocks four times
    assert 100 * 384 < j.ddt_core_bytes < 1000 * 384   # the whole table's mspace: 144 B an entry on 2.3.9, 392 on 2.4.4
    # the text prints it rounded ("147K"): within the rounding of zfs_nicenum
    assert abs(t.ddt_core_bytes - j.ddt_core_bytes) < 1024
    ram = memory_bytes(str(POOLS / series / "dedup" / "meminfo.txt"))
    assert ram == 4014200 * 1024 or series != "zfs-2.4"
    for state in (j, t):
        assert [f.code for f in findings(state, {}, 0, ram) if f.code.startswith("dedup")] == []   # 147K of 4 GB
        # the same table on a host with a quarter of it as memory: flagged, with its figures
        small = [f for f in findings(state, {}, 0, 4 * j.ddt_core_bytes - 4) if f.code == "dedup-table-large"]
        assert small and "384 entries" in small[0].text and "25 % of this host's" in small[0].text
    # a pool without the -D lines, or without dedup: no table, no finding
    plain = read_both(series, "files")[0]
    assert plain.ddt_entries is None and not [f for f in findings(plain, {}, 0, 1) if f.code.startswith("dedup")]


def test_a_dedup_ratio_near_one_is_a_note():
    j, _ = _dedup_pool("zfs-2.4")
    props = tuple((k, "1.05" if k == "dedupratio" else v) for k, v in j.pool_props)
    little = dataclasses.replace(j, pool_props=props)
    (note,) = [f for f in findings(little, {}, 0, None) if f.code.startswith("dedup")]
    assert note.code == "dedup-little-gain" and note.severity == "note" and "1.05x" in note.text


def test_before_2_3_the_text_gives_each_entrys_size_and_bad_figures_are_one_line():
    # 2018's pool of issue openzfs/zfs#7323, as zpool status -D printed it then (per-entry averages)
    line = "\n dedup: DDT entries 2873, size 390 on disk, 302 in core\n"
    assert text_ddt(line, per_entry=True) == (2873, 2873 * 302)
    assert text_ddt(" dedup: DDT entries 5248804, size 38.2K on disk, 4.24K in core", per_entry=True) == \
        (5248804, 5248804 * int(4.24 * 1024))
    assert text_ddt(" dedup: no DDT entries", per_entry=False) == (0, 0)
    assert text_ddt("errors: No known data errors", per_entry=False) == (None, None)
    with pytest.raises(InputError) as e:
        text_ddt(" dedup: DDT entries 3, size 1K on disk, lots in core", per_entry=False)
    assert "lots" in str(e.value) and "\n" not in str(e.value)


def test_memory_bytes_reads_memtotal_and_refuses_what_is_not_a_count(tmp_path):
    good = tmp_path / "meminfo"
    good.write_text("MemTotal:        4014200 kB\nMemFree: 1 kB\n")
    assert memory_bytes(str(good)) == 4014200 * 1024
    bad = tmp_path / "bad"
    bad.write_text("MemTotal:        -5 kB\n")
    assert memory_bytes(str(bad)) is None and memory_bytes(str(tmp_path / "none")) is None
