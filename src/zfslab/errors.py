"""Errors a user can act on: each says what is wrong, shows the value, gives the next step."""


class ZfslabError(Exception):
    """{}"""

    exit_code = 2

    def __str__(self) -> str:
        doc = type(self).__doc__ or "{}"
        return doc.format(*self.args)


class LayoutError(ZfslabError, ValueError):
    """{}"""


class SizeError(ZfslabError, ValueError):
    """bad size {!r}: {}"""


class VersionError(ZfslabError, ValueError):
    """unknown OpenZFS version {!r}; use one of: {}"""


class UsageError(ZfslabError, ValueError):
    """{}"""
