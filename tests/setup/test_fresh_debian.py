"""The README's first command, verbatim, on fresh minimal Debian 12 and 13 (debootstrap chroots,
tests/setup/fresh_debian.py): as root, and as a new user with sudo, it installs zfslab and
`zfslab plan 24x4TB` answers; a new login finds `zfslab` and its completion on PATH; --uninstall
removes what it made. Needs root and debootstrap: skipped otherwise, unless
ZFSLAB_TEST_REQUIRE_SETUP=1 (scripts/test.sh as root, CI), when a skip fails. As root, a missing
tree is built first (a few minutes; scripts/test.sh builds them in the background).

The runs happen in the background from the end of collection (tests/setup/conftest.py): each
scenario below does the runs and notes what it saw, and the test checks the notes."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from tests.setup import fresh_debian
from tests.setup.background import TIMINGS, outcome
from tests.setup.fresh_debian import SUITES, USER, Run, fresh_tree, readme_first_line, run_line

pytestmark = pytest.mark.setup


def _unavailable(suite: str) -> str | None:
    if os.geteuid() != 0:
        return "needs root (debootstrap, chroot)"
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed (apt-get install debootstrap)"
    try:
        fresh_debian.build_base(suite)
    except (fresh_debian.SetupError, OSError) as e:
        return str(e)
    return None


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("ZFSLAB_TEST_REQUIRE_SETUP") == "1":
        pytest.fail(f"ZFSLAB_TEST_REQUIRE_SETUP=1 but {reason}")
    pytest.skip(reason)


def _timed(run: Run) -> Run:
    TIMINGS.append(f"{run.suite} as {run.who}: `{run.command}` exit {run.exit_code} in {run.seconds:.0f} s")
    return run


def _root_scenario(suite: str) -> dict:
    if reason := _unavailable(suite):
        return {"unavailable": reason}
    seen: dict = {}
    with fresh_tree(suite, "root") as root:
        seen["run"] = _timed(run_line(root, suite, "root", readme_first_line()))
        link = root / "usr/local/bin/zfslab"
        seen["link"] = os.readlink(link) if os.path.islink(link) else None
        seen["made"] = {f: (root / f).is_file() for f in (
            "usr/local/share/bash-completion/completions/zfslab", "usr/local/share/zsh/site-functions/_zfslab",
            "usr/local/share/fish/vendor_completions.d/zfslab.fish", "usr/local/share/man/man1/zfslab.1")}
        # a new login finds it; a second run updates in place and lists each file once
        seen["again"] = run_line(root, suite, "root",
                                 "zfslab completion bash | head -1 && sh scripts/install.sh --version")
        seen["manifest"] = (root / "opt/zfslab/installed-files").read_text().split()
        seen["gone"] = run_line(root, suite, "root", "sh scripts/install.sh --uninstall")
        seen["left"] = [f for f in ("opt/zfslab", "usr/local/bin/zfslab", "usr/local/share/man/man1/zfslab.1")
                        if os.path.lexists(root / f)]
        # a zfslab on PATH that the script did not make is left alone, and nothing is installed
        theirs = "#!/bin/sh\necho theirs\n"
        (root / "usr/local/bin/zfslab").write_text(theirs)
        seen["refused"] = run_line(root, suite, "root", "sh scripts/install.sh")
        seen["theirs_kept"] = (root / "usr/local/bin/zfslab").read_text() == theirs
        seen["venv_after_refusal"] = (root / "opt/zfslab/venv").exists()
    return seen


def _user_scenario(suite: str) -> dict:
    if reason := _unavailable(suite):
        return {"unavailable": reason}
    seen: dict = {}
    home = f"home/{USER}"
    with fresh_tree(suite, USER) as root:
        # without sudo rights (and no python3 on a minimal system): one line with the apt command
        sudoers = root / "etc/sudoers.d" / USER
        kept = sudoers.read_text()
        sudoers.unlink()
        seen["bare"] = run_line(root, suite, USER, "sh scripts/install.sh")
        sudoers.write_text(kept)
        os.chmod(sudoers, 0o440)
        seen["run"] = _timed(run_line(root, suite, USER, readme_first_line()))
        link = root / home / ".local/bin/zfslab"
        seen["link"] = os.readlink(link) if os.path.islink(link) else None
        seen["made"] = {f: (root / home / f).is_file() for f in (
            ".local/share/bash-completion/completions/zfslab", ".config/fish/completions/zfslab.fish",
            ".local/share/man/man1/zfslab.1")}
        seen["system_untouched"] = not os.path.lexists(root / "opt/zfslab") and not os.path.lexists(
            root / "usr/local/bin/zfslab")
        # the next login (Debian's ~/.profile adds ~/.local/bin once it exists) finds zfslab
        seen["again"] = run_line(root, suite, USER, "zfslab --version")
        seen["gone"] = run_line(root, suite, USER, "sh scripts/install.sh --uninstall")
        seen["left"] = [f for f in (".local/share/zfslab", ".local/bin/zfslab", ".config/fish/completions/zfslab.fish")
                        if os.path.lexists(root / home / f)]
    return seen


SCENARIOS = {**{f"test_as_root[{s}]": (lambda s=s: _root_scenario(s)) for s in SUITES},
             **{f"test_as_a_new_user_with_sudo[{s}]": (lambda s=s: _user_scenario(s)) for s in SUITES}}


def _assert_planned(run: Run) -> None:
    assert run.exit_code == 0, f"{run.suite} as {run.who}: exit {run.exit_code}\n{run.output[-4000:]}"
    assert re.search(r"^★  \S+", run.output, re.M), run.output[-4000:]  # the recommended row of the table
    assert "★ Recommended:" in run.output


@pytest.mark.parametrize("suite", SUITES)
def test_as_root(request, suite):
    seen = outcome(request)
    if "unavailable" in seen:
        _skip_or_fail(seen["unavailable"])
    _assert_planned(seen["run"])
    assert "installing Debian's python3 python3-venv ca-certificates (apt-get)" in seen["run"].output
    assert seen["link"] == "/opt/zfslab/venv/bin/zfslab"
    assert all(seen["made"].values()), seen["made"]
    again = seen["again"]
    assert again.exit_code == 0, again.output[-3000:]
    assert "generated from its parser by `zfslab completion bash`" in again.output
    assert re.search(r"^zfslab \d", again.output, re.M)
    assert len(seen["manifest"]) == len(set(seen["manifest"])) == 5
    assert seen["gone"].exit_code == 0, seen["gone"].output
    assert seen["left"] == []
    refused = seen["refused"]
    assert refused.exit_code == 1
    assert "/usr/local/bin/zfslab exists and was not made by this script" in refused.output
    assert seen["theirs_kept"] and not seen["venv_after_refusal"]


@pytest.mark.parametrize("suite", SUITES)
def test_as_a_new_user_with_sudo(request, suite):
    seen = outcome(request)
    if "unavailable" in seen:
        _skip_or_fail(seen["unavailable"])
    bare = seen["bare"]
    assert bare.exit_code == 1
    assert bare.output.strip().endswith("as root run: apt-get install python3 python3-venv ca-certificates"), \
        bare.output
    run = seen["run"]
    _assert_planned(run)
    assert "(apt-get through sudo)" in run.output
    # a fresh user's PATH has no ~/.local/bin until their next login: the script says so and ran zfslab itself
    assert f"/home/{USER}/.local/bin is not on your PATH yet" in run.output
    assert seen["link"] == f"/home/{USER}/.local/share/zfslab/venv/bin/zfslab"
    assert all(seen["made"].values()), seen["made"]
    assert seen["system_untouched"]
    assert seen["again"].exit_code == 0 and seen["again"].output.startswith("zfslab "), seen["again"].output
    assert seen["gone"].exit_code == 0, seen["gone"].output
    assert seen["left"] == []
