"""Card abstraction: exact hand-strength features, EMD clustering, buckets as InfosetMaps.

See docs/card-abstraction.md.
"""
