"""The streamed engines for games that never fit in memory: sampled CFR on a bucket layout,
the full-game best response split by flop, the abstract game's best response, and local
best response and duplicate matches played board by board (docs/holdem.md)."""
