"""Host adapters: each turns one host's payloads into canonical events and runtime calls."""
