"""Abstraction builders: card buckets, the coarsest imperfect-recall map, FPIRA, CFR+IRA."""
