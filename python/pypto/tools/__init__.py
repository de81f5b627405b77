"""Command-line tools of pypto."""
