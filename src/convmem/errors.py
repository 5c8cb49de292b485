"""The few exception types convmem raises.

Hierarchy::

    ConvmemError                 anything convmem reports to a user
    ├── ConfigError              a settings file or value is wrong (names the key)
    ├── EventFormatError         an input event line is malformed (names the field)
    ├── StoreError               the database cannot be used as asked
    │   ├── SchemaTooNewError    the file was written by a newer convmem
    │   └── StoreBusyError       another process held the lock for too long
    └── NotFoundError            a session, item or rule id does not exist

Every message is one sentence that says what happened and what to do. Diagnostics
return lists of problems instead of raising.
"""

from __future__ import annotations


class ConvmemError(Exception):
    """Base class: an error meant to be shown to the user as it is."""


class ConfigError(ConvmemError):
    """A setting is unknown, has the wrong type, or the file cannot be read."""


class EventFormatError(ConvmemError):
    """An event does not follow the canonical format."""


class StoreError(ConvmemError):
    """The database cannot be opened, read or written."""


class SchemaTooNewError(StoreError):
    """The database was migrated by a newer version of convmem."""


class StoreBusyError(StoreError):
    """The database stayed locked by another process past the retry bound."""


class NotFoundError(ConvmemError):
    """A session, memory item or rule id does not exist."""
