"""Hosts to run on: `--hosts a,b,c`, or an Ansible inventory (INI or YAML) and a group of it.

The subset of Ansible's formats a fleet of storage servers needs (docs/fleet.md#inventory, after
docs.ansible.com "How to build your inventory" and the ansible.builtin.ini plugin): groups,
`[g:children]`, `[g:vars]`, host lines with `key=value` variables, `host:port`, ranges
`db[01:10].example` (zero padding kept, `[a:f]`, a stride `[1:9:2]`), and YAML's `all:` with
`hosts`/`children`/`vars`. Of the variables only ansible_host, ansible_port and ansible_user
matter (and their old ansible_ssh_* names); a host's own value beats its groups'. Anything
left unset is left to the user's ~/.ssh/config. Pure: the caller reads the file.

Every name is held to a grammar before ssh sees it (HOST_NAME: a DNS name, an IPv4 or IPv6
address, an ssh_config alias of the same letters; USER_NAME: POSIX's portable user names), and
an inventory to fixed limits, counted before anything is expanded: hosts, host entries (a range
or a YAML alias counts each host it stands for), groups, links between groups, group visits and
nesting. A repeated child or alias is walked once per group, never once per path.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError, clip, shown


class InventoryError(ZfslabError):
    """{}:{}: {}; see docs/fleet.md#inventory"""

    exit_code = 2


# What ssh is given: letters, digits, '.', '_', '-' (a DNS name, an IPv4 address, an ssh_config
# alias), or an IPv6 address (hex digits and ':', an optional %zone), in [brackets] or not. No
# shell or ssh metacharacter, no space, no leading '-' (ssh would read an option). docs/fleet.md
HOST_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,252}|\[?[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*(%[A-Za-z0-9_.-]+)?\]?",
                       re.ASCII)
USER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}", re.ASCII)   # POSIX's portable user names
SHOWN_NAME = re.compile(r"[A-Za-z0-9_\[:][A-Za-z0-9._@:%\[\]-]{0,299}", re.ASCII)   # [user@]host[:port]


def _fits(grammar: re.Pattern, value: object) -> bool:
    return isinstance(value, str) and grammar.fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class Host:
    name: str                 # as the inventory names it: the name reports and the merged database show
    destination: str          # what ssh connects to (ansible_host, else the name)
    port: int | None = None   # None: ssh's own configuration decides
    user: str | None = None

    def __post_init__(self) -> None:
        if not _fits(HOST_NAME, self.destination):
            what = "host" if self.destination == self.name else "ansible_host"
            raise ValueError(f"{what} {clip(self.destination)}: not a host name ssh can take; use letters, digits, "
                             "'.', '-' and '_', or an IP address")
        if self.port is not None and not (type(self.port) is int and 1 <= self.port <= 65535):
            raise ValueError(f"ansible_port {clip(self.port)}: give a port from 1 to 65535")
        if self.user is not None and not _fits(USER_NAME, self.user):
            raise ValueError(f"ansible_user {clip(self.user)}: not a user name; use letters, digits, '.', '-' "
                             "and '_'")
        if not _fits(SHOWN_NAME, self.name):
            raise ValueError(f"host {clip(self.name)}: not a host name; use letters, digits, '.', '-' and '_' "
                             "(in a host list, user@host:port)")


_ALIASES = {"ansible_host": "ansible_host", "ansible_ssh_host": "ansible_host", "ansible_port": "ansible_port",
            "ansible_ssh_port": "ansible_port", "ansible_user": "ansible_user", "ansible_ssh_user": "ansible_user"}
_RANGE = re.compile(r"\[([0-9a-zA-Z]+):([0-9a-zA-Z]+)(?::([0-9]+))?\]")
# Limits of one inventory, far above a fleet of storage servers; each refusal names its limit
MAX_HOSTS = 10_000            # distinct hosts
MAX_ENTRIES = 100_000         # host entries: each host a group lists, ranges and aliases expanded
MAX_RANGE_HOSTS = MAX_ENTRIES
MAX_GROUPS = 1_000            # distinct groups
MAX_LINKS = 10_000            # child groups named, over all groups
MAX_GROUP_VISITS = 10_000     # YAML: groups walked, an alias walked each time it is named
MAX_NESTING = 50              # groups inside groups
MAX_VARIABLES = 100_000       # variables read, an alias counted each time
MAX_VALUE_CHARS = 1_000       # an INI value longer than this is text, not parsed as a Python literal


@dataclass
class _Inventory:
    hosts: dict[str, dict]                      # name -> its own variables
    groups: dict[str, list[str]]                # group -> hosts listed in it
    children: dict[str, list[str]]              # group -> child groups
    group_vars: dict[str, dict]
    counts: dict[str, int] = field(default_factory=dict)   # what the limits count so far
    named: set[str] = field(default_factory=set)           # every group named so far, defined or not

    def count(self, what: str, n: int, limit: int, noun: str) -> None:
        """Add n to a counter, refusing past its limit (before the n things are made)."""
        self.counts[what] = self.counts.get(what, 0) + n
        if self.counts[what] > limit:
            raise ValueError(f"more than {limit:,} {noun}: zfslab's limit for one inventory")


def _what(value: object) -> str:
    """A value for a message, never rendered whole: a YAML alias can stand for gigabytes of text."""
    if isinstance(value, Mapping):
        return f"a mapping of {len(value):,} keys"
    if isinstance(value, (list, tuple, set)):
        return f"a list of {len(value):,} items"
    return clip(value)


def _range_items(pattern: str, m: re.Match) -> tuple[str, str, int, int]:
    """(start, end, stride, how many) of one [start:end:stride], checked, nothing made yet."""
    start, end, stride_text = m.group(1), m.group(2), m.group(3) or "1"
    if len(stride_text) > 9 or int(stride_text) < 1:
        raise ValueError(f"{clip(pattern)}: the stride must be a number from 1 to 999,999,999")
    stride = int(stride_text)
    if start.isdigit() and end.isdigit():
        if len(start) > 9 or len(end) > 9 or int(end) < int(start):
            raise ValueError(f"{clip(pattern)}: the range must run upwards, from and to numbers of at most 9 digits")
        return start, end, stride, (int(end) - int(start)) // stride + 1
    if len(start) == len(end) == 1 and start.isalpha() and end.isalpha() and start <= end:
        return start, end, stride, (ord(end) - ord(start)) // stride + 1
    raise ValueError(f"{clip(pattern)}: a range runs from number to number or letter to letter, upwards")


def range_count(pattern: str) -> int:
    """How many names `pattern` stands for, counted without making them."""
    n = 1
    for m in _RANGE.finditer(pattern):
        n *= _range_items(pattern, m)[3]
        if n > MAX_RANGE_HOSTS:
            raise ValueError(f"{clip(pattern)}: more than {MAX_RANGE_HOSTS:,} hosts: zfslab's limit for one inventory")
    if n == 1 and not _RANGE.search(pattern) and ("[" in pattern or "]" in pattern):
        raise ValueError(f"{clip(pattern)}: a range is [start:end] or [start:end:stride], e.g. db[01:10]")
    return n


def expand_range(pattern: str) -> list[str]:
    """`db[01:03].x` -> db01.x db02.x db03.x; letters `[a:c]`; a stride `[1:9:2]`; ranges nest left to right."""
    m = _RANGE.search(pattern)
    if not m:
        if "[" in pattern or "]" in pattern:
            raise ValueError(f"{clip(pattern)}: a range is [start:end] or [start:end:stride], e.g. db[01:10]")
        return [pattern]
    range_count(pattern)   # refuses a pattern of too many names before one is made
    start, end, stride, _ = _range_items(pattern, m)
    if start.isdigit():
        width = len(start) if start.startswith("0") else 0
        items = [str(i).zfill(width) for i in range(int(start), int(end) + 1, stride)]
    else:
        items = [chr(c) for c in range(ord(start), ord(end) + 1, stride)]
    head, tail = pattern[:m.start()], pattern[m.end():]
    out = []
    for item in items:
        out += expand_range(head + item + tail)
    return out


def _expand(inv: _Inventory, pattern: str) -> list[str]:
    """A host pattern's names, counted against the inventory's limits before they are made."""
    inv.count("entries", range_count(pattern), MAX_ENTRIES, "host entries (ranges and aliases expanded)")
    return expand_range(pattern)


def _ini_value(text: str):
    if len(text) > MAX_VALUE_CHARS:   # literal_eval of megabytes of brackets costs gigabytes
        return text
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


def _new_group(inv: _Inventory, group: str) -> None:
    if group not in inv.named:
        inv.named.add(group)
        inv.count("groups", 1, MAX_GROUPS, "groups")


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
                _new_group(inv, section)
                {"hosts": inv.groups, "children": inv.children, "vars": inv.group_vars}[kind].setdefault(
                    section, {} if kind == "vars" else [])
                continue
            if kind == "vars":
                key, eq, value = line.partition("=")
                if not eq or not key.strip():
                    raise ValueError(f"{clip(line)}: a [{section}:vars] line is key=value")
                inv.count("variables", 1, MAX_VARIABLES, "variables")
                inv.group_vars[section][key.strip()] = _ini_value(value.strip())
            elif kind == "children":
                if len(line.split()) != 1:
                    raise ValueError(f"{clip(line)}: a [{section}:children] line names one group")
                inv.count("links", 1, MAX_LINKS, "child groups named")
                _new_group(inv, line)
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
                    inv.count("variables", 1, MAX_VARIABLES, "variables")
                    own[key] = _ini_value(value)
                for name in _expand(inv, tokens[0]):
                    name, port = _split_host_port(name)
                    vars_ = dict(own, **({"ansible_port": port} if port is not None else {}))
                    if name not in inv.hosts:
                        inv.count("hosts", 1, MAX_HOSTS, "hosts")
                    inv.hosts.setdefault(name, {}).update(vars_)
                    inv.groups.setdefault(section, []).append(name)
        except ValueError as e:
            raise InventoryError(shown(source, 200), number, str(e)) from None
    return inv


def parse_yaml(data: object, source: str) -> _Inventory:
    """The YAML format, from the object yaml.safe_load made of it. An alias is the object it
    names, not a copy, so a few hundred bytes can name one group or host list millions of times
    over: every group visit, host and variable counts against the limits, and no message shows a
    mapping or list itself."""
    inv = _Inventory({}, {"ungrouped": []}, {}, {})

    def fail(where: str, detail: str):
        raise InventoryError(shown(source, 200), shown(where, 200), detail)

    def walk(group: str, body: object, depth: int) -> None:
        try:
            inv.count("visits", 1, MAX_GROUP_VISITS, "groups walked (aliases repeated?)")
            _new_group(inv, group)
        except ValueError as e:
            fail(group, str(e))
        if depth > MAX_NESTING:
            fail(group, f"groups nested more than {MAX_NESTING} deep: zfslab's limit for one inventory")
        if body is None:
            body = {}
        if not isinstance(body, Mapping):
            fail(group, f"a group is a mapping of hosts, children and vars, not {_what(body)}")
        unknown = sorted((k for k in body if k not in ("hosts", "children", "vars")), key=str)
        if unknown:
            fail(group, f"{_what(unknown[0])} is not hosts, children or vars")
        inv.groups.setdefault(group, [])
        inv.children.setdefault(group, [])
        vars_ = body.get("vars") or {}
        if not isinstance(vars_, Mapping):
            fail(f"{group}.vars", f"vars is a mapping, not {_what(vars_)}")
        try:
            inv.count("variables", len(vars_), MAX_VARIABLES, "variables (aliases counted each time)")
        except ValueError as e:
            fail(f"{group}.vars", str(e))
        inv.group_vars.setdefault(group, {}).update(vars_)
        hosts = body.get("hosts") or {}
        if not isinstance(hosts, Mapping):
            fail(f"{group}.hosts", f"hosts is a mapping of names, not {_what(hosts)}")
        for pattern, own in hosts.items():
            if own is not None and not isinstance(own, Mapping):
                fail(f"{group}.hosts.{shown(pattern, 60)}", f"a host's variables are a mapping, not {_what(own)}")
            if not isinstance(pattern, (str, int)):
                fail(f"{group}.hosts", f"a host's name is text, not {_what(pattern)}")
            try:
                inv.count("variables", len(own or {}), MAX_VARIABLES, "variables (aliases counted each time)")
                for name in _expand(inv, str(pattern)):
                    name, port = _split_host_port(name)
                    if name not in inv.hosts:
                        inv.count("hosts", 1, MAX_HOSTS, "hosts")
                    inv.hosts.setdefault(name, {}).update(dict(own or {}, **({"ansible_port": port} if port else {})))
                    inv.groups[group].append(name)
            except ValueError as e:
                fail(f"{group}.hosts", str(e))
        children = body.get("children") or {}
        if not isinstance(children, Mapping):
            fail(f"{group}.children", f"children is a mapping of groups, not {_what(children)}")
        for child, child_body in children.items():
            if not isinstance(child, (str, int)):
                fail(f"{group}.children", f"a group's name is text, not {_what(child)}")
            try:
                inv.count("links", 1, MAX_LINKS, "child groups named")
            except ValueError as e:
                fail(f"{group}.children", str(e))
            inv.children[group].append(str(child))
            walk(str(child), child_body, depth + 1)

    if not isinstance(data, Mapping) or not data:
        fail("top", "a YAML inventory is a mapping of groups, e.g. all: {hosts: {a: }}")
    for group, body in data.items():
        if not isinstance(group, (str, int)):
            fail("top", f"a group's name is text, not {_what(group)}")
        walk(str(group), body, 0)
    return inv


def _check_nesting(inv: _Inventory, source: str) -> dict[str, int]:
    """Refuse a group that is its own child and nesting past MAX_NESTING; each group's height
    (the longest chain of children below it), every group walked once."""
    height: dict[str, int] = {}
    on_path: list[str] = []

    def down(group: str) -> int:
        if group in height:
            return height[group]
        if group in on_path:
            cycle = on_path[on_path.index(group):] + [group]
            raise InventoryError(shown(source, 200), "group", f"group {clip(group)} is its own child "
                                                              f"({shown(' > '.join(cycle), 200)})")
        if len(on_path) > MAX_NESTING:   # on_path: the groups above this one, so its depth
            raise InventoryError(shown(source, 200), "group", f"groups nested more than {MAX_NESTING} deep "
                                                              f"(under {clip(on_path[0])}): zfslab's limit for one "
                                                              "inventory")
        on_path.append(group)
        height[group] = 1 + max((down(c) for c in inv.children.get(group, [])), default=0)
        on_path.pop()
        return height[group]
    for g in list(inv.children):
        down(g)
    return height


def _members(inv: _Inventory, group: str) -> list[str]:
    """The hosts of a group and of its children, in the order the file lists them. Each group is
    walked once: a second path to it adds only hosts already listed (a DAG, _check_nesting)."""
    if group == "all":
        return list(inv.hosts)
    out: dict[str, None] = {}
    seen: set[str] = set()

    def visit(g: str) -> None:
        if g in seen:
            return
        seen.add(g)
        out.update(dict.fromkeys(inv.groups.get(g, [])))
        for child in inv.children.get(g, []):
            visit(child)
    visit(group)
    return list(out)


def _depths(inv: _Inventory) -> dict[str, int]:
    """How deep each group sits below `all`: a child's variables beat its parent's (Ansible's order)."""
    parents: dict[str, set[str]] = {}
    for g, kids in inv.children.items():
        for k in kids:
            parents.setdefault(k, set()).add(g)
    depth: dict[str, int] = {"all": 0}

    def of(g: str) -> int:   # a DAG no deeper than MAX_NESTING (_check_nesting): memoised, linear
        if g not in depth:
            depth[g] = 1 + max((of(p) for p in parents.get(g, set()) - {"all"}), default=0)
        return depth[g]
    for g in set(inv.groups) | set(inv.children) | set(inv.group_vars):
        of(g)
    return depth


def _groups_of(inv: _Inventory) -> dict[str, frozenset[str]]:
    """Each host -> every group it belongs to, through children too (ancestors memoised)."""
    parents: dict[str, set[str]] = {}
    for g, kids in inv.children.items():
        for k in kids:
            parents.setdefault(k, set()).add(g)
    above: dict[str, frozenset[str]] = {}

    def ancestors(g: str) -> frozenset[str]:
        if g not in above:
            found = {g}
            for p in parents.get(g, ()):
                found |= ancestors(p)
            above[g] = frozenset(found)
        return above[g]
    out: dict[str, set[str]] = {}
    for g, names in inv.groups.items():
        for name in names:
            out.setdefault(name, set()).update(ancestors(g))
    return {h: frozenset(gs - {"all"}) for h, gs in out.items()}


def select(inv: _Inventory, group: str, source: str) -> tuple[Host, ...]:
    """The hosts of one group (and its children), with their connection settings."""
    if len(inv.hosts) > MAX_HOSTS:
        raise InventoryError(shown(source, 200), "hosts", f"{len(inv.hosts):,} hosts, more than {MAX_HOSTS:,}")
    known = set(inv.groups) | set(inv.children) | set(inv.group_vars) | {"all"}
    if group not in known:
        names = ", ".join(sorted(g for g in known if g != "ungrouped"))
        raise InventoryError(shown(source, 200), "group", f"no group {clip(group)}; it has: {shown(names, 200)}")
    _check_nesting(inv, source)
    chosen = _members(inv, group)
    if not chosen:
        raise InventoryError(shown(source, 200), "group", f"group {clip(group)} holds no hosts")
    depth = _depths(inv)
    with_vars = {g for g, v in inv.group_vars.items() if g != "all" and any(k in _ALIASES for k in v)}
    groups_of = _groups_of(inv)
    hosts = []
    for name in chosen:
        merged: dict = {}
        for g in ["all", *sorted(groups_of.get(name, frozenset()) & with_vars, key=lambda g: (depth[g], g))]:
            merged.update({_ALIASES[k]: v for k, v in inv.group_vars.get(g, {}).items() if k in _ALIASES})
        merged.update({_ALIASES[k]: v for k, v in inv.hosts[name].items() if k in _ALIASES})
        try:
            port = merged.get("ansible_port")
            if isinstance(port, str) and port.isascii() and port.isdigit() and len(port) <= 5:
                port = int(port)
            destination, user = merged.get("ansible_host", name), merged.get("ansible_user")
            for key, value in (("ansible_host", destination), ("ansible_user", user), ("ansible_port", port)):
                if isinstance(value, (Mapping, list, tuple, set)):   # never str() of what an alias names
                    raise ValueError(f"{key} is {_what(value)}, not a single value")
            hosts.append(Host(name, str(destination), port, None if user is None else str(user)))
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
