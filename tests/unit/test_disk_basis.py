"""plan --db's check that the planned disks are the measured ones (model/disk_basis.py)."""

from zfslab.model.disk_basis import DiskBasis, differences, mismatch_line

TB4 = 4_000_787_030_016


def test_count_size_and_type_are_each_compared():
    measured = DiskBasis(6, (TB4,), True)
    assert differences(measured, DiskBasis(6, (TB4,), True)) == []
    assert differences(measured, DiskBasis(8, (TB4,), True)) == ["count"]
    assert differences(measured, DiskBasis(6, (8 * 10**12,), True)) == ["size"]
    assert differences(measured, DiskBasis(6, (TB4,), False)) == ["type"]
    assert differences(measured, DiskBasis(6, (TB4, 8 * 10**12), True)) == ["size"]   # one size of a mixed set


def test_what_is_not_known_is_not_compared():
    assert differences(DiskBasis(3, (), None), DiskBasis(3, (TB4,), True)) == []   # sandbox files
    assert differences(DiskBasis(3, (TB4,), True), DiskBasis(3, (TB4,), None)) == []   # a profile TOML


def test_the_line_says_both_sides():
    line = mismatch_line(DiskBasis(2, (10**9,), False), DiskBasis(6, (4 * 10**12,), True))
    assert line == ("Speed fitted on other disks: measured on 2 × 1.00 GB solid-state, planned for 6 × 4.00 TB "
                    "rotational (count, size and type differ); the speed figures carry the fit over, nothing "
                    "measured them.")
    assert mismatch_line(DiskBasis(2, (10**9,), False), DiskBasis(2, (10**9,), False)) is None
    assert "measured on 3 disks of unknown size, planned for 6 disks of 8.00 TB and 4.00 TB" in mismatch_line(
        DiskBasis(3, (), None), DiskBasis(6, (8 * 10**12, 4 * 10**12), None))
