"""Texas hold'em scale card abstraction: evaluator, hand isomorphism, features, buckets."""
