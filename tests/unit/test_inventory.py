"""Ansible inventories (INI and YAML) and --hosts, to the hosts ssh connects to."""

import pytest

from zfslab.model.inventory import Host, InventoryError, expand_range, parse_hosts_option, parse_inventory

INI = """\
# the fleet
jump.example ansible_user=ops

[storage]
st[01:03].example ansible_user=root
st04.example ansible_host=10.0.0.4 ansible_port=2222

[backup]
bk-[a:b].example:2200

[dc1:children]
storage
backup

[dc1:vars]
ansible_user=admin
ansible_port=22
"""

YAML = """\
all:
  vars:
    ansible_user: admin
  hosts:
    jump.example:
  children:
    storage:
      hosts:
        st[01:02].example:
          ansible_user: root
        st03.example:
          ansible_host: 10.0.0.3
          ansible_port: 2222
    dc1:
      children:
        storage:
      vars:
        ansible_port: 22
"""


def test_ini_group_with_ranges_and_variables():
    hosts = parse_inventory(INI, "fleet.ini", "storage")
    assert hosts == (Host("st01.example", "st01.example", 22, "root"), Host("st02.example", "st02.example", 22, "root"),
                     Host("st03.example", "st03.example", 22, "root"), Host("st04.example", "10.0.0.4", 2222, "admin"))


def test_ini_children_gather_their_groups_and_host_port_suffix():
    hosts = parse_inventory(INI, "fleet.ini", "dc1")
    assert [h.name for h in hosts] == ["st01.example", "st02.example", "st03.example", "st04.example",
                                       "bk-a.example", "bk-b.example"]
    assert hosts[-1] == Host("bk-b.example", "bk-b.example", 2200, "admin")


def test_ini_all_and_ungrouped():
    assert [h.name for h in parse_inventory(INI, "fleet.ini")][:2] == ["jump.example", "st01.example"]
    assert parse_inventory(INI, "fleet.ini", "ungrouped") == (Host("jump.example", "jump.example", None, "ops"),)


def test_yaml_groups_children_and_vars():
    hosts = parse_inventory(YAML, "fleet.yml", "dc1")
    assert hosts == (Host("st01.example", "st01.example", 22, "root"), Host("st02.example", "st02.example", 22, "root"),
                     Host("st03.example", "10.0.0.3", 2222, "admin"))
    assert parse_inventory(YAML, "fleet.yml")[0] == Host("jump.example", "jump.example", None, "admin")


def test_yaml_is_told_by_its_content_too():
    assert len(parse_inventory(YAML, "hosts", "storage")) == 3


def test_ranges():
    assert expand_range("db[01:03].x") == ["db01.x", "db02.x", "db03.x"]
    assert expand_range("db[8:10]") == ["db8", "db9", "db10"]
    assert expand_range("n[1:9:4]") == ["n1", "n5", "n9"]
    assert expand_range("r[a:b]n[1:2]") == ["ran1", "ran2", "rbn1", "rbn2"]


@pytest.mark.parametrize("text, message", [
    ("[storage\nst01\n", "fleet.ini:1: section '[storage': write [group], [group:children] or [group:vars]"),
    ("[storage]\nst[05:01]\n", "fleet.ini:2: 'st[05:01]': the range must run upwards"),
    ("[storage]\nst01 ansible_port=99999\n", "fleet.ini:host st01: ansible_port 99999: give a port from 1 to 65535"),
    ("[storage]\n-oProxyCommand=x\n", "fleet.ini:host -oProxyCommand=x: host '-oProxyCommand=x': not a host name"),
    ("[storage]\nst01 ansible_user\n", "fleet.ini:2: 'ansible_user': a host's variables are key=value"),
    ("[a:children]\nb\n[b:children]\na\n", "fleet.ini:group: group 'a' is its own child (a > b > a)"),
    ("[storage]\nst01:x\n", "fleet.ini:2: 'st01:x': the port after ':' must be a number"),
])
def test_bad_ini_is_one_line_naming_file_line_and_value(text, message):
    with pytest.raises(InventoryError) as e:
        parse_inventory(text, "fleet.ini", "a" if "children" in text else "storage")
    assert str(e.value).startswith(message) and "\n" not in str(e.value) and e.value.exit_code == 2


def test_an_unknown_group_lists_the_known_ones():
    with pytest.raises(InventoryError, match=r"fleet.ini:group: no group 'nas'; it has: all, backup, dc1, storage;"):
        parse_inventory(INI, "fleet.ini", "nas")


def test_bad_yaml_names_the_line():
    with pytest.raises(InventoryError, match=r"^fleet.yml:4: not YAML"):
        parse_inventory("all:\n  hosts:\n  a: [\n", "fleet.yml")
    with pytest.raises(InventoryError, match=r"^fleet.yml:all: 'host' is not hosts, children or vars"):
        parse_inventory("all:\n  host:\n    a:\n", "fleet.yml")


def test_hosts_option():
    assert parse_hosts_option("a, root@b,c:2222", "--hosts") == (Host("a", "a"), Host("root@b", "b", None, "root"),
                                                      Host("c:2222", "c", 2222))
    with pytest.raises(InventoryError, match=r"^--hosts:value: 'a' is named twice"):
        parse_hosts_option("a,a", "--hosts")
    with pytest.raises(InventoryError, match=r"^--hosts:value: 'a,,b' has an empty name"):
        parse_hosts_option("a,,b", "--hosts")
