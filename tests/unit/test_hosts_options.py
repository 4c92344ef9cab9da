"""--hosts, --inventory/--group, --skip-host and --parallel, as bench, profile-disk and drill will take them."""

import pytest

from zfslab.cli import _Parser
from zfslab.commands._hosts import add_host_options, hosts_from_args, skip_hosts, transport_from_args
from zfslab.errors import UsageError, ZfslabError
from zfslab.model.inventory import Host, InventoryError


def _args(*argv):
    p = _Parser(prog="zfslab bench")   # as the commands parse: a mistake is a UsageError
    add_host_options(p)
    return p.parse_args(list(argv))


def test_hosts_and_skip_host():
    assert hosts_from_args(_args("--hosts", "a,b,c", "--skip-host", "b")) == (Host("a", "a"), Host("c", "c"))
    assert hosts_from_args(_args()) is None and _args().parallel == 32   # a fleet of 20 runs at once


def test_inventory_file_and_group(tmp_path):
    inv = tmp_path / "fleet.ini"
    inv.write_text("[storage]\nst[1:3] ansible_user=root\n[other]\nx\n")
    hosts = hosts_from_args(_args("--inventory", str(inv), "--group", "storage", "--skip-host", "st2"))
    assert hosts == (Host("st1", "st1", None, "root"), Host("st3", "st3", None, "root"))


@pytest.mark.parametrize("argv, message", [
    (("--hosts", "a", "--inventory", "x"), "give --hosts or --inventory, not both"),
    (("--hosts", "a", "--group", "g"), "--group g: goes with --inventory FILE"),
    (("--skip-host", "a",), "--skip-host goes with --hosts or --inventory"),
    (("--hosts", "a,b", "--skip-host", "c"), "--skip-host c: not one of the hosts (a, b)"),
    (("--inventory", "/nonexistent/fleet.ini",), "--inventory /nonexistent/fleet.ini: no such file"),
])
def test_mistakes_are_one_line(argv, message):
    # an unreadable --inventory is the file reader's error (system/text_files.py), worded the same
    with pytest.raises(UsageError if "inventory" not in argv[0] else ZfslabError) as e:
        hosts_from_args(_args(*argv))
    assert str(e.value).startswith(message)


def test_a_bad_inventory_line_names_the_file_and_line(tmp_path):
    inv = tmp_path / "fleet.ini"
    inv.write_text("[storage]\nst1\nst2 ansible_port=http\n")
    with pytest.raises(InventoryError, match=r"fleet.ini:host st2: ansible_port 'http': give a port from 1 to 65535"):
        hosts_from_args(_args("--inventory", str(inv), "--group", "storage"))


def test_yaml_aliases_cannot_make_the_walk_explode(tmp_path):
    lines = ["all:", "  children:", "    g0: &g0 {hosts: {h: }}"]
    for i in range(1, 40):
        lines.append(f"    g{i}: &g{i} {{children: {{a: *g{i - 1}, b: *g{i - 1}}}}}")
    inv = tmp_path / "fleet.yml"
    inv.write_text("\n".join(lines) + "\n")
    with pytest.raises(InventoryError, match="more than 10,000 groups walked"):
        hosts_from_args(_args("--inventory", str(inv)))


def test_parallel_is_bounded():
    with pytest.raises(UsageError, match="--parallel must be from 1 to 1024, got 0"):
        _args("--parallel", "0")


def test_skip_host():
    assert skip_hosts(["a", "b", "c"], ["b"]) == ["a", "c"]
    with pytest.raises(UsageError, match=r"^--skip-host x: not one of the hosts \(a, b\)"):
        skip_hosts(["a", "b"], ["x"])
    with pytest.raises(UsageError, match="drops every host"):
        skip_hosts(["a"], ["a"])


def test_ssh_config_names_the_file_ssh_reads(tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  User root\n")
    transport = transport_from_args(_args("--hosts", "a", "--ssh-config", str(config)))
    try:
        argv = transport.argv(Host("a", "a"), ["true"])
        assert argv[:3] == ["ssh", "-F", str(config)]
    finally:
        transport.close()
    with pytest.raises(UsageError, match=r"^--ssh-config /nonexistent/cfg: no such file"):
        transport_from_args(_args("--hosts", "a", "--ssh-config", "/nonexistent/cfg"))
