"""Errors a user can act on: each says what is wrong, shows the value, gives the next step."""


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


class ZfslabError(Exception):
    """An error the user can act on. A class whose docstring has {} fields is its own message
    template (its arguments fill it); any other is raised with one finished message."""

    exit_code = 2

    def __str__(self) -> str:
        doc = type(self).__doc__ or ""
        if "{" in doc:
            return doc.format(*self.args)
        return str(self.args[0]) if self.args else doc


class LayoutError(ZfslabError, ValueError):
    """A layout that cannot be built: the message names the token and what is wrong with it."""


class SizeError(ZfslabError, ValueError):
    """bad size {!r}: {}"""


class VersionError(ZfslabError, ValueError):
    """unknown OpenZFS version {!r}; use one of: {}"""


class UsageError(ZfslabError, ValueError):
    """A command line that cannot be carried out: the message names the option, the value and the fix."""


class DatasetError(ZfslabError, ValueError):
    """A measurements table (validate's CSV) that cannot be used: the message names the row or column."""


class ParamError(ZfslabError, ValueError):
    """A model input outside its range. `param` is the model's own name for it (afr, fill, years);
    the command layer words it with the flag the user typed (commands/_common.py PARAM_FLAGS)."""

    def __init__(self, param: str, value: str, rule: str) -> None:
        super().__init__(param, value, rule)
        self.param, self.value, self.rule = param, value, rule

    def __str__(self) -> str:
        return self.worded({})

    def worded(self, flags: dict[str, str]) -> str:
        return f"{flags.get(self.param, self.param)} {self.value}: {self.rule}"
