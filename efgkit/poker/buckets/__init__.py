"""Card abstractions of the streamed engines: the bucket of every hand on every board
(``card_abstraction``, named ones in ``named_abstractions``, perfect-recall bucket
products) and the bucket layout of a betting tree's strategy rows."""
