"""How II-Goofspiel's compiled tree packs an infoset or public state into one int64, as the
tree kernel (``goofspiel_preorder``) writes the codes and the rules (``goofspiel``) read
them back into keys: the player in bit 0, then 4 bits per own bid, then 2 bits per round
outcome (as player 0 sees it); a public state's round in 4 bits, then the outcomes."""

MAX_CARDS = 8
"""Infoset codes pack 4 bits per bid and 2 bits per outcome into an int64 (8 rounds fit)."""
BID_BITS = 4
OUTCOME_BITS = 2
OUTCOMES_SHIFT = 1 + BID_BITS * MAX_CARDS
ROUND_BITS = 4
