"""Example games written against the Game protocol (see docs/new-game.md)."""
