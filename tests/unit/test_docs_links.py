"""Every reference to a page of docs/ leads somewhere: the file exists and, when a section is
named (docs/capacity.md#slop), a heading with that anchor exists. Anchors are GitHub's: the
heading lowercased, punctuation dropped, spaces turned into '-', and '-1', '-2'... added to
repeats. The design notes live in the repository: nothing in src/ points outside it."""

from __future__ import annotations

import os
import re

import pytest

from tests.conftest import REPO

DOCS = os.path.join(REPO, "docs")
SCANNED = ("src", "tests", "scripts", "benchmarks", "docs")
SKIP_DIRS = {"__pycache__", ".hypothesis", ".pytest_cache", "zfslab.egg-info"}
THIS = os.path.abspath(__file__)

# docs/NAME.md or docs/NAME.md#anchor, not as the tail of a longer path (openzfs-docs/...)
CODE_REF = re.compile(r"(?<![\w./-])docs/([\w./-]+?\.md)(?:#([\w-]+))?")
# a markdown link inside docs/: [text](capacity.md#slop), [text](#slop), [text](../README.md)
MD_LINK = re.compile(r"\]\(([^)\s]*)\)")
OUTSIDE = "shared/" + "design"


def slug(heading: str) -> str:
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: str) -> set[str]:
    """The anchors of a markdown file's headings (fenced code blocks skipped)."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if fenced or not m:
                continue
            base = slug(m.group(1))
            n = counts.get(base, 0)
            counts[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def _text_files(roots):
    """(path, text) of every UTF-8 file under these folders or files of the repository."""
    paths = []
    for root in roots:
        top = os.path.join(REPO, root)
        if os.path.isfile(top):
            paths.append(top)
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
            paths += [os.path.join(folder, name) for name in sorted(files)]
    for path in paths:
        if os.path.abspath(path) == THIS:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                yield path, f.read()
        except (UnicodeDecodeError, OSError):
            continue


def _references():
    """(where, target file, anchor or None) for every reference to a docs page."""
    for path, text in _text_files((*SCANNED, "README.md")):
        rel = os.path.relpath(path, REPO)
        for number, line in enumerate(text.splitlines(), 1):
            for m in CODE_REF.finditer(line):
                yield f"{rel}:{number}", os.path.join(DOCS, m.group(1)), m.group(2)
            if rel.startswith("docs" + os.sep) and rel.endswith(".md"):
                for m in MD_LINK.finditer(line):
                    target = m.group(1)
                    if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                        continue
                    file_part, _, anchor = target.partition("#")
                    file = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                    if file.endswith(".md"):
                        yield f"{rel}:{number}", file, anchor or None


REFERENCES = sorted(set(_references()), key=lambda r: (r[0], r[1], r[2] or ""))


def test_there_are_references_to_check():
    assert len(REFERENCES) > 20


@pytest.mark.parametrize("where,file,anchor", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_reference_points_to_an_existing_page_and_heading(where, file, anchor):
    assert os.path.isfile(file), f"{where}: {os.path.relpath(file, REPO)} does not exist"
    if anchor:
        assert anchor in anchors(file), (
            f"{where}: {os.path.relpath(file, REPO)} has no heading #{anchor}; "
            f"its anchors: {', '.join(sorted(anchors(file)))}")


def test_nothing_in_src_points_to_the_design_notes_outside_the_repository():
    offenders = [f"{os.path.relpath(path, REPO)}:{n}" for path, text in _text_files(("src",))
                 for n, line in enumerate(text.splitlines(), 1) if OUTSIDE in line]
    assert not offenders, f"{OUTSIDE} is outside the repository; point to docs/ instead: {', '.join(offenders)}"
