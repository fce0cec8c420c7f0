"""`textpile` subcommands of this area (placeholder until implemented)."""


def register(subparsers) -> None:
    """Add this module's subcommands to ``subparsers``."""
