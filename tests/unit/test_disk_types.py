"""One disk, one description: the disk type sets speed and risk alike (issue 16, item 5)."""

import json

import pytest

from zfslab.model.disk_types import DISK_TYPES
from zfslab.system.profile import profile_toml


def plan_json(run_cli, *args):
    r = run_cli("plan", "8x12TB", "--layouts", "raidz2:8", "--json", *args)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("option", ["--disk-type", "--disk-model", "--disk-class"])
def test_each_name_of_the_option_sets_speed_and_risk_together(run_cli, option):
    nvme = plan_json(run_cli, option, "nvme", "--error-model", "datasheet")
    assert nvme["disk_type"] == "nvme" and "AFR 1 %" in nvme["risk_inputs"] and "BER 1e-17" in nvme["risk_inputs"]
    field = plan_json(run_cli, option, "nvme")  # the field model: flash's latent-error rate
    assert "0.17 latent errors/disk-year" in field["risk_inputs"]
    row = nvme["layouts"][0]
    hdd = plan_json(run_cli, "--error-model", "datasheet")["layouts"][0]
    assert row["speed"]["read_mb_s"] > 5 * hdd["speed"]["read_mb_s"]
    assert row["p_damage"]["5"] < hdd["p_damage"]["5"] / 100  # flash's UBER, not the HDD's BER


def test_the_resilver_ceiling_is_the_speed_profiles_own_rate():
    for t in DISK_TYPES.values():
        assert t.streaming_mb_s == pytest.approx(t.speed.seq_write_mb_s * (1 + t.speed.inner_fraction) / 2)


def test_a_measured_profile_brings_its_failure_figures_or_its_mediums(run_cli, tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(profile_toml(DISK_TYPES["hdd"].speed))
    out = plan_json(run_cli, "--disk-type", str(path), "--error-model", "datasheet")
    assert "AFR 1.5 %" in out["risk_inputs"] and "BER 1e-14" in out["risk_inputs"]
    # nearline by age (docs/reliability.md#by-age)
    assert ("0.045 latent errors/disk-year, 0.048 from age 1 y"
            in plan_json(run_cli, "--disk-type", str(path))["risk_inputs"])
    path.write_text(profile_toml(DISK_TYPES["hdd"].speed) + "afr_pct = 4.0\nber_per_bit = 1e-15\n")
    out = plan_json(run_cli, "--disk-type", str(path), "--error-model", "datasheet")
    assert "AFR 4 %" in out["risk_inputs"] and "BER 1e-15" in out["risk_inputs"]
    path.write_text(profile_toml(DISK_TYPES["hdd"].speed) + "afr_pct = nan\n")
    bad = run_cli("plan", "8x12TB", "--disk-type", str(path))
    assert bad.exit_code == 2 and "afr_pct = nan" in bad.stderr and bad.stderr.count("\n") == 1


def test_an_unknown_type_names_the_known_ones(run_cli):
    r = run_cli("plan", "8x12TB", "--disk-type", "tape")
    assert r.exit_code == 2
    assert r.stderr == ("zfslab: error: --disk-type 'tape': use one of hdd, hdd5400, hdd-enterprise, ssd, nvme "
                        "or a PROFILE.toml file\n")
