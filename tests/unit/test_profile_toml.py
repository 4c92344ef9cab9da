"""A disk profile's TOML is written and read in one module (system/profile.py): what
profile-disk writes, plan --disk-model reads back as the same profile."""

import dataclasses
import math

import pytest

from zfslab.model.performance import PRESETS, HostLimits
from zfslab.system.profile import ProfileError, profile_from_toml, profile_toml


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_profile_reads_back_as_itself(name):
    p = dataclasses.replace(PRESETS[name], host=HostLimits(write_mb_s=1234.5, read_mb_s=2345.0,
                                                           parity_mb_s=(3000.0, 1500.5, 900.0), cpus=8))
    back = profile_from_toml(profile_toml(p), "ignored")
    assert back == p


def test_an_unknown_host_limit_is_left_out_and_reads_back_unknown():
    p = PRESETS["hdd7200"]
    assert not math.isfinite(p.host.write_mb_s)
    text = profile_toml(p)
    assert "[host]" not in text and profile_from_toml(text, "x").host == p.host


@pytest.mark.parametrize("text, words", [
    ("seq_read_mb_s = [", "not valid TOML"),
    ("seq_read_mb_s = 100", "missing seq_write_mb_s"),
    (profile_toml(PRESETS["ssd"]) + "\n[host]\nspeed = 1\n", "[host] has unknown key 'speed'"),
    (profile_toml(PRESETS["ssd"]).replace("[host]", "") + "host = 3\n", "[host] must be a table"),
])
def test_what_is_wrong_in_a_profile_is_said(text, words):
    with pytest.raises(ProfileError, match=words.replace("[", "\\[")):
        profile_from_toml(text, "x")
