"""The README's first command, verbatim, on fresh minimal Debian 12 and 13 (debootstrap chroots,
tests/setup/fresh_debian.py): as root, and as a new user with sudo, it installs zfslab and
`zfslab plan 24x4TB` answers; a new login finds `zfslab` and its completion on PATH; --uninstall
removes what it made. Needs root and debootstrap: skipped otherwise, unless
ZFSLAB_TEST_REQUIRE_SETUP=1 (scripts/test.sh as root, CI), when a skip fails. As root, a missing
tree is built first (a few minutes; scripts/test.sh builds them in the background)."""

from __future__ import annotations

import os
import re
import shutil

import pytest

from tests.setup import fresh_debian
from tests.setup.conftest import TIMINGS
from tests.setup.fresh_debian import SUITES, USER, fresh_tree, readme_first_line, run_line

pytestmark = pytest.mark.setup


def _unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (debootstrap, chroot)"
    if shutil.which("debootstrap") is None:
        return "debootstrap is not installed (apt-get install debootstrap)"
    return None


@pytest.fixture(scope="module", params=SUITES)
def suite(request) -> str:
    reason = _unavailable()
    if reason is None:
        try:
            fresh_debian.build_base(request.param)
        except (fresh_debian.SetupError, OSError) as e:
            reason = str(e)
    if reason is not None:
        if os.environ.get("ZFSLAB_TEST_REQUIRE_SETUP") == "1":
            pytest.fail(f"ZFSLAB_TEST_REQUIRE_SETUP=1 but {reason}")
        pytest.skip(reason)
    return request.param


def _assert_planned(run: fresh_debian.Run) -> None:
    assert run.exit_code == 0, f"{run.suite} as {run.who}: exit {run.exit_code}\n{run.output[-4000:]}"
    assert re.search(r"^★  \S+", run.output, re.M), run.output[-4000:]  # the recommended row of the table
    assert "★ Recommended:" in run.output


def test_as_root(suite):
    with fresh_tree(suite, "root") as root:
        run = run_line(root, suite, "root", readme_first_line())
        TIMINGS.append(f"{suite} as root: `{run.command}` exit {run.exit_code} in {run.seconds:.0f} s")
        _assert_planned(run)
        assert "installing Debian's python3 python3-venv ca-certificates (apt-get)" in run.output
        assert os.readlink(root / "usr/local/bin/zfslab") == "/opt/zfslab/venv/bin/zfslab"
        for made in ("usr/local/share/bash-completion/completions/zfslab", "usr/local/share/zsh/site-functions/_zfslab",
                     "usr/local/share/fish/vendor_completions.d/zfslab.fish", "usr/local/share/man/man1/zfslab.1"):
            assert (root / made).is_file(), made

        # a new login finds it; a second run updates in place and lists each file once
        again = run_line(root, suite, "root", "zfslab completion bash | head -1 && sh scripts/install.sh --version")
        assert again.exit_code == 0, again.output[-3000:]
        assert "generated from its parser by `zfslab completion bash`" in again.output
        assert re.search(r"^zfslab \d", again.output, re.M)
        manifest = (root / "opt/zfslab/installed-files").read_text().split()
        assert len(manifest) == len(set(manifest)) == 5

        gone = run_line(root, suite, "root", "sh scripts/install.sh --uninstall")
        assert gone.exit_code == 0, gone.output
        assert not (root / "opt/zfslab").exists() and not os.path.lexists(root / "usr/local/bin/zfslab")
        assert not (root / "usr/local/share/man/man1/zfslab.1").exists()

        # a zfslab on PATH that the script did not make is left alone, and nothing is installed
        (root / "usr/local/bin/zfslab").write_text("#!/bin/sh\necho theirs\n")
        refused = run_line(root, suite, "root", "sh scripts/install.sh")
        assert refused.exit_code == 1
        assert "/usr/local/bin/zfslab exists and was not made by this script" in refused.output
        assert (root / "usr/local/bin/zfslab").read_text() == "#!/bin/sh\necho theirs\n"
        assert not (root / "opt/zfslab/venv").exists()


def test_as_a_new_user_with_sudo(suite):
    home = f"home/{USER}"
    with fresh_tree(suite, USER) as root:
        # without sudo rights (and no python3 on a minimal system): one line with the apt command
        sudoers = root / "etc/sudoers.d" / USER
        kept = sudoers.read_text()
        sudoers.unlink()
        bare = run_line(root, suite, USER, "sh scripts/install.sh")
        assert bare.exit_code == 1
        assert bare.output.strip().endswith(
            "as root run: apt-get install python3 python3-venv ca-certificates"), bare.output
        sudoers.write_text(kept)
        os.chmod(sudoers, 0o440)

        run = run_line(root, suite, USER, readme_first_line())
        TIMINGS.append(f"{suite} as {USER}: `{run.command}` exit {run.exit_code} in {run.seconds:.0f} s")
        _assert_planned(run)
        assert "(apt-get through sudo)" in run.output
        # a fresh user's PATH has no ~/.local/bin until their next login: the script says so and ran zfslab itself
        assert f"/home/{USER}/.local/bin is not on your PATH yet" in run.output
        assert os.readlink(root / home / ".local/bin/zfslab") == f"/home/{USER}/.local/share/zfslab/venv/bin/zfslab"
        assert (root / home / ".local/share/bash-completion/completions/zfslab").is_file()
        assert (root / home / ".config/fish/completions/zfslab.fish").is_file()
        assert not (root / "opt/zfslab").exists() and not os.path.lexists(root / "usr/local/bin/zfslab")

        # the next login (Debian's ~/.profile adds ~/.local/bin once it exists) finds zfslab
        again = run_line(root, suite, USER, "zfslab --version")
        assert again.exit_code == 0 and again.output.startswith("zfslab "), again.output

        gone = run_line(root, suite, USER, "sh scripts/install.sh --uninstall")
        assert gone.exit_code == 0, gone.output
        assert not (root / home / ".local/share/zfslab").exists()
        assert not os.path.lexists(root / home / ".local/bin/zfslab")
        assert not (root / home / ".config/fish/completions/zfslab.fish").exists()
