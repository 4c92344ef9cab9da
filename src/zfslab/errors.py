"""Errors a user can act on: each says what is wrong, shows the value, gives the next step."""

import re


def clip(value: object, limit: int = 40) -> str:
    """The value's repr, cut to about `limit` characters: a message stays one short line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(text: str, limit: int = 40) -> str:
    """Text for a message, unquoted: control characters escaped, cut to about `limit` characters."""
    text = repr(str(text))[1:-1]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(message: str, limit: int = 2000) -> str:
    """Text as one line: a value with a newline or an escape sequence is shown, not obeyed."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    return text if len(text) <= limit else text[: limit - 3] + "..."


# Every exit code zfslab returns, what it means and what to do: one table for cli.py, each
# command's --help epilog and docs/cli.md (tests/unit/test_exit_codes.py holds every error class to it)
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (EXIT_OK, "done"),
    (EXIT_INTERNAL, "internal error, a bug in zfslab: --debug shows the traceback to report"),
    (EXIT_USAGE, "bad input: an option, a file or a results database zfslab cannot use (the message names it "
                 "and the fix)"),
    (3, "a program zfslab needs is not installed (zpool, fio, bonnie++): install it"),
    (4, "a program zfslab ran failed or timed out (zpool, zfs, lsblk...): its error is shown"),
    (5, "no such pool"),
    (6, "the benchmark program (fio, bonnie++) failed"),
    (10, "refused for safety: a disk holds data or is in use, or a pool is busy; nothing was written"),
    (EXIT_INTERRUPTED, "interrupted (Ctrl-C, SIGTERM): what zfslab made is cleaned up, finished measurements "
                       "are saved"),
)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM in a command that says what it kept, in place of cli.py's default line
    (which speaks of saved measurements, true of a local bench but not of every command)."""

    def __init__(self, kept: str) -> None:
        super().__init__(kept)
        self.kept = kept


def exit_codes_text() -> str:
    """The table for --help epilogs: a row a line (cli.py's formatter wraps each line alone)."""
    return "exit codes:\n" + "\n".join(f"  {code:>3}  {meaning}" for code, meaning in EXIT_CODES)


class ZfslabError(Exception):
    """An error the user can act on. A class whose docstring has {} fields is its own message
    template (its arguments fill it); any other is raised with one finished message."""

    exit_code = 2

    def __str__(self) -> str:
        doc = type(self).__doc__ or ""
        if "{" in doc:
            return doc.format(*self.args)
        return str(self.args[0]) if self.args else doc


    def worded(self, flags: dict[str, str]) -> str:
        """The message with each setting the model names in backquotes (`allow_unused`) worded as
        the command line sets it (flags: {"allow_unused": "--allow-unused"}); others stay as written."""
        return _SETTING.sub(lambda m: flags.get(m.group(1), m.group(0)), str(self))


_SETTING = re.compile(r"`([a-z_]+(?:=[a-z]+)?)`")


class LayoutError(ZfslabError, ValueError):
    """A layout that cannot be built: the message names the token and what is wrong with it."""


class SizeError(ZfslabError, ValueError):
    """bad size {!r}: {}"""


class VersionError(ZfslabError, ValueError):
    """unknown OpenZFS version {!r}; use one of: {}"""


class UsageError(ZfslabError, ValueError):
    """A command line that cannot be carried out: the message names the option, the value and the fix."""


class FleetError(ZfslabError, ValueError):
    """Hosts, work or figures of a fleet that cannot be used: the message names the host, job or value."""


class DatasetError(ZfslabError, ValueError):
    """A measurements table (validate's CSV) that cannot be used: the message names the row or column."""


class InputError(ZfslabError, ValueError):
    """An input zfslab cannot read (a tree, a file, a program's output): the message names it, what
    is wrong with it and the fix, in the library's words (no command-line flag)."""


class ParamError(ZfslabError, ValueError):
    """A model or library input outside its range. `param` is the library's own name for it (afr,
    fill, years, sandbox_size, db); the command layer words it with the flag the user typed
    (commands/_common.py PARAM_FLAGS). `value` None: the setting as a whole is at fault."""

    def __init__(self, param: str, value: str | None, rule: str) -> None:
        super().__init__(param, value, rule)
        self.param, self.value, self.rule = param, value, rule

    def __str__(self) -> str:
        return self.worded({})

    def worded(self, flags: dict[str, str]) -> str:
        name = flags.get(self.param, self.param)
        rule = _SETTING.sub(lambda m: flags.get(m.group(1), m.group(0)), self.rule)  # settings it names, too
        return f"{name}: {rule}" if self.value is None else f"{name} {self.value}: {rule}"
