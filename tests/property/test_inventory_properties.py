"""One fleet written as an Ansible INI and as a YAML inventory reads as the same hosts, with the
same ports and users, in every group: the two parsers cannot drift apart."""

from hypothesis import given, strategies as st

from zfslab.model.inventory import parse_inventory

GROUPS = [f"g{i}" for i in range(4)]
HOSTS = [f"h{i}.example" for i in range(8)]

fleets = st.fixed_dictionaries({
    "members": st.fixed_dictionaries({g: st.lists(st.sampled_from(HOSTS), unique=True, max_size=4) for g in GROUPS}),
    # a child always has a higher number than its parent: no cycles
    "children": st.fixed_dictionaries({g: st.lists(st.sampled_from(GROUPS[i + 1:]), unique=True, max_size=2)
                                       if i + 1 < len(GROUPS) else st.just([]) for i, g in enumerate(GROUPS)}),
    "port": st.fixed_dictionaries({h: st.one_of(st.none(), st.integers(1, 65535)) for h in HOSTS}),
    "user": st.fixed_dictionaries({h: st.one_of(st.none(), st.sampled_from(["root", "ops"])) for h in HOSTS}),
})


def _vars(fleet, h) -> dict:
    return {k: v for k, v in (("ansible_port", fleet["port"][h]), ("ansible_user", fleet["user"][h])) if v is not None}


def _ini(fleet) -> str:
    lines = []
    for g in GROUPS:
        lines.append(f"[{g}]")
        lines += [" ".join([h, *(f"{k}={v}" for k, v in _vars(fleet, h).items())]) for h in fleet["members"][g]]
        if fleet["children"][g]:
            lines += [f"[{g}:children]", *fleet["children"][g]]
    return "\n".join(lines) + "\n"


def _yaml(fleet) -> str:
    lines = ["all:", "  children:"]
    for g in GROUPS:
        lines.append(f"    {g}:")
        if fleet["members"][g]:
            lines.append("      hosts:")
            for h in fleet["members"][g]:
                v = _vars(fleet, h)
                lines.append(f"        {h}:" + (" {" + ", ".join(f"{k}: {x}" for k, x in v.items()) + "}" if v else ""))
        if fleet["children"][g]:
            lines.append("      children:")
            lines += [f"        {c}:" for c in fleet["children"][g]]
    return "\n".join(lines) + "\n"


def _expected(fleet, g) -> set[str]:
    return set(fleet["members"][g]).union(*(_expected(fleet, c) for c in fleet["children"][g]))


@given(fleet=fleets)
def test_ini_and_yaml_read_as_the_same_fleet(fleet):
    ini, yml = _ini(fleet), _yaml(fleet)
    for g in GROUPS:
        want = _expected(fleet, g)
        if not want:
            continue   # an empty group is refused by both, tested in test_inventory.py
        for text, name in ((ini, "fleet.ini"), (yml, "fleet.yml")):
            hosts = parse_inventory(text, name, g)
            assert {h.name for h in hosts} == want, (name, g, text)
            for h in hosts:
                assert (h.destination, h.port, h.user) == (h.name, fleet["port"][h.name], fleet["user"][h.name])
