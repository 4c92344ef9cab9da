"""Every error class says what it is: a message template with fields, or a description of the one
finished message it carries (issue 17: no class with the empty '{}' template)."""

import importlib
import pkgutil

import pytest

import zfslab
from zfslab.errors import ParamError, UsageError, ZfslabError


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def test_no_error_class_has_an_empty_template():
    for info in pkgutil.walk_packages(zfslab.__path__, "zfslab."):
        if not info.name.endswith("__main__"):  # it runs the CLI
            importlib.import_module(info.name)
    classes = set(_all_subclasses(ZfslabError))
    assert len(classes) >= 15
    for cls in classes:
        doc = (cls.__doc__ or "").strip()
        assert doc and doc != "{}", cls


def test_a_finished_message_and_a_template_both_read_as_one_line():
    assert str(UsageError("--ashift 20: give 9 to 16")) == "--ashift 20: give 9 to 16"
    from zfslab.errors import SizeError
    assert str(SizeError("4T", "ambiguous")) == "bad size '4T': ambiguous"
    assert str(ParamError("fill", "1.5", "at most 1")) == "fill 1.5: at most 1"


def test_the_model_speaks_no_cli():
    # model/ raises typed errors with its own names (ParamError, LayoutError, DatasetError...);
    # the command layer words them with the flags (commands/_common.py PARAM_FLAGS)
    import os
    import re
    root = os.path.join(os.path.dirname(zfslab.__file__), "model")
    for folder, _, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                text = open(os.path.join(folder, name), encoding="utf-8").read()
                assert "UsageError" not in text, name
                assert not re.search(r'raise \w+\(f?"--[a-z]', text), name


@pytest.mark.parametrize("argv,cli_words", [
    (("plan", "8x12TB,4x8TB", "--layouts", "raidz2:8@12TB"), "pass --allow-unused to leave 4 unused"),
    (("expand", "raidz2:6@4TB", "--add", "1", "--disk-size", "4TB"),
     "leave out the @SIZES and give --disk-size or --vdev-bytes"),
])
def test_model_settings_are_worded_as_flags_on_the_command_line(run_cli, argv, cli_words):
    r = run_cli(*argv)
    assert r.exit_code == 2 and cli_words in r.stderr and "`" not in r.stderr


def test_a_library_caller_reads_the_model_s_own_setting_names():
    from zfslab.errors import LayoutError
    from zfslab.model.expansion import check_expandable
    from zfslab.model.layout_grammar import parse_layout

    with pytest.raises(LayoutError) as e:
        check_expandable(parse_layout("raidz2:6@4TB"), 1, 12)
    assert str(e.value).endswith("leave out the @SIZES and give `vdev_bytes`")
    assert e.value.worded({"vdev_bytes": "--vdev-bytes"}).endswith("give --vdev-bytes")
