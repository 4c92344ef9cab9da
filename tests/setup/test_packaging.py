"""The wheel and the sdist of `python3 -m build` hold every file of the package, and the wheel
installs into a fresh venv where `zfslab plan 24x4TB` answers (docs/install.md#wheel-and-sdist).

`python -m build` makes the sdist first and the wheel from the unpacked sdist, so a file missing
from the sdist is missing from the wheel too. The package reads no data file today (no
importlib.resources, no path beside a module): the test compares against every file git tracks
under src/zfslab, so a data file added later without its packaging fails here."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO as _REPO

pytestmark = pytest.mark.setup
REPO = Path(_REPO)


def _tracked_package_files() -> set[str]:
    out = subprocess.run(["git", "ls-files", "src/zfslab"], cwd=REPO, capture_output=True, text=True, check=True)
    return {f.removeprefix("src/") for f in out.stdout.split()}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    try:
        import build  # noqa: F401 - the test extra; CI has it (scripts/install-test-deps.sh)
    except ImportError:
        if os.environ.get("ZFSLAB_TEST_REQUIRE_SETUP") == "1":
            pytest.fail("ZFSLAB_TEST_REQUIRE_SETUP=1 but python -m build is not installed (pip install build)")
        pytest.skip("python -m build is not installed (pip install build)")
    out = tmp_path_factory.mktemp("dist")
    # from a clean export, so that the checkout's build/ and egg-info neither help nor get written
    src = tmp_path_factory.mktemp("src")
    for f in subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.split("\0"):
        if f and (REPO / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            (src / f).write_bytes((REPO / f).read_bytes())
    p = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(src)],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return out


def test_the_wheel_holds_every_file_of_the_package(dist):
    (wheel,) = dist.glob("zfslab-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    in_package = {n for n in names if n.startswith("zfslab/")}
    assert in_package == _tracked_package_files()
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "zfslab = zfslab.cli:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_the_sdist_holds_the_package_and_what_builds_it(dist):
    (sdist,) = dist.glob("zfslab-*.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md"} <= names
    assert {f"src/{f}" for f in _tracked_package_files()} <= names


def test_the_wheel_installs_and_plans(dist, tmp_path):
    """Into a fresh venv; its libraries (numpy, scipy...) come from this Python's site-packages, so
    only zfslab itself is installed from the wheel, and it is that copy which runs."""
    (wheel,) = dist.glob("zfslab-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        str(wheel)], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"COLUMNS": "100"}
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import zfslab; print(zfslab.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, check=True).stdout
    assert where.startswith(str(venv)), where
    plan = subprocess.run([str(venv / "bin" / "zfslab"), "plan", "24x4TB"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert plan.returncode == 0, plan.stderr
    assert "★ Recommended:" in plan.stdout
    completion = subprocess.run([str(venv / "bin" / "zfslab"), "completion", "bash"], capture_output=True,
                                text=True, cwd=tmp_path, env=env, timeout=120)
    assert completion.returncode == 0 and "plan" in completion.stdout, completion.stderr
