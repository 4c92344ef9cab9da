"""Hosts to run on: `--hosts a,b,c`, or an Ansible inventory (INI or YAML) and a group of it.

The subset of Ansible's formats a fleet of storage servers needs (docs/fleet.md#inventory, after
docs.ansible.com "How to build your inventory" and the ansible.builtin.ini plugin): groups,
`[g:children]`, `[g:vars]`, host lines with `key=value` variables, `host:port`, ranges
`db[01:10].example` (zero padding kept, `[a:f]`, a stride `[1:9:2]`), and YAML's `all:` with
`hosts`/`children`/`vars`. Of the variables only ansible_host, ansible_port and ansible_user
matter (and their old ansible_ssh_* names); a host's own value beats its groups'. Anything
left unset is left to the user's ~/.ssh/config. Pure: the caller reads the file.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from zfslab.errors import ZfslabError, clip, shown


class InventoryError(ZfslabError):
    """{}:{}: {}; see docs/fleet.md#inventory"""

    exit_code = 2


@dataclass(frozen=True, slots=True)
class Host:
    name: str                 # as the inventory names it: the name reports and the merged database show
    destination: str          # what ssh connects to (ansible_host, else the name)
    port: int | None = None   # None: ssh's own configuration decides
    user: str | None = None

    def __post_init__(self) -> None:
        for what, value in (("host", self.name), ("ansible_host", self.destination)):
            if not value or value.startswith("-") or any(c.isspace() or not c.isprintable() for c in value):
                raise ValueError(f"{what} {clip(value)}: not a host name ssh can take")
        if self.port is not None and not (type(self.port) is int and 1 <= self.port <= 65535):
            raise ValueError(f"ansible_port {clip(self.port)}: give a port from 1 to 65535")
        if self.user is not None and (not self.user or self.user.startswith("-")
                                      or any(c.isspace() or c == "@" or not c.isprintable() for c in self.user)):
            raise ValueError(f"ansible_user {clip(self.user)}: not a user name")


_ALIASES = {"ansible_host": "ansible_host", "ansible_ssh_host": "ansible_host", "ansible_port": "ansible_port",
            "ansible_ssh_port": "ansible_port", "ansible_user": "ansible_user", "ansible_ssh_user": "ansible_user"}
_RANGE = re.compile(r"\[([0-9a-zA-Z]+):([0-9a-zA-Z]+)(?::([0-9]+))?\]")
MAX_RANGE_HOSTS = 100_000
MAX_GROUP_VISITS = 100_000
MAX_HOSTS = 100_000


@dataclass
class _Inventory:
    hosts: dict[str, dict]                      # name -> its own variables
    groups: dict[str, list[str]]                # group -> hosts listed in it
    children: dict[str, list[str]]              # group -> child groups
    group_vars: dict[str, dict]


def expand_range(pattern: str) -> list[str]:
    """`db[01:03].x` -> db01.x db02.x db03.x; letters `[a:c]`; a stride `[1:9:2]`; ranges nest left to right."""
    m = _RANGE.search(pattern)
    if not m:
        if "[" in pattern or "]" in pattern:
            raise ValueError(f"{clip(pattern)}: a range is [start:end] or [start:end:stride], e.g. db[01:10]")
        return [pattern]
    start, end, stride = m.group(1), m.group(2), int(m.group(3) or 1)
    if stride < 1:
        raise ValueError(f"{clip(pattern)}: the stride must be at least 1")
    if start.isdigit() and end.isdigit():
        width = len(start) if start.startswith("0") else 0
        if int(end) < int(start) or (int(end) - int(start)) // stride >= MAX_RANGE_HOSTS:
            raise ValueError(f"{clip(pattern)}: the range must run upwards, at most {MAX_RANGE_HOSTS:,} hosts")
        items = [str(i).zfill(width) for i in range(int(start), int(end) + 1, stride)]
    elif len(start) == len(end) == 1 and start.isalpha() and end.isalpha() and start <= end:
        items = [chr(c) for c in range(ord(start), ord(end) + 1, stride)]
    else:
        raise ValueError(f"{clip(pattern)}: a range runs from number to number or letter to letter, upwards")
    head, tail = pattern[:m.start()], pattern[m.end():]
    out = []
    for item in items:
        out += expand_range(head + item + tail)
        if len(out) > MAX_RANGE_HOSTS:
            raise ValueError(f"{clip(pattern)}: more than {MAX_RANGE_HOSTS:,} hosts")
    return out


def _ini_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _split_host_port(token: str) -> tuple[str, int | None]:
    """`host:2222` -> (host, 2222); an IPv6 address (several colons) has no port this way."""
    if token.count(":") == 1 and "]" not in token.split(":")[1]:
        name, port = token.split(":")
        if not port.isdigit():
            raise ValueError(f"{clip(token)}: the port after ':' must be a number")
        return name, int(port)
    return token, None


def parse_ini(text: str, source: str) -> _Inventory:
    inv = _Inventory({}, {"ungrouped": []}, {}, {})
    section, kind = "ungrouped", "hosts"
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        try:
            if line.startswith("["):
                if not line.endswith("]") or len(line) < 3:
                    raise ValueError(f"section {clip(line)}: write [group], [group:children] or [group:vars]")
                section, _, kind = line[1:-1].strip().partition(":")
                kind = kind or "hosts"
                if kind not in ("hosts", "children", "vars") or not re.fullmatch(r"[A-Za-z0-9_.-]+", section):
                    raise ValueError(f"section {clip(line)}: write [group], [group:children] or [group:vars]")
                {"hosts": inv.groups, "children": inv.children, "vars": inv.group_vars}[kind].setdefault(
                    section, {} if kind == "vars" else [])
                continue
            if kind == "vars":
                key, eq, value = line.partition("=")
                if not eq or not key.strip():
                    raise ValueError(f"{clip(line)}: a [{section}:vars] line is key=value")
                inv.group_vars[section][key.strip()] = _ini_value(value.strip())
            elif kind == "children":
                if len(line.split()) != 1:
                    raise ValueError(f"{clip(line)}: a [{section}:children] line names one group")
                inv.children[section].append(line)
            else:
                try:
                    tokens = shlex.split(line, comments=True)
                except ValueError:
                    raise ValueError(f"{clip(line)}: an unclosed quote") from None
                own = {}
                for token in tokens[1:]:
                    key, eq, value = token.partition("=")
                    if not eq or not key:
                        raise ValueError(f"{clip(token)}: a host's variables are key=value")
                    own[key] = _ini_value(value)
                for name in expand_range(tokens[0]):
                    name, port = _split_host_port(name)
                    vars_ = dict(own, **({"ansible_port": port} if port is not None else {}))
                    inv.hosts.setdefault(name, {}).update(vars_)
                    inv.groups.setdefault(section, []).append(name)
                if len(inv.hosts) > MAX_HOSTS:
                    raise ValueError(f"more than {MAX_HOSTS:,} hosts")
        except ValueError as e:
            raise InventoryError(shown(source, 200), number, str(e)) from None
    return inv


def parse_yaml(data: object, source: str) -> _Inventory:
    """The YAML format, from the object yaml.safe_load made of it."""
    inv = _Inventory({}, {"ungrouped": []}, {}, {})

    def fail(where: str, detail: str):
        raise InventoryError(shown(source, 200), where, detail)

    visits = [0]

    def walk(group: str, body: object, depth: int) -> None:
        visits[0] += 1   # YAML aliases can name one group many times over: a bounded walk
        if depth > 50:
            fail(group, "groups nested more than 50 deep")
        if visits[0] > MAX_GROUP_VISITS:
            fail(group, f"more than {MAX_GROUP_VISITS:,} groups (aliases repeated?)")
        if body is None:
            body = {}
        if not isinstance(body, Mapping):
            fail(group, f"a group is a mapping of hosts, children and vars, not {clip(body)}")
        unknown = sorted(set(body) - {"hosts", "children", "vars"})
        if unknown:
            fail(group, f"{clip(unknown[0])} is not hosts, children or vars")
        inv.groups.setdefault(group, [])
        inv.children.setdefault(group, [])
        vars_ = body.get("vars") or {}
        if not isinstance(vars_, Mapping):
            fail(f"{group}.vars", f"vars is a mapping, not {clip(vars_)}")
        inv.group_vars.setdefault(group, {}).update(vars_)
        hosts = body.get("hosts") or {}
        if not isinstance(hosts, Mapping):
            fail(f"{group}.hosts", f"hosts is a mapping of names, not {clip(hosts)}")
        for pattern, own in hosts.items():
            if own is not None and not isinstance(own, Mapping):
                fail(f"{group}.hosts.{pattern}", f"a host's variables are a mapping, not {clip(own)}")
            try:
                for name in expand_range(str(pattern)):
                    name, port = _split_host_port(name)
                    inv.hosts.setdefault(name, {}).update(dict(own or {}, **({"ansible_port": port} if port else {})))
                    inv.groups[group].append(name)
                if len(inv.hosts) > MAX_HOSTS:
                    raise ValueError(f"more than {MAX_HOSTS:,} hosts")
            except ValueError as e:
                fail(f"{group}.hosts", str(e))
        children = body.get("children") or {}
        if not isinstance(children, Mapping):
            fail(f"{group}.children", f"children is a mapping of groups, not {clip(children)}")
        for child, child_body in children.items():
            inv.children[group].append(str(child))
            walk(str(child), child_body, depth + 1)

    if not isinstance(data, Mapping) or not data:
        fail("top", "a YAML inventory is a mapping of groups, e.g. all: {hosts: {a: }}")
    for group, body in data.items():
        walk(str(group), body, 0)
    return inv


def _members(inv: _Inventory, group: str, source: str, path: tuple[str, ...] = ()) -> list[str]:
    """The hosts of a group and of its children, in the order the file lists them."""
    if group in path:
        raise InventoryError(shown(source, 200), "group", f"group {clip(group)} is its own child "
                                                          f"({' > '.join(path + (group,))})")
    if group == "all" and not path:
        return list(inv.hosts)
    out = list(inv.groups.get(group, []))
    for child in inv.children.get(group, []):
        out += _members(inv, child, source, path + (group,))
    return list(dict.fromkeys(out))


def _depths(inv: _Inventory) -> dict[str, int]:
    """How deep each group sits below `all`: a child's variables beat its parent's (Ansible's order)."""
    parents: dict[str, set[str]] = {}
    for g, kids in inv.children.items():
        for k in kids:
            parents.setdefault(k, set()).add(g)
    depth: dict[str, int] = {"all": 0}

    def of(g: str, seen: frozenset = frozenset()) -> int:
        if g not in depth:
            ps = parents.get(g, set()) - {"all"} - seen
            depth[g] = 1 + max((of(p, seen | {g}) for p in ps), default=0)
        return depth[g]
    for g in set(inv.groups) | set(inv.children) | set(inv.group_vars):
        of(g)
    return depth


def select(inv: _Inventory, group: str, source: str) -> tuple[Host, ...]:
    """The hosts of one group (and its children), with their connection settings."""
    if len(inv.hosts) > MAX_HOSTS:
        raise InventoryError(shown(source, 200), "hosts", f"{len(inv.hosts):,} hosts, more than {MAX_HOSTS:,}")
    known = set(inv.groups) | set(inv.children) | set(inv.group_vars) | {"all"}
    if group not in known:
        names = ", ".join(sorted(g for g in known if g != "ungrouped"))
        raise InventoryError(shown(source, 200), "group", f"no group {clip(group)}; it has: {shown(names, 200)}")
    chosen = _members(inv, group, source)
    if not chosen:
        raise InventoryError(shown(source, 200), "group", f"group {clip(group)} holds no hosts")
    depth = _depths(inv)
    belongs = {g: set(_members(inv, g, source)) for g in known if g != "all"}
    hosts = []
    for name in chosen:
        merged: dict = {}
        for g in ["all", *sorted((g for g in belongs if name in belongs[g]), key=lambda g: (depth[g], g))]:
            merged.update({_ALIASES[k]: v for k, v in inv.group_vars.get(g, {}).items() if k in _ALIASES})
        merged.update({_ALIASES[k]: v for k, v in inv.hosts[name].items() if k in _ALIASES})
        try:
            port = merged.get("ansible_port")
            if isinstance(port, str) and port.isdigit():
                port = int(port)
            user = merged.get("ansible_user")
            hosts.append(Host(name, str(merged.get("ansible_host", name)), port,
                              None if user is None else str(user)))
        except ValueError as e:
            raise InventoryError(shown(source, 200), f"host {shown(name, 60)}", str(e)) from None
    return tuple(hosts)


def parse_hosts_option(text: str, source: str) -> tuple[Host, ...]:
    """A host list (`a,root@b,c:2222`, the value of the option named `source`): names as ssh takes them, each once."""
    hosts = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            raise InventoryError(source, "value", f"{clip(text)} has an empty name; give host1,host2,...")
        user, _, rest = item.rpartition("@")
        try:
            name, port = _split_host_port(rest)
            hosts.append(Host(item, name, port, user or None))
        except ValueError as e:
            raise InventoryError(source, "value", str(e)) from None
    names = [h.name for h in hosts]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise InventoryError(source, "value", f"{clip(dup)} is named twice; name each host once")
    return tuple(hosts)


def parse_inventory(text: str, source: str, group: str = "all") -> tuple[Host, ...]:
    """An inventory's text (YAML when it opens with a mapping of `all:`/groups, else INI) -> its group's hosts."""
    if _looks_yaml(text, source):
        try:
            import yaml
        except ImportError:
            raise InventoryError(shown(source, 200), 1, "reading a YAML inventory needs PyYAML "
                                 "(apt-get install python3-yaml, or pip install pyyaml)") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            raise InventoryError(shown(source, 200), (mark.line + 1) if mark else 1,
                                 f"not YAML ({shown(getattr(e, 'problem', None) or e, 80)})") from None
        except RecursionError:
            raise InventoryError(shown(source, 200), 1, "nested too deep") from None
        return select(parse_yaml(data, source), group, source)
    return select(parse_ini(text, source), group, source)


def _looks_yaml(text: str, source: str) -> bool:
    if source.endswith((".yml", ".yaml")):
        return True
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("#", ";"))), "")
    return first.rstrip().endswith(":") or first.startswith("---")
