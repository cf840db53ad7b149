"""Structured logs (structlog): one JSON object per line on standard error, or readable lines, for
structlog's own events and the standard library's records alike."""

from __future__ import annotations

import dataclasses
import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

import structlog
from websockets.frames import DATA_OPCODES, Frame

__all__ = ["Redactor", "configure_logging"]

_PATTERNS = (
    # a JSON or Python-repr field holding a token or a secret (a hello frame, whose ``host`` is the
    # room's host token and ``watcher`` a spectator's key; a request body)
    (
        re.compile(
            r"""(["'](?:token|host_token|seat_token|secret|admin_token|host|watcher)["']\s*:\s*["'])[^"']*"""
        ),
        r"\1[redacted]",
    ),
    (re.compile(r"(?i)(bearer\s+)[^\s'\",;]+"), r"\1[redacted]"),
    (re.compile(r"(__Host-domeng_admin(?:_device)?=)[^;\s'\"]+"), r"\1[redacted]"),
)
_SECRET_KEYS = frozenset({"token", "host_token", "seat_token", "secret", "admin_token", "authorization"})


class Redactor:
    """Takes tokens and secrets out of a log line: JSON fields named ``token``, ``host_token``,
    ``secret``, ``host`` (with a string: a host token) and ``watcher`` (a ``hello`` frame in the
    WebSocket library's debug log, say; a chat line's public tag goes too), ``Bearer``
    credentials, the admin session and device cookies, and the configured ``secrets`` wherever they appear."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = tuple(s for s in secrets if s)

    def __call__(self, text: str) -> str:
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        for secret in self.secrets:
            text = text.replace(secret, "[redacted]")
        return text


class _RedactingFilter(logging.Filter):
    """On the root handler: every standard-library record (uvicorn's and the WebSocket
    library's, at every level) is redacted before it is written."""

    def __init__(self, redact: Redactor) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, Frame) for a in record.args):
            args = record.args
            record.args = tuple(_redacted_frame(a, self.redact) if isinstance(a, Frame) else a for a in args)
        message = record.getMessage()
        clean = self.redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info:
            setattr(record, _EXCEPTION, self.redact(logging.Formatter().formatException(record.exc_info)))
            record.exc_info = None
        return True


_EXCEPTION = "domeng_exception"
"""The attribute of a standard-library record that holds its traceback, redacted (`_RedactingFilter`)."""


def _foreign_exception(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """A standard-library record's redacted traceback as the line's ``exception`` field."""
    record = event.get("_record")
    text = getattr(record, _EXCEPTION, None)
    if text:
        event["exception"] = text
    return event


def _redacted_frame(frame: Frame, redact: Redactor) -> Frame:
    """``frame`` (a WebSocket frame the library logs at debug level: ``< TEXT '{"type": …}' [97
    bytes]``) with its payload redacted whole. The library shortens a long payload to its start and
    end, ``{"type": "hello", "protocol": 1, "token": null,...pI2f2PORjGiZh4k-WuDNs"}``, which cuts a
    field's name from its value (there, the last 22 characters of the host token a browser's hello
    ends with), so the log line itself can no longer be redacted: the frame is, before it is
    shortened."""
    if frame.opcode not in DATA_OPCODES:
        return frame  # pings, pongs and closes carry no message
    text = bytes(frame.data).decode("utf-8", "replace")
    clean = redact(text)
    return frame if clean == text else dataclasses.replace(frame, data=clean.encode())


def _redact_event(redact: Redactor) -> Any:
    def processor(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        for key, value in list(event.items()):
            if key.lower() in _SECRET_KEYS:
                event[key] = "[redacted]"
            elif isinstance(value, str):
                event[key] = redact(value)
        return event

    return processor


def configure_logging(level: str = "info", as_json: bool = True, secrets: Iterable[str] = ()) -> None:
    """Configure structlog and the standard library's logging (uvicorn's) to the same stream, in
    one shape: with ``as_json`` one JSON object per line (``event``, ``level``, ``timestamp``, ISO
    8601 UTC, and the standard library's ``logger``; a traceback as ``exception``), else readable
    lines; every line of both is redacted (`Redactor`, with ``secrets`` such as the admin secret),
    at every level."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        numeric = logging.INFO
    logging.basicConfig(stream=sys.stderr, level=numeric, force=True)
    redact = Redactor(secrets)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if as_json else structlog.dev.ConsoleRenderer(colors=False)
    )
    stamp = structlog.processors.TimeStamper(fmt="iso", utc=True)
    # the standard library's records (uvicorn's, the WebSocket library's, Alembic's) in the same
    # shape as structlog's own lines: a level, the logger's name and a time on each
    foreign = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[
            structlog.stdlib.add_log_level,
            structlog.stdlib.add_logger_name,
            stamp,
            _foreign_exception,
        ],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _redact_event(redact),
            renderer,
        ],
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(_RedactingFilter(redact))
        handler.setFormatter(foreign)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            stamp,
            structlog.processors.format_exc_info,
            _redact_event(redact),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=True,
    )
