"""Memory storage and extraction."""
