"""`zfslab completion bash|zsh|fish` and `zfslab man` are made from the parser: every command and
option is in them, and the shells themselves complete from the scripts (bash always; zsh and fish
where installed, and required under ZFSLAB_TEST_REQUIRE_TOOLS=1, as in CI)."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

from tests.conftest import require_tool
from zfslab.cli import build_parser
from zfslab.report.completion import _subcommands


def _every_option() -> dict[str, list[str]]:
    parser = build_parser()
    return {name: [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
            for name, _, sub in _subcommands(parser)}


def _script(run_cli, shell: str, tmp_path) -> str:
    r = run_cli("completion", shell)
    assert r.exit_code == 0, r.stderr
    (tmp_path / f"zfslab.{shell}").write_text(r.stdout)
    return r.stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_script_names_every_command_and_option(run_cli, shell, tmp_path):
    text = _script(run_cli, shell, tmp_path)
    assert f"generated from its parser by `zfslab completion {shell}`" in text
    for command, options in _every_option().items():
        assert command in text
        for option in options:
            assert option.lstrip("-") in text, f"{command} {option} missing from the {shell} script"


def test_an_unknown_shell_is_one_line_and_exit_2(run_cli):
    r = run_cli("completion", "tcsh")
    assert r.exit_code == 2
    assert "tcsh" in r.stderr and "bash" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def _bash_complete(script: str, words: list[str]) -> list[str]:
    """What bash offers after `words` (the last one being typed), through the script's own function."""
    line = " ".join(words)
    program = (f'source {script}\nCOMP_WORDS=({line})\nCOMP_CWORD={len(words) - 1}\nCOMP_LINE="{line}"\n'
               f'COMP_POINT=${{#COMP_LINE}}\n_shtab_zfslab zfslab "{words[-1]}" "{words[-2]}"\n'
               'printf "%s\\n" "${COMPREPLY[@]}"\n')
    out = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_bash_completes_commands_options_and_choices(run_cli, tmp_path):
    _script(run_cli, "bash", tmp_path)
    script = str(tmp_path / "zfslab.bash")
    assert "plan" in _bash_complete(script, ["zfslab", "pl"])
    assert set(_bash_complete(script, ["zfslab", "plan", "--da"])) == {"--data", "--data-from"}
    assert set(_bash_complete(script, ["zfslab", "plan", "--data", ""])) == {
        "scratch", "media", "backup", "home", "business", "archive"}
    assert _bash_complete(script, ["zfslab", "completion", "f"]) == ["fish"]


def test_fish_completes_commands_options_and_choices(run_cli, tmp_path):
    require_tool("fish", "apt-get install fish")
    _script(run_cli, "fish", tmp_path)

    def offered(line: str) -> set[str]:
        out = subprocess.run(["fish", "--no-config", "-c", f"source {tmp_path / 'zfslab.fish'}; complete -C '{line}'"],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        return {row.split("\t")[0] for row in out.stdout.splitlines()}

    assert "plan" in offered("zfslab pl")
    assert offered("zfslab plan --da") == {"--data", "--data-from"}
    assert offered("zfslab plan --data ") == {"scratch", "media", "backup", "home", "business", "archive"}


def test_zsh_reads_its_script(run_cli, tmp_path):
    require_tool("zsh", "apt-get install zsh")
    text = _script(run_cli, "zsh", tmp_path)
    assert text.startswith("#compdef zfslab\n")  # compinit autoloads it by this first line
    out = subprocess.run(["zsh", "-n", str(tmp_path / "zfslab.zsh")], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr


def test_the_man_page_renders_every_command_and_option_without_warnings(run_cli, tmp_path):
    require_tool("man", "apt-get install man-db")
    r = run_cli("man")
    assert r.exit_code == 0
    page = tmp_path / "zfslab.1"
    page.write_text(r.stdout)
    out = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True, text=True, timeout=60,
                         env=os.environ | {"MANWIDTH": "80", "LC_ALL": "C.UTF-8", "MAN_KEEP_FORMATTING": "0"})
    assert out.returncode == 0 and out.stderr == "", out.stderr
    text = re.sub(".\b", "", out.stdout)  # bold and underline as a terminal overstrikes them
    assert "zfslab - Compare ZFS pool layouts" in text
    for command, options in _every_option().items():
        assert f"ZFSLAB {command.upper()}" in text
        for option in options:
            assert option in text, f"{command} {option} missing from the man page"
    assert max(len(line) for line in text.splitlines()) <= 80


def test_completion_and_man_are_listed_in_help():
    text = build_parser().format_help()
    assert "completion  print the bash, zsh or fish completion script" in " ".join(text.split("\n"))
    assert "man         print the manual page" in text
