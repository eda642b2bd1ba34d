"""Whole jobs, end to end: the hold'em main build."""
