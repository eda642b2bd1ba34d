"""What a game family declares about itself: its parameters and a factory for its rules.

Game modules build their ``GameEntry`` here; the spec registry (``efgkit.specs``) collects
them, so a game never imports the registry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from efgkit.games.protocol import Game


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: type
    default: object
    help: str
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class GameEntry:
    """A registered game family: its parameters and a factory for the rules object.

    ``factory(**params)`` returns a Game; if that object has a ``compile(node_limit,
    progress)`` method it is used instead of the generic builder.
    """

    name: str
    summary: str
    parameters: tuple[Parameter, ...]
    factory: Callable[..., Game]

    def canonical_spec(self, params: dict[str, object]) -> str:
        shown = [
            f"{p.name}={_format_value(params[p.name])}"
            for p in self.parameters
            if params[p.name] != p.default
        ]
        return f"{self.name}({','.join(shown)})" if shown else self.name


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
