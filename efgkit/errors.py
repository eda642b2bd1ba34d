"""Exception types a user can act on; the CLI prints each as one line and exits with code 2."""


class EfgkitError(Exception):
    """Base class for every error efgkit raises on bad input."""


class GameSpecError(EfgkitError, ValueError):
    """A game spec names an unknown game or an invalid parameter."""


class GameDefinitionError(EfgkitError, ValueError):
    """A game's rules are inconsistent (bad probabilities, non-zero-sum, mismatched infosets)."""


class TreeTooLargeError(EfgkitError):
    """Building the tree would exceed the configured node limit."""


class AbstractionError(EfgkitError, ValueError):
    """An InfosetMap does not fit the tree it is used with."""


class StrategyError(EfgkitError, ValueError):
    """A strategy is malformed or does not match the tree / abstraction it is used with."""


class FileFormatError(EfgkitError):
    """A file is missing, malformed, corrupted, of a future version, or for another game."""


class DiskSpaceError(EfgkitError):
    """A file efgkit writes does not fit on its disk (checked before writing, or the write failed)."""


class ParameterError(EfgkitError, ValueError):
    """A solver or command parameter is outside its valid range."""


class OptionalDependencyError(EfgkitError, ImportError):
    """An optional dependency (e.g. open_spiel) is needed but not installed."""
