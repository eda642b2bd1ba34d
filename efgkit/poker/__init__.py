"""The poker engines for the limit-poker family (docs/poker-engine.md, docs/holdem.md).

``materialised`` holds the public tree a game fits in; ``streamed`` the engines for games
that never fit (sampled CFR, the full-game best response, LBR and matches); ``buckets``
their card abstractions. The modules here are what all of them share: the betting tree
with hole cards, the integer codes, the one depth-first walk, terminal values, dealt hands,
suits and sizes counted from the rules."""
