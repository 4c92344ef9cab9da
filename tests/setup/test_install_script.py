"""scripts/install.sh --user on this machine, with HOME in a temporary folder: the path of a Python
without ensurepip and without apt (TrueNAS SCALE; docs/install.md#each-system). pip comes from its
wheel on PyPI, zfslab from the checkout, and the README's main job answers; files it did not make
are left alone; --uninstall removes exactly what it made. The fresh-Debian chroots
(test_fresh_debian.py) test the apt paths."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.setup.background import outcome

pytestmark = pytest.mark.setup
# The temporary folder as the session starts: the scenario runs in a background thread while other
# tests run, and tests/property/test_fuzz_cli.py points tempfile.tempdir (process-wide) at a private
# folder of its own, which it removes when done. A CI-like run lost the scenario's HOME that way
# (FileNotFoundError under /tmp/zfslab-fuzz-*/tmp/zfslab-install-*), so the folder is named here.
TMP = tempfile.gettempdir()


def _install(home: Path, shadow: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "XDG_"))}
    # an ensurepip that is not there, as on TrueNAS SCALE (and Debian without python3-venv)
    env |= {"HOME": str(home), "PYTHONPATH": str(shadow), "COLUMNS": "100"}
    return subprocess.run(["sh", "scripts/install.sh", "--user", *args], cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=1800)


def _scenario() -> dict:
    """Runs in the background from the end of collection (tests/setup/conftest.py); notes what it saw."""
    seen: dict = {}
    with tempfile.TemporaryDirectory(prefix="zfslab-install-", dir=TMP) as tmp:
        shadow = Path(tmp) / "shadow"
        (shadow / "ensurepip").mkdir(parents=True)
        (shadow / "ensurepip" / "__init__.py").write_text("raise ImportError('no ensurepip on this system')\n")
        home = Path(tmp) / "home"
        (home / ".config" / "fish" / "completions").mkdir(parents=True)
        theirs = home / ".config" / "fish" / "completions" / "zfslab.fish"
        theirs.write_text("# the user's own\n")
        seen["home"], seen["theirs"] = str(home), str(theirs)
        seen["run"] = _install(home, shadow, "plan", "24x4TB")
        venv = home / ".local" / "share" / "zfslab" / "venv"
        link = home / ".local" / "bin" / "zfslab"
        seen["link_ok"] = os.path.islink(link) and os.readlink(link) == f"{venv}/bin/zfslab"
        seen["pip"] = (venv / "bin" / "pip").exists()
        seen["theirs_kept"] = theirs.read_text() == "# the user's own\n"
        bash = home / ".local" / "share" / "bash-completion" / "completions" / "zfslab"
        seen["bash"] = bash.read_text() if bash.exists() else ""
        page = home / ".local" / "share" / "man" / "man1" / "zfslab.1"
        seen["man"] = page.read_text() if page.exists() else ""
        seen["gone"] = subprocess.run(["sh", str(home / ".local/share/zfslab/install.sh"), "--user", "--uninstall"],
                                      env={"HOME": str(home), "PATH": os.environ["PATH"]}, capture_output=True,
                                      text=True, timeout=120)
        seen["left"] = [str(p) for p in (home / ".local/share/zfslab", link, bash) if os.path.lexists(p)]
        seen["theirs_kept_after"] = theirs.read_text() == "# the user's own\n"
    return seen


SCENARIOS = {"test_without_ensurepip_or_apt_pip_comes_from_its_wheel": _scenario}


def test_without_ensurepip_or_apt_pip_comes_from_its_wheel(request):
    seen = outcome(request)
    run = seen["run"]
    assert run.returncode == 0, run.stderr[-4000:]
    assert "no ensurepip here: bootstrapping pip from its wheel on PyPI" in run.stderr
    assert "apt-get" not in run.stderr
    assert "★ Recommended:" in run.stdout
    assert seen["link_ok"] and seen["pip"]
    assert f"left {seen['theirs']} alone: it was not made by this script" in run.stderr
    assert seen["theirs_kept"]
    assert "generated from its parser by `zfslab completion bash`" in seen["bash"]
    assert seen["man"].startswith('.\\" zfslab(1)')
    assert seen["gone"].returncode == 0, seen["gone"].stderr
    assert seen["left"] == [] and seen["theirs_kept_after"]
