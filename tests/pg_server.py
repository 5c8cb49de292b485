"""A throwaway PostgreSQL server for the test session and the benchmarks.

:func:`find_bin_dir` looks for ``initdb`` and ``pg_ctl`` in ``CONVMEM_PG_BIN``, on
``PATH``, in ``/usr/lib/postgresql/*/bin`` (Debian/Ubuntu, newest first),
``/usr/pgsql-*/bin`` (RHEL), ``/usr/local/pgsql/bin`` and ``/usr/local/bin``.
:class:`PgServer` runs ``initdb`` into a fresh temporary folder and starts the
server listening only on a Unix socket in that folder (no TCP port, so nothing
can collide with another server and nothing outside the machine can connect).

``initdb`` refuses to run as root, so under root the server runs as an
unprivileged user: ``CONVMEM_PG_USER`` if set, else ``postgres`` when the
distribution package created it, else ``nobody``. The folder is handed to that
user; the client keeps running as root and reaches the socket as root can.

``CONVMEM_TEST_PG_URL`` points the tests at an existing server instead (a role
allowed to ``CREATE DATABASE``); no server is started then.
"""

from __future__ import annotations

import atexit
import glob
import itertools
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from convmem.memory.store import MemoryStore, utc_now

ENV_BIN = "CONVMEM_PG_BIN"
ENV_USER = "CONVMEM_PG_USER"
ENV_URL = "CONVMEM_TEST_PG_URL"
SUPERUSER = "convmem"
_TOOLS = ("initdb", "pg_ctl")


def _has_tools(folder: Path) -> bool:
    return all((folder / tool).is_file() and os.access(folder / tool, os.X_OK) for tool in _TOOLS)


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", path)) or (0,)


def find_bin_dir() -> Path | None:
    """The folder holding initdb and pg_ctl, or None when PostgreSQL is not installed."""
    candidates: list[str] = []
    if os.environ.get(ENV_BIN):
        candidates.append(os.environ[ENV_BIN])
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(found).resolve().parent))
    for pattern in ("/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"):
        candidates += sorted(glob.glob(pattern), key=_version_key, reverse=True)
    candidates += ["/usr/local/pgsql/bin", "/usr/local/bin"]
    for candidate in candidates:
        folder = Path(candidate)
        if _has_tools(folder):
            # a symlink farm like /usr/local/bin: use the real folder, where postgres lives
            return (folder / "initdb").resolve().parent
    return None


def _server_user() -> pwd.struct_passwd | None:
    """Who runs the server: None for the current user, an unprivileged user under root."""
    if os.geteuid() != 0:
        return None
    for name in (os.environ.get(ENV_USER), "postgres", "nobody"):
        if not name:
            continue
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and no unprivileged user (postgres, nobody) exists")


class Server:
    """A reachable server: URLs and databases (an administrator role is assumed)."""

    version = ""

    def __init__(self) -> None:
        self._names = itertools.count(1)

    def url(self, dbname: str = "postgres") -> str:
        raise NotImplementedError

    def stop(self) -> None:
        """Nothing to stop for a server this process did not start."""

    def admin(self, sql: str) -> None:
        """Run one statement as the administrator, outside any transaction."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self) -> str:
        name = f"convmem_test_{os.getpid()}_{next(self._names)}"
        self.admin(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


class ExternalServer(Server):
    """An existing server named by ``CONVMEM_TEST_PG_URL``."""

    version = "external server"

    def __init__(self, url: str) -> None:
        super().__init__()
        self._url = url

    def url(self, dbname: str = "postgres") -> str:
        return urlunsplit(urlsplit(self._url)._replace(path=f"/{dbname}"))


class PgServer(Server):
    """One private PostgreSQL cluster in a temporary folder: start, stop."""

    def __init__(self, bin_dir: Path, *, durable: bool = False) -> None:
        super().__init__()
        self.bin_dir = bin_dir
        self.durable = durable
        self.base = Path(tempfile.mkdtemp(prefix="convmem-pg-"))
        self.data = self.base / "data"
        self.sock = self.base / "sock"
        self.port = 5432  # the socket lives in a private folder: the port cannot collide
        self._user = _server_user()

    # --- lifecycle ------------------------------------------------------------------------

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        extra: dict[str, Any] = {}
        if self._user is not None:
            extra = {"user": self._user.pw_uid, "group": self._user.pw_gid, "extra_groups": []}
        return subprocess.run(
            [str(self.bin_dir / args[0]), *args[1:]],
            cwd=self.base,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "LC_ALL": "C.UTF-8", "TZ": "UTC"},
            **extra,
        )

    def start(self) -> PgServer:
        """initdb, then start the server and wait until it accepts connections."""
        self.sock.mkdir()
        if self._user is not None:
            for path in (self.base, self.sock):
                os.chown(path, self._user.pw_uid, self._user.pw_gid)
        try:
            self._run(
                "initdb",
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--no-sync",
            )
        except subprocess.CalledProcessError as exc:
            raise RuntimeError(f"initdb failed: {exc.stderr.strip()}") from exc
        settings = {
            "listen_addresses": "''",
            "unix_socket_directories": f"'{self.sock}'",
            "unix_socket_permissions": "0700",
            "port": str(self.port),
            "max_connections": "300",
            "shared_buffers": "128MB",
            "synchronous_commit": "off",
            "timezone": "'UTC'",
        }
        if not self.durable:  # tests: nothing here has to survive a power cut
            settings |= {"fsync": "off", "full_page_writes": "off"}
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as fh:
            fh.writelines(f"{key} = {value}\n" for key, value in settings.items())
        try:
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "log"), "-w", "start")
        except subprocess.CalledProcessError as exc:
            log = (self.base / "log").read_text("utf-8", "replace")[-2000:]
            raise RuntimeError(f"pg_ctl start failed: {exc.stderr.strip()}\n{log}") from exc
        self.version = self._run("pg_ctl", "--version").stdout.strip()
        atexit.register(self.stop)  # also when a run is interrupted outside its fixtures
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            except subprocess.CalledProcessError:
                time.sleep(0.5)
        shutil.rmtree(self.base, ignore_errors=True)

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@/{dbname}?host={quote(str(self.sock))}&port={self.port}"


def start_server(*, durable: bool = False) -> Server | None:
    """A running server (external or throwaway), or None when PostgreSQL is not installed."""
    if os.environ.get(ENV_URL):
        return ExternalServer(os.environ[ENV_URL])
    bin_dir = find_bin_dir()
    if bin_dir is None:
        return None
    return PgServer(bin_dir, durable=durable).start()


class SchemaPool:
    """Migrated schemas in one database, lent to one test at a time and emptied after.

    A database copied from a template costs about 0.3 s, migrating a new schema about
    0.1 s, and emptying a used one about 15 ms (DELETE beats TRUNCATE on tiny tables):
    a test gets a schema an earlier test returned, with ids restarting at 1 as in a
    new SQLite file. A schema whose shape a test changed (say, a trigger it added and
    did not drop) is thrown away.
    """

    def __init__(self, server: Server) -> None:
        import psycopg

        self.server = server
        self.dbname = server.create_database()
        self._admin = psycopg.connect(server.url(self.dbname), autocommit=True)
        self._admin.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        self._admin.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
        self._admin.execute("SET lock_timeout = '10s'")
        self._names = itertools.count(1)
        self._free: list[str] = []
        self._shape: tuple[int, int] | None = None
        self._meta: list[tuple[str, str]] = []

    def url(self, schema: str) -> str:
        parts = urlsplit(self.server.url(self.dbname))
        query = [*parse_qsl(parts.query), ("options", f"-c search_path={schema},public")]
        return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))

    def _shape_of(self, schema: str) -> tuple[int, int]:
        row = self._admin.execute(
            "SELECT (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s), (SELECT count(*) FROM pg_trigger t JOIN pg_class c"
            " ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s)",
            (schema, schema),
        ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def checkout(self, migrated: bool = True) -> str:
        """A schema for one test: migrated and empty, or (``migrated=False``) bare."""
        if migrated and self._free:
            return self._free.pop()
        name = f"s{next(self._names)}"
        self._admin.execute(f"CREATE SCHEMA {name}")
        if migrated:
            from convmem.memory.pg_store import PgMemoryStore

            PgMemoryStore.open(self.url(name)).close()
            if self._shape is None:
                self._shape = self._shape_of(name)
                rows = self._admin.execute(f"SELECT key, value FROM {name}.meta")
                self._meta = [(str(k), str(v)) for k, v in rows.fetchall()]
        return name

    def release(self, schema: str) -> None:
        """Empty the schema for the next test, or drop it if it is not as migrated."""
        import psycopg

        try:
            if self._shape_of(schema) == self._shape:
                tables = self._admin.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = %s"
                    " ORDER BY tablename = 'fts_stats'",  # last: deletes elsewhere update it
                    (schema,),
                ).fetchall()
                sequences = self._admin.execute(
                    "SELECT sequencename FROM pg_sequences WHERE schemaname = %s", (schema,)
                ).fetchall()
                with self._admin.transaction():
                    for (table,) in tables:
                        self._admin.execute(f"DELETE FROM {schema}.{table}")
                    for (sequence,) in sequences:
                        self._admin.execute(f"ALTER SEQUENCE {schema}.{sequence} RESTART")
                    self._admin.cursor().executemany(
                        f"INSERT INTO {schema}.meta (key, value) VALUES (%s, %s)".encode(),
                        self._meta,
                    )
                self._free.append(schema)
                return
            self._admin.execute(f"DROP SCHEMA {schema} CASCADE")
        except psycopg.Error:
            pass  # still in use by a connection a test leaked: leave it alone

    def close(self) -> None:
        self._admin.close()
        self.server.drop_database(self.dbname)


class SqliteBackend:
    """Stores for one test on SQLite; all closed when the test ends."""

    name = "sqlite"

    def __init__(self) -> None:
        self._stores: list[MemoryStore] = []

    def url(self) -> str | None:
        """The ``CONVMEM_STORE`` for the command line: none, the data dir's file."""
        return None

    def store(self, path: str = ":memory:", clock: Callable[[], str] = utc_now) -> MemoryStore:
        store = MemoryStore.open(path, clock)
        self._stores.append(store)
        return store

    def close(self) -> None:
        for store in self._stores:
            store.close()


class PgBackend(SqliteBackend):
    """Stores for one test on PostgreSQL: each a fresh schema from the pool."""

    name = "postgresql"

    def __init__(self, pool: SchemaPool) -> None:
        super().__init__()
        self.pool = pool
        self._schemas: list[str] = []

    def url(self) -> str:
        schema = self.pool.checkout()
        self._schemas.append(schema)
        return self.pool.url(schema)

    def store(self, path: str = ":memory:", clock: Callable[[], str] = utc_now) -> MemoryStore:
        from convmem.memory.pg_store import PgMemoryStore

        store = PgMemoryStore.open(self.url(), clock)
        self._stores.append(store)
        return store

    def close(self) -> None:
        super().close()
        for schema in self._schemas:
            self.pool.release(schema)
