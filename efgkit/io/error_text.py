"""Error text folded onto one line: the CLI prints every user error as one line."""


def one_line(exc: BaseException) -> str:
    """An exception's message folded onto one line, for FileFormatError messages."""
    return " ".join(str(exc).split()) or type(exc).__name__
