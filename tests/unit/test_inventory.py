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


# --- issue 38: inventories a few hundred bytes long that named millions of hosts or paths

@pytest.fixture
def cpu_guard():
    """Fail (not hang) a parse that spends more than 5 s of CPU: a guard against exponential
    work, not a benchmark (the fixed code takes milliseconds)."""
    import signal

    def over(*_):
        raise AssertionError("more than 5 s of CPU")
    old = signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, 5.0)
    yield
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.signal(signal.SIGPROF, old)


def _ini_diamond(levels):
    """Each group names the next one twice: 2^levels paths to the last group's one host."""
    return "".join(f"[g{i}:children]\ng{i + 1}\ng{i + 1}\n" for i in range(levels)) + f"[g{levels}]\nh1\n"


def _yaml_diamond(levels):
    lines = ["all:", "  children:", "    g0: &g0 {hosts: {h1: }}"]
    for i in range(1, levels + 1):
        lines.append(f"    g{i}: &g{i} {{children: {{a{i}: *g{i - 1}, b{i}: *g{i - 1}, c{i}: *g{i - 1}}}}}")
    return "\n".join(lines) + "\n"


def _laughs(where):
    """YAML's billion laughs: 9 levels of 9 aliases, 387 million strings in about 500 bytes."""
    lines = ["all:", "  vars:", '    a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"    a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines + where) + "\n"


def test_a_group_named_twice_at_each_of_40_levels_is_walked_once_per_group(cpu_guard):
    assert parse_inventory(_ini_diamond(40), "fleet.ini", "g0") == (Host("h1", "h1"),)
    assert parse_inventory(_ini_diamond(40), "fleet.ini", "g39") == (Host("h1", "h1"),)


def test_nesting_past_the_limit_is_one_line(cpu_guard):
    from zfslab.model.inventory import MAX_NESTING
    with pytest.raises(InventoryError, match=f"groups nested more than {MAX_NESTING} deep"):
        parse_inventory(_ini_diamond(MAX_NESTING + 1), "fleet.ini", "g0")


def test_yaml_aliases_of_groups_are_bounded(cpu_guard):
    with pytest.raises(InventoryError, match="more than 10,000 groups walked"):
        parse_inventory(_yaml_diamond(12), "fleet.yml")


@pytest.mark.parametrize("where, message", [
    (["  hosts:", "    h1: {ansible_host: *a8}"], "host h1: ansible_host is a list of 9 items, not a single value"),
    (["  hosts:", "    h1: {ansible_port: *a8}"], "host h1: ansible_port is a list of 9 items"),
    (["  hosts:", "    h1: {ansible_user: *a8}"], "host h1: ansible_user is a list of 9 items"),
    (["  hosts: *a8"], "all.hosts: hosts is a mapping of names, not a list of 9 items"),
    (["  children:", "    g: *a8"], "g: a group is a mapping of hosts, children and vars, not a list of 9 items"),
    (["  children: *a8"], "all.children: children is a mapping of groups, not a list of 9 items"),
])
def test_billion_laughs_is_refused_without_rendering_it(cpu_guard, where, message):
    with pytest.raises(InventoryError) as e:
        parse_inventory(_laughs(where), "fleet.yml")
    assert message in str(e.value) and len(str(e.value)) < 300


@pytest.mark.parametrize("text, message", [
    ("".join(f"[s{i}]\nh[1:20000].invalid\n" for i in range(400)), "more than 10,000 hosts"),
    ("".join(f"[s{i}]\nh[1:5000].invalid\n" for i in range(400)), "more than 100,000 host entries"),
    ("[s]\nh[1:999999999][1:999999999]\n", "more than 100,000 hosts"),
    ("[s]\nh[1:99999999999999999999999]\n", "numbers of at most 9 digits"),
    ("".join(f"[g{i}]\n" for i in range(1001)), "more than 1,000 groups"),
    ("[g:children]\n" + "c\n" * 10_001, "more than 10,000 child groups named"),
], ids=["400x20000", "400x5000", "two ranges", "23 digits", "1001 groups", "10001 links"])
def test_hosts_groups_and_expansion_are_bounded_before_they_are_made(cpu_guard, text, message):
    with pytest.raises(InventoryError) as e:
        parse_inventory(text, "fleet.ini")
    assert message in str(e.value) and ("zfslab's limit" in str(e.value) or "digits" in message), str(e.value)


@pytest.mark.parametrize("hosts, message", [
    ("a;>/tmp/x", "host 'a;>/tmp/x': not a host name ssh can take"),
    ("a$(touch${IFS}/tmp/x)", "not a host name ssh can take"),
    ("a`id`", "not a host name ssh can take"),
    ("-oProxyCommand=x", "not a host name"),
    ("root;x@a", "ansible_user 'root;x': not a user name"),
    ("héte", "not a host name ssh can take"),
    ("a|b", "not a host name ssh can take"),
])
def test_hosts_outside_the_grammar_are_refused_before_ssh(hosts, message):
    with pytest.raises(InventoryError) as e:
        parse_hosts_option(hosts, "--hosts")
    assert message in str(e.value), str(e.value)


@pytest.mark.parametrize("hosts", ["st01.example.com", "root@st01", "10.0.0.4:2222", "::1", "fe80::1%eth0", "[::1]",
                                   "host_with_underscore", "admin.user@st-02"])
def test_names_ssh_takes_are_taken(hosts):
    assert len(parse_hosts_option(hosts, "--hosts")) == 1


def test_an_inventorys_ansible_host_is_held_to_the_grammar():
    with pytest.raises(InventoryError, match=r"ansible_host 'a;reboot': not a host name ssh can take"):
        parse_inventory("[s]\nst01 ansible_host='a;reboot'\n", "fleet.ini", "s")


def _yaml_chain(groups):
    """all > g0 > g1 > ... > g{groups-1}, the last holding h1 (JSON, which YAML reads)."""
    import json
    body = {"hosts": {"h1": None}}
    for i in range(groups - 1, 0, -1):
        body = {"children": {f"g{i}": body}}
    return json.dumps({"all": {"children": {"g0": body}}})


@pytest.mark.parametrize("fmt", ["ini", "yaml"])
def test_groups_nested_exactly_as_deep_as_the_limit_are_taken(cpu_guard, fmt):
    """50 levels below the top group are not "more than 50 deep" (a chain of 51 INI groups was refused)."""
    from zfslab.model.inventory import MAX_NESTING
    assert MAX_NESTING == 50
    if fmt == "ini":
        at, past, source, group = _ini_diamond(50), _ini_diamond(51), "fleet.ini", "g0"
    else:
        at, past, source, group = _yaml_chain(50), _yaml_chain(51), "fleet.yml", "all"
    assert parse_inventory(at, source, group) == (Host("h1", "h1"),)
    with pytest.raises(InventoryError, match=f"groups nested more than {MAX_NESTING} deep"):
        parse_inventory(past, source, group)
