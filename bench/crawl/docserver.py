"""N origins on 127.0.0.1 (one port each) serving the same real documentation tree.

Run as its own process so that its CPU is not the crawler's:

    python bench/crawl/docserver.py --root DIR --origins 200 --log requests.json

It loads every regular file under ``DIR`` into memory, listens on N ports chosen by the
OS, prints one JSON line ``{"ports": [...]}`` on stdout when ready, and serves HTTP/1.1
with keep-alive (``/robots.txt``: ``User-agent: *`` / ``Disallow:``; unknown paths 404)
until stdin is closed or SIGTERM arrives. Then it writes the request log to ``--log``:
one ``[origin_index, arrival, answered, status, path]`` row per request, times from
``time.monotonic()`` (CLOCK_MONOTONIC, the same clock in every process of the machine),
``arrival`` when the request head was read, ``answered`` when the answer was written.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import mimetypes
import signal
import sys
import time
from pathlib import Path
from urllib.parse import unquote

ROBOTS = b"User-agent: *\nDisallow:\n"
MAX_HEAD_BYTES = 16384


def load_tree(root: Path) -> dict[str, tuple[bytes, bytes]]:
    """``{"/path": (content_type, body)}`` of every regular file under ``root``."""
    files = {}
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            if kind.startswith("text/"):
                kind += "; charset=utf-8"
            files["/" + path.relative_to(root).as_posix()] = (kind.encode(), path.read_bytes())
    files["/robots.txt"] = (b"text/plain", ROBOTS)
    if "/index.html" in files:
        files["/"] = files["/index.html"]
    return files


class DocServer:
    """The server state: files, request log, listeners."""

    def __init__(self, files: dict[str, tuple[bytes, bytes]]) -> None:
        self.files = files
        self.log: list[list] = []
        self.servers: list[asyncio.base_events.Server] = []

    async def handle(self, origin: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError,
                        asyncio.CancelledError):
                    return
                arrival = time.monotonic()
                line = head.split(b"\r\n", 1)[0].split(b" ")
                target = line[1].decode("latin-1") if len(line) > 1 else "/"
                path = unquote(target.split("?", 1)[0].split("#", 1)[0])
                found = self.files.get(path)
                if found is None:
                    status, kind, body = 404, b"text/html; charset=utf-8", b"<html><body>not found</body></html>"
                else:
                    status, (kind, body) = 200, found
                reason = b"OK" if status == 200 else b"Not Found"
                writer.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                             % (status, reason, kind, len(body)))
                if line[0] != b"HEAD":
                    writer.write(body)
                await writer.drain()
                self.log.append([origin, arrival, time.monotonic(), status, target])
        finally:
            writer.close()

    async def start(self, origins: int) -> list[int]:
        ports = []
        for index in range(origins):
            server = await asyncio.start_server(
                lambda r, w, i=index: self.handle(i, r, w), "127.0.0.1", 0, limit=MAX_HEAD_BYTES, backlog=64)
            self.servers.append(server)
            ports.append(server.sockets[0].getsockname()[1])
        return ports


async def serve(root: Path, origins: int, log_path: Path) -> None:
    server = DocServer(load_tree(root))
    ports = await server.start(origins)
    print(json.dumps({"ports": ports, "files": len(server.files)}), flush=True)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_reader(sys.stdin.fileno(), lambda: stop.set() if not sys.stdin.buffer.read1(4096) else None)
    await stop.wait()
    for s in server.servers:
        s.close()
    log_path.write_text(json.dumps(server.log))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--origins", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args()
    try:
        import uvloop  # optional: a cheaper server leaves more CPU to the crawler under test
        uvloop.install()
    except ImportError:
        pass
    asyncio.run(serve(args.root, args.origins, args.log))


if __name__ == "__main__":
    main()
