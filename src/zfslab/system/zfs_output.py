"""Pure parsers of `zpool`/`zfs` output (OpenZFS 2.1 to 2.3), tested on captured output in tests/data."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from zfslab.errors import InputError, shown

_SUFFIX = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50, "E": 1 << 60}


def human_bytes(text: str) -> int:
    """Bytes from zfs's humanized sizes: '242M', '16.5M', '0B', '375K', '1234'."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([BKMGTPE]?)i?B?\s*", text)
    if not m:
        raise ValueError(f"not a zfs size: {text!r}")
    return int(float(m.group(1)) * _SUFFIX[m.group(2)])


def human_count(text: str) -> int:
    """Error counters: exact with -p, else '1.2K'."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    m = re.fullmatch(r"([0-9.]+)([KMGTPE])", text)
    if not m:
        raise ValueError(f"not an error count: {text!r}")
    return int(float(m.group(1)) * 1000 ** ("KMGTPE".index(m.group(2)) + 1))


def duration_seconds(text: str) -> int:
    """'00:00:13' or '1 days 02:03:04' -> seconds."""
    m = re.search(r"(?:(\d+) days? )?(\d+):(\d\d):(\d\d)", text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    days = int(m.group(1) or 0)
    return ((days * 24 + int(m.group(2))) * 60 + int(m.group(3))) * 60 + int(m.group(4))


@dataclass(frozen=True)
class ZfsVersion:
    userland: str  # e.g. '2.1.11-1+deb12u1'
    kernel: str

    @property
    def series(self) -> str:
        """'2.1', '2.3', ... of the running kernel module."""
        return ".".join(self.kernel.split(".")[:2])


def parse_version(text: str) -> ZfsVersion:
    user = re.search(r"^zfs-(?!kmod-)(\S+)", text, re.M)
    kmod = re.search(r"^zfs-kmod-(\S+)", text, re.M)
    if not user:
        # InputError (a ValueError): a one-line error, exit 2, wherever the output came from
        raise InputError(f"`zfs version` printed {shown(text, 60)}, with no zfs-VERSION line zfslab reads; "
                         "run `zfs version` by hand (OpenZFS prints zfs-2.x.y, then zfs-kmod-2.x.y)")
    return ZfsVersion(user.group(1), kmod.group(1) if kmod else "")


def parse_tabular(text: str, columns: list[str]) -> list[dict[str, str]]:
    """Rows of `-H` output (tab-separated) as dicts keyed by the requested columns."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        values = line.split("\t")
        if len(values) != len(columns):
            raise ValueError(f"expected {len(columns)} columns, got {len(values)}: {line!r}")
        rows.append(dict(zip(columns, values)))
    return rows


@dataclass(frozen=True)
class VdevStatus:
    name: str
    state: str
    read_errors: int = 0
    write_errors: int = 0
    checksum_errors: int = 0
    note: str = ""
    children: tuple["VdevStatus", ...] = ()

    def walk(self):
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def leaves(self) -> list["VdevStatus"]:
        return [v for v in self.walk() if not v.children]


@dataclass(frozen=True)
class ScanStatus:
    kind: str | None  # 'scrub' | 'resilver' | None
    in_progress: bool = False
    canceled: bool = False
    repaired_bytes: int = 0
    resilvered_bytes: int = 0
    errors: int = 0
    seconds: int | None = None
    percent_done: float | None = None
    issued_bytes: int | None = None
    total_bytes: int | None = None
    rate_bytes_s: int | None = None
    text: str = ""


@dataclass(frozen=True)
class PoolStatus:
    name: str
    state: str
    status: str
    action: str
    scan: ScanStatus
    root: VdevStatus  # the pool line, its children the top-level data vdevs
    sections: dict[str, tuple[VdevStatus, ...]] = field(default_factory=dict)  # spares, logs, cache, ...
    errors: str = ""
    damaged_files: tuple[str, ...] = ()

    @property
    def top_level(self) -> tuple[VdevStatus, ...]:
        return self.root.children

    @property
    def no_known_errors(self) -> bool:
        return self.errors.startswith("No known data errors")

    def vdev(self, name: str) -> VdevStatus | None:
        for top in (self.root, *[v for vs in self.sections.values() for v in vs]):
            for v in top.walk():
                if v.name == name or v.name.rsplit("/", 1)[-1] == name.rsplit("/", 1)[-1]:
                    return v
        return None


def _field(text: str, key: str) -> str:
    """The value of 'key:' in zpool status, with its continuation lines (indented by a tab)."""
    m = re.search(rf"^\s*{key}: (.*(?:\n\t.*)*)", text, re.M)
    return re.sub(r"\s*\n\t\s*", " ", m.group(1)).strip() if m else ""


def parse_scan(text: str) -> ScanStatus:
    if not text or text.startswith("none requested"):
        return ScanStatus(None, text=text)
    # a sequential rebuild names its top-level vdev: "resilvered (mirror-0) 64.0M in ..."
    # (print_rebuild_status_impl); read it as the healing resilver's line
    text = re.sub(r"^(resilver(?:ed)?) \([^)]*\) ", r"\1 ", text)
    kind = "resilver" if text.startswith("resilver") else "scrub" if text.startswith("scrub") else None
    if " in progress " in text or text.startswith(("scrub in progress", "resilver in progress")):
        pct = re.search(r"([0-9.]+)% done", text)
        # 2.2+: "16.5M / 241M issued at 16.5M/s"; 2.1: "31.5M issued at 31.5M/s, 241M total"
        issued = re.search(r"([0-9.]+[BKMGTPE]?) / ([0-9.]+[BKMGTPE]?) issued(?: at ([0-9.]+[BKMGTPE]?)/s)?", text)
        old = re.search(r"([0-9.]+[BKMGTPE]?) issued at ([0-9.]+[BKMGTPE]?)/s, ([0-9.]+[BKMGTPE]?) total", text)
        if old and not issued:
            issued_b, total_b, rate_b = old.group(1), old.group(3), old.group(2)
        elif issued:
            issued_b, total_b, rate_b = issued.group(1), issued.group(2), issued.group(3)
        else:
            issued_b = total_b = rate_b = None
        repaired = re.search(r"([0-9.]+[BKMGTPE]?) repaired", text)
        resilvered = re.search(r"([0-9.]+[BKMGTPE]?) resilvered", text)
        return ScanStatus(
            kind, in_progress=True,
            percent_done=float(pct.group(1)) if pct else None,
            issued_bytes=human_bytes(issued_b) if issued_b else None,
            total_bytes=human_bytes(total_b) if total_b else None,
            rate_bytes_s=human_bytes(rate_b) if rate_b else None,
            repaired_bytes=human_bytes(repaired.group(1)) if repaired else 0,
            resilvered_bytes=human_bytes(resilvered.group(1)) if resilvered else 0, text=text)
    if "canceled" in text:
        return ScanStatus(kind, canceled=True, text=text)
    m = re.search(r"(?:repaired|resilvered) ([0-9.]+[BKMGTPE]?) in (.+?) with (\d+) errors", text)
    if not m:
        return ScanStatus(kind, text=text)
    done = human_bytes(m.group(1))
    return ScanStatus(kind, repaired_bytes=done if kind == "scrub" else 0,
                      resilvered_bytes=done if kind == "resilver" else 0,
                      errors=int(m.group(3)), seconds=duration_seconds(m.group(2)), percent_done=100.0, text=text)


_SECTIONS = ("spares", "logs", "cache", "special", "dedup")


def parse_status(text: str) -> PoolStatus:
    """A `zpool status [-p] [-v] POOL` report as a tree."""
    name = _field(text, "pool")
    if not name:
        raise ValueError(f"not a zpool status report: {text[:200]!r}")
    config = text.split("config:", 1)[1] if "config:" in text else ""
    body = config.split("\nerrors:", 1)[0]
    stack: list[tuple[int, dict]] = []
    roots: list[dict] = []
    sections: dict[str, list[dict]] = {}
    current_section: str | None = None
    for line in body.splitlines():
        if not line.startswith("\t") or not line.strip() or line.strip().startswith("NAME "):
            continue
        content = line[1:]
        depth = (len(content) - len(content.lstrip(" "))) // 2
        words = content.split()
        if depth == 0 and words[0] in _SECTIONS and len(words) == 1:
            current_section = words[0]
            sections[current_section] = []
            stack = []
            continue
        node = {"name": words[0], "state": words[1] if len(words) > 1 else "", "children": []}
        if len(words) >= 5 and all(re.fullmatch(r"[0-9.]+[KMGTPE]?", w) for w in words[2:5]):
            node.update(read=human_count(words[2]), write=human_count(words[3]), cksum=human_count(words[4]),
                        note=" ".join(words[5:]))
        else:
            node["note"] = " ".join(words[2:])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1]["children"].append(node)
        elif current_section:
            sections[current_section].append(node)
        else:
            roots.append(node)
        stack.append((depth, node))

    def build(n: dict) -> VdevStatus:
        return VdevStatus(n["name"], n["state"], n.get("read", 0), n.get("write", 0), n.get("cksum", 0),
                          n.get("note", ""), tuple(build(c) for c in n["children"]))

    root = build(roots[0]) if roots else VdevStatus(name, "")
    errors_block = text.split("\nerrors:", 1)[1] if "\nerrors:" in text else ""
    errors_line = errors_block.strip().splitlines()[0].strip() if errors_block.strip() else ""
    files = tuple(line.strip() for line in errors_block.splitlines()[1:] if line.strip())
    return PoolStatus(
        name=name, state=_field(text, "state"), status=_field(text, "status"), action=_field(text, "action"),
        scan=parse_scan(_field(text, "scan")), root=root,
        sections={k: tuple(build(n) for n in v) for k, v in sections.items()},
        errors=errors_line, damaged_files=files,
    )
