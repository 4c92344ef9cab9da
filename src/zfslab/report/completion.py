"""Shell completion scripts for bash, zsh and fish, generated from zfslab's own parser, so that a
new option completes without editing anything: bash and zsh through shtab (which reads argparse),
fish by the small walk below (shtab has no fish). docs/install.md says where they go."""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh", "fish")


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of `parser` for shell; its first line says what made it."""
    head = f"# {parser.prog} completion for {shell}, generated from its parser by `{parser.prog} completion {shell}`\n"
    if shell == "fish":
        return head + fish_script(parser)
    import shtab  # only here: a command line that does not complete never pays for it
    lines = shtab.complete(parser, shell).split("\n")
    compdef = lines[:1] if lines[0].startswith("#compdef") else []  # zsh's autoload reads the first line
    body = lines[len(compdef):]
    while body and (body[0].startswith("#") or not body[0].strip()):  # shtab's own how-to: docs/install.md says it
        body.pop(0)
    return "\n".join([*compdef, head.rstrip("\n"), *body])


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, str, argparse.ArgumentParser]]:
    """(name, one-line help, parser) of each subcommand, in the order --help lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return [(name, helps.get(name, ""), p) for name, p in action.choices.items()]
    return []


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_option(prog: str, condition: str, action: argparse.Action) -> str | None:
    longs = [o[2:] for o in action.option_strings if o.startswith("--")]
    shorts = [o[1:] for o in action.option_strings if not o.startswith("--") and len(o) == 2]
    if not longs and not shorts or action.help == argparse.SUPPRESS:
        return None
    words = [f"complete -c {prog} -n {_fish_quote(condition)}"]
    words += [f"-l {o}" for o in longs] + [f"-s {o}" for o in shorts]
    if action.nargs != 0:  # takes a value: its choices, else any word or a file
        if action.choices:
            words.append("-x -a " + _fish_quote(" ".join(str(c) for c in action.choices)))
        else:
            words.append("-r")
    help_text = " ".join((action.help or "").split()).replace("%%", "%")
    if help_text and "%(" not in help_text:
        words.append("-d " + _fish_quote(help_text[:100]))
    return " ".join(words)


def fish_script(parser: argparse.ArgumentParser) -> str:
    prog = parser.prog
    subs = _subcommands(parser)
    names = " ".join(name for name, _, _ in subs)
    lines = [f"complete -c {prog} -e"]
    top = f"not __fish_seen_subcommand_from {names}"
    lines += [line for a in parser._actions if (line := _fish_option(prog, top, a))]
    for name, help_text, _ in subs:
        lines.append(f"complete -c {prog} -n {_fish_quote(top)} -f -a {name} -d {_fish_quote(help_text)}")
    for name, _, sub in subs:
        condition = f"__fish_seen_subcommand_from {name}"
        lines += [line for a in sub._actions if (line := _fish_option(prog, condition, a))]
    return "\n".join(lines) + "\n"
