"""Reading event files: canonical JSON Lines (and host logs, via their adapters).

A file is read line by line in batches; each good line becomes an event handed to
a *sink* (capture, or the runtime's capture-then-extract); each bad line becomes a
:class:`LineProblem` with its file and line number while the rest goes in.
"""

from __future__ import annotations

import codecs
import itertools
import json
import sys
import zlib
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from convmem.adapters.events import parse_event
from convmem.capture import CaptureResult, Event
from convmem.errors import ConvmemError, EventFormatError

#: Lines longer than this are reported and skipped without being held in memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
BATCH = 2000
FORMATS = ("auto", "events", "claude-code", "dsh", "openai")
#: The file name that means standard input.
STDIN = "-"

Sink = Callable[[list[Event]], CaptureResult]


@dataclass(frozen=True)
class LineProblem:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        # line 0: the whole file (it could not be read, or held no event of its format)
        return (
            f"{self.path}:{self.line}: {self.message}"
            if self.line
            else f"{self.path}: {self.message}"
        )


@dataclass
class IngestReport:
    files: int = 0
    lines: int = 0
    events: int = 0
    inserted: int = 0
    duplicates: int = 0
    ignored: int = 0
    #: Texts cut in the event log, and those the archive could not hold whole either.
    truncated: int = 0
    lost: int = 0
    problems: list[LineProblem] = field(default_factory=list)
    sessions: set[str] = field(default_factory=set)
    #: Lines that repeated a (session, seq) of this run with other text: ignored.
    conflicts: list[LineProblem] = field(default_factory=list)
    #: A checksum of each (session, seq)'s text read so far in this run.
    _texts: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)

    def repeats_with_other_text(self, event: Event) -> bool:
        """Did this run read the event's (session, seq) before, with other text?
        The store keeps the first; a changed repeat would be lost without a word."""
        key, text = (event.session_id, event.seq), zlib.crc32(event.text.encode("utf-8", "replace"))
        first = self._texts.setdefault(key, text)
        return first != text

    def summary(self) -> str:
        repeated = ""
        if self.conflicts:
            n = len(self.conflicts)
            repeated = (
                f", {n} line{'s' if n != 1 else ''} gave a (session, seq) already read or stored"
                f" with different text and {'were' if n != 1 else 'was'} ignored (the first"
                " one stays)"
            )
        return (
            f"{_n(self.inserted, 'new event')}, {self.duplicates} already present, "
            f"{_n(len(self.problems), 'bad line')} skipped,"
            f" {'1 line not an event' if self.ignored == 1 else f'{self.ignored} lines not events'}"
            f"{repeated} "
            f"({self.files} file{'s' if self.files != 1 else ''}, "
            f"{len(self.sessions)} session{'s' if len(self.sessions) != 1 else ''})"
        )

    def cut(self) -> str | None:
        """One sentence on texts too long to store whole, if there were any."""
        if not self.truncated:
            return None
        n, lost = self.truncated, self.lost
        text = (
            f"{n} text{'s' if n != 1 else ''} read {'are' if n != 1 else 'is'} longer than"
            " capture.max_text_chars and cut in the event log"
        )
        if not lost:
            return text + f"; the archive holds {'each one' if n != 1 else 'it'} whole"
        which = "it is" if n == 1 else f"{lost} of them {'are' if lost != 1 else 'is'}"
        return (
            text + f"; {which} not whole in the archive either (archive.enabled,"
            " archive.max_chars_per_event), so the end is not stored: raise those before"
            " such text is first ingested to keep more of it"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "lines": self.lines,
            "events": self.events,
            "inserted": self.inserted,
            "duplicates": self.duplicates,
            "ignored": self.ignored,
            "truncated": self.truncated,
            "lost": self.lost,
            "sessions": sorted(self.sessions),
            "problems": [
                {"path": p.path, "line": p.line, "message": p.message} for p in self.problems
            ],
            "repeated": [
                {"path": p.path, "line": p.line, "message": p.message} for p in self.conflicts
            ],
        }


def open_binary(path: Path) -> IO[bytes]:
    """Open a file for reading, transparently decompressing ``.zst``/``.zstd``."""
    raw = path.open("rb")
    if path.suffix in (".zst", ".zstd"):
        import io

        import zstandard

        # DSH writes one frame per append: read across frames, buffered for readline()
        reader = zstandard.ZstdDecompressor().stream_reader(
            raw, read_across_frames=True, closefd=True
        )
        return io.BufferedReader(reader)
    return raw


def read_lines(fh: IO[bytes]) -> Iterator[tuple[int, bytes | None, int]]:
    """Yield ``(line_no, bytes or None if too long, bytes consumed)``.

    A byte order mark that opens the file (editors on Windows write one) is no part of
    its first line."""
    line_no = 0
    try:
        at_start = fh.tell() == 0
    except (OSError, ValueError):
        at_start = True  # a pipe is read from its start
    while True:
        chunk = fh.readline(MAX_LINE_BYTES + 1)
        if not chunk:
            return
        line_no += 1
        consumed = len(chunk)
        if line_no == 1 and at_start and chunk.startswith(codecs.BOM_UTF8):
            chunk = chunk[len(codecs.BOM_UTF8) :]
        if len(chunk) > MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):
                chunk = fh.readline(1024 * 1024)
                consumed += len(chunk)
            yield line_no, None, consumed
            continue
        yield line_no, chunk, consumed


def decode_json_line(raw: bytes) -> Any:
    """Decode one line; raise :class:`EventFormatError` with a plain reason."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventFormatError(f"not valid UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise EventFormatError("JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None


def detect_format(path: Path) -> str:
    """Guess a file's format from its name and first object."""
    if path.name.startswith("session.v4.jsonl"):
        return "dsh"
    try:
        with open_binary(path) as fh:
            return peek_format(read_lines(fh))[0]
    except OSError:
        return "events"


Lines = Iterator[tuple[int, bytes | None, int]]


def peek_format(lines: Lines) -> tuple[str, Lines]:
    """Guess the format from the first line that holds something, and give back the
    lines with the ones read to guess still in front (a pipe cannot be read twice)."""
    head = []
    for item in lines:
        head.append(item)
        if item[1] is not None and item[1].strip():
            return _format_of(item[1]), itertools.chain(head, lines)
    return "events", iter(head)


def _transcript_session(lines: Lines, reach: int = 50) -> tuple[str | None, Lines]:
    """The ``sessionId`` the first lines of a Claude Code transcript carry (None when
    none of the first ``reach`` does), and the lines with those read still in front."""
    head = []
    for item in lines:
        head.append(item)
        try:
            obj = decode_json_line(item[1]) if item[1] is not None and item[1].strip() else None
        except EventFormatError:
            obj = None
        sid = obj.get("sessionId") if isinstance(obj, dict) else None
        if isinstance(sid, str) and sid.strip():
            return sid, itertools.chain(head, lines)
        if len(head) >= reach:
            break
    return None, itertools.chain(head, lines)


def _format_of(raw: bytes) -> str:
    try:
        obj = decode_json_line(raw)
    except EventFormatError:
        return "events"
    if isinstance(obj, dict):
        if obj.get("type") == "session" and obj.get("version") == 4:
            return "dsh"
        if "seq" in obj and "type" in obj:
            return "events"
        if "sessionId" in obj or "parentUuid" in obj:
            return "claude-code"
        if "role" in obj and ("content" in obj or "tool_calls" in obj):
            return "openai"
        if any(_messages(obj.get(key)) for key in ("messages", "input")):
            return "openai"  # a request body: {"messages": [...]}
    if _messages(obj):
        return "openai"  # a whole conversation on one line: [{"role": ...}, ...]
    return "events"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _messages(value: Any) -> bool:
    """A list of chat messages (its first entry has a role)."""
    return (
        isinstance(value, list)
        and bool(value)
        and isinstance(value[0], dict)
        and "role" in value[0]
    )


def _line_parser(fmt: str, path: Path, session: str | None) -> Callable[[int, Any], list[Event]]:
    if fmt == "events":
        return lambda _line_no, obj: [parse_event(obj, session)]
    if fmt == "claude-code":
        from convmem.adapters.claude_code import TranscriptParser

        return TranscriptParser(session or path.stem).parse_line
    if fmt == "dsh":
        from convmem.adapters.dsh import SessionLogParser

        return SessionLogParser(session).parse_line
    if fmt == "openai":
        from convmem.adapters.openai import MessageListParser

        return MessageListParser(session or path.stem).parse_line
    raise ConvmemError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")


def ingest_file(
    path: str | Path,
    sink: Sink,
    *,
    fmt: str = "auto",
    session: str | None = None,
    progress: Callable[[int], None] | None = None,
    report: IngestReport | None = None,
) -> IngestReport:
    """Read one file (``-``: standard input) into ``sink``; bad lines are reported,
    never fatal."""
    path = Path(path)
    report = report or IngestReport()
    stdin = str(path) == STDIN
    if not stdin:
        _need_file(path)
    name = "<stdin>" if stdin else str(path)
    report.files += 1
    batch: list[Event] = []
    line_of: dict[tuple[str, int], int] = {}  # the line each event of the batch came from

    def flush() -> None:
        if batch:
            result = sink(batch)
            report.inserted += result.inserted
            report.duplicates += result.duplicates
            report.truncated += result.truncated
            report.lost += result.lost
            # where the file numbers its events itself; a host's transcript renders what
            # its hooks already captured in its own way (a tool call's input, a compaction)
            for key in result.changed if fmt in ("events", "openai") else ():
                report.conflicts.append(LineProblem(name, line_of.get(key, 0), _STORED_OTHER))
            batch.clear()
            line_of.clear()

    try:
        with nullcontext(sys.stdin.buffer) if stdin else open_binary(path) as fh:
            lines = read_lines(fh)
            if fmt == "auto":
                fmt, lines = peek_format(lines) if stdin else (detect_format(path), lines)
            if stdin and fmt == "claude-code" and session is None:
                # a piped transcript has no file name to take the session's id from
                session, lines = _transcript_session(lines)
            parse = _line_parser(fmt, Path("stdin") if stdin else path, session)
            for line_no, raw, consumed in lines:
                report.lines += 1
                if progress is not None:
                    progress(consumed)
                if raw is None:
                    report.problems.append(
                        LineProblem(name, line_no, f"line longer than {MAX_LINE_BYTES} bytes")
                    )
                    continue
                if not raw.strip():
                    continue
                try:
                    events = parse(line_no, decode_json_line(raw))
                    # Checked here, not in the sink: one bad event must cost its line,
                    # not the batch of good lines it would be written with.
                    for event in events:
                        event.validate()
                except EventFormatError as exc:
                    report.problems.append(LineProblem(name, line_no, _hint(str(exc), session)))
                    continue
                except RecursionError:
                    report.problems.append(LineProblem(name, line_no, "nested too deeply"))
                    continue
                if not events:
                    report.ignored += 1
                for event in events:
                    if report.repeats_with_other_text(event):
                        report.conflicts.append(LineProblem(name, line_no, _CONFLICT))
                        continue
                    report.events += 1
                    report.sessions.add(event.session_id)
                    batch.append(event)
                    line_of[(event.session_id, event.seq)] = line_no
                if len(batch) >= BATCH:
                    flush()
            flush()
    except OSError as exc:
        raise ConvmemError(f"cannot read {path}: {exc}") from exc
    except Exception as exc:  # zstandard raises its own error type for corrupt frames
        if type(exc).__module__.startswith("zstandard"):
            raise ConvmemError(f"{path} is not a valid zstd file: {exc}") from exc
        raise
    return report


def _need_file(path: Path) -> None:
    """A path that is not a readable file is one sentence (exit 1), whatever it is."""
    if path.is_dir():
        raise ConvmemError(f"{path} is a folder; name the event files in it instead")
    if not path.is_file():
        raise ConvmemError(f"{path} is not a readable file (or `-` for standard input)")
    if _is_export(path):
        raise ConvmemError(
            f"{path} is a convmem export (a session's tables), not events or a transcript;"
            " it is for reading and keeping, and ingest does not read it back"
            " (`convmem migrate` copies a whole store)"
        )


def _is_export(path: Path) -> bool:
    """Whether a file opens as ``convmem export`` writes one: ``{`` alone on the first
    line, then its first key (keys are sorted): ``"schema"`` for a session's export,
    ``"project"`` for a project's."""
    try:
        with open_binary(path) as fh:
            head = fh.read(64)
    except OSError:
        return False
    return head.startswith((b'{\n  "schema": ', b'{\n  "project": '))


_CONFLICT = "repeats an earlier line's (session, seq) with different text; the first one stays"
_STORED_OTHER = "its (session, seq) is already stored with different text; the stored one stays"


def _hint(message: str, session: str | None) -> str:
    """The problem, with the option that fixes it when there is one."""
    if session is None and message.startswith("field 'session_id'"):
        return f"{message}; `--session ID` supplies it for lines without one"
    return message
