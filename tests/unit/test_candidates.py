import pytest

from zfslab.model.candidates import candidate_layouts
from zfslab.model.layout_grammar import parse_layout


@pytest.mark.parametrize("disks", [1, 2, 3, 4, 5, 8, 12, 24, 36, 96])
def test_every_candidate_is_valid_uses_all_disks_and_is_unique(disks):
    layouts = candidate_layouts(disks)
    names = [str(x) for x in layouts]
    assert len(names) == len(set(names))
    for layout in layouts:
        assert layout.disks == disks
        assert parse_layout(str(layout)) == layout  # the grammar round-trips
        assert layout.hot_spares <= 2


def test_24_disks_holds_what_people_build():
    names = {str(x) for x in candidate_layouts(24)}
    for expected in ["24xdisk", "12xmirror:2", "8xmirror:3", "6xmirror:4", "4xraidz2:6", "2xraidz2:12",
                     "3xraidz2:8", "raidz3:24", "raidz3:23+spare:1", "2xraidz3:11+spare:2", "draid2:8d:24c:1s",
                     "11xmirror:2+spare:2", "raidz1:24"]:
        assert expected in names
    assert "raidz3:4" not in names and "6xraidz3:4" not in names  # under 2 data disks
    assert "24xraidz1:1" not in names


def test_order_is_by_family_then_parity():
    layouts = candidate_layouts(12)
    names = [str(x) for x in layouts]
    assert names[0] == "12xdisk"
    family = ("disk", "mirror", "raidz", "draid")
    rank = [(next(i for i, f in enumerate(family) if f in n), x.groups[0].parity if "raidz" in n or "draid" in n else 0)
            for n, x in zip(names, layouts)]
    assert rank == sorted(rank)  # every layout of a family (and parity) before the next one's
    first = {fam: next(i for i, n in enumerate(names) if fam in n) for fam in ("mirror", "raidz1", "raidz2", "raidz3", "draid")}
    assert first["mirror"] < first["raidz1"] < first["raidz2"] < first["raidz3"] < first["draid"]


def test_options_leave_out_spares_and_draid():
    plain = candidate_layouts(24, hot_spares=False, draid=False)
    assert all(x.hot_spares == 0 and "draid" not in str(x) for x in plain)
    assert len(plain) < len(candidate_layouts(24))


def test_small_disk_counts():
    assert [str(x) for x in candidate_layouts(1)] == ["disk"]
    assert [str(x) for x in candidate_layouts(2)] == ["2xdisk", "mirror:2"]
    assert "raidz1:3" in {str(x) for x in candidate_layouts(3)}
