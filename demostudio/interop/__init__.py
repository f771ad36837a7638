"""Dataset interop: Minari export and import, and folder operations (merge, split, filters).

Minari is optional: it is imported only when a Minari function runs."""
