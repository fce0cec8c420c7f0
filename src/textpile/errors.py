"""Exceptions raised by textpile. Every error names the input it is about."""


class TextpileError(Exception):
    """Base class of every error textpile raises on purpose."""


class ConfigError(TextpileError):
    """A configuration file or option is invalid.

    The message names the file, the key and what was expected.
    """


class DatabaseError(TextpileError):
    """A database cannot be used: wrong kind, newer schema, foreign file, corrupt."""
