"""What the tests share: references copied or written independently of the library, and helpers
that run the workflow in a temporary copy of the repository."""
