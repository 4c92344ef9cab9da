"""The one exit-code rule of the fleet commands (model/fleet_exit.py, docs/fleet.md#exit-codes)."""

from zfslab.model.fleet_exit import fleet_code, host_code


def test_a_hosts_refusal_is_10_whether_it_said_10_or_2_and_anything_else_4():
    assert [host_code(c) for c in (0, 2, 10, 1, 3, 4, 6, 255)] == [0, 10, 10, 4, 4, 4, 4, 4]


def test_the_highest_wins_and_no_host_is_0():
    assert fleet_code([]) == 0 and fleet_code([0, 0]) == 0
    assert fleet_code([0, 4]) == 4 and fleet_code([4, 2]) == 10 and fleet_code([10, 4, 0]) == 10
