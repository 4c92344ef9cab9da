"""Fleet acceptance: disks and hosts flagged against the median of their identical peers."""

import pytest

from zfslab.errors import FleetError
from zfslab.model.outliers import Figures, host_figures, outliers, undecided


def _disks(host, seq, iops, group="HGST 4TB"):
    return [Figures(host, f"/dev/sd{chr(97 + i)}", group, s, r) for i, (s, r) in enumerate(zip(seq, iops))]


def test_a_disk_20_percent_slow_is_flagged_with_its_figures():
    figs = _disks("h1", [200, 200, 160, 201], [150, 150, 150, 150])
    found = outliers(figs)
    assert [(o.host, o.disk, o.metric) for o in found] == [("h1", "/dev/sdc", "seq_mb_s")]
    o = found[0]
    assert o.value == 160 and o.median == 200 and o.peers == 4 and abs(o.below - 0.2) < 1e-9
    assert o.line() == "h1 /dev/sdc: sequential 160 MB/s, 20% below the median 200 MB/s of 4 identical peers"


def test_the_threshold_is_a_boundary_and_not_above_it():
    figs = _disks("h1", [100, 100, 100, 85, 84.9], [100] * 5)
    assert [o.disk for o in outliers(figs)] == ["/dev/sde"]   # exactly 15 % below is not more than 15 %
    assert [o.disk for o in outliers(figs, threshold=0.10)] == ["/dev/sdd", "/dev/sde"]


def test_peers_are_only_identical_disks():
    figs = _disks("h1", [200, 200, 200], [150, 150, 150]) + _disks("h1", [100], [80], group="other 1TB")
    assert outliers(figs) == []   # the lone other disk has no peers
    assert [u.line() for u in undecided(figs)] == [
        "cannot tell: 1 identical disk of other 1TB (h1 /dev/sda); an outlier needs at least 3 identical peers"]


def test_two_peers_cannot_tell_which_one_is_slow():
    # two hosts of two disks, one disk slow: the slow host's median is the mean of its two disks,
    # and of two hosts the slower always sits below their median (here 22 %): no flag, "cannot tell"
    disks = _disks("a", [200, 200], [150, 150]) + _disks("b", [200, 56], [150, 150])
    hosts = host_figures(disks)
    assert [(f.host, f.seq_mb_s) for f in hosts] == [("a", 200), ("b", 128)]
    assert outliers(hosts) == []
    assert [(u.kind, u.members) for u in undecided(hosts)] == [("host", ("a", "b"))]
    assert undecided(hosts)[0].line() == ("cannot tell: 2 identical hosts of HGST 4TB (a, b); "
                                          "an outlier needs at least 3 identical peers")
    # the four disks are enough peers: the slow one is flagged, and nothing is undecided among them
    assert [(o.host, o.disk) for o in outliers(disks)] == [("b", "/dev/sdb")] and undecided(disks) == []


def test_three_peers_are_enough():
    found = outliers(_disks("h", [200, 200, 100], [150] * 3))
    assert [(o.disk, o.peers) for o in found] == [("/dev/sdc", 3)]
    assert undecided(_disks("h", [200, 200, 100], [150] * 3)) == []


def test_a_slow_host_stands_out_among_hosts():
    disks = [d for h in ("a", "b", "c") for d in _disks(h, [200] * 3, [150] * 3)] + _disks("d", [150] * 3, [150] * 3)
    hosts = host_figures(disks)
    found = outliers(hosts)
    assert [(o.host, o.disk, o.metric, o.value) for o in found] == [("d", "", "seq_mb_s", 150)]
    assert found[0].line().startswith("d: sequential 150 MB/s, 25% below the median 200 MB/s of 4")


def test_random_iops_are_compared_too():
    found = outliers(_disks("h", [100, 100, 100], [300, 300, 100]))
    assert [(o.disk, o.metric) for o in found] == [("/dev/sdc", "rand_iops")]
    assert "random 100 IOPS, 67% below the median 300 IOPS" in found[0].line()


def test_bad_figures_and_thresholds_are_named():
    with pytest.raises(FleetError, match="seq_mb_s=-1"):
        Figures("h", "d", "g", -1, 1)
    with pytest.raises(FleetError, match="outlier threshold 1.5"):
        outliers([], threshold=1.5)
