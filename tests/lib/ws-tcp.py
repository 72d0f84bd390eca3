#!/usr/bin/env python3
"""ws-tcp.py - one TCP connection over Backend.AI's app tunnel (the
WebSocket of GET /stream/session/{name}/tcpproxy?app=NAME that `backend.ai
app` opens per local connection), over the WebSocket client of ws-pty.py.

usage: ws-tcp.py URL [-H 'Name: value']... DATA

Sends DATA (with \\r and \\n escapes) as one binary message, then writes
the bytes of every binary message received to stdout until the server
closes (30 s at most), and `closed CODE REASON` to stderr.  Exit 0 when
the server closed with 1000, 1 otherwise."""
import importlib.util
import os
import socket
import struct
import sys
import time

spec = importlib.util.spec_from_file_location("ws_pty", os.path.join(os.path.dirname(__file__), "ws-pty.py"))
ws_pty = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ws_pty)


def main():
    url, headers, steps = ws_pty.parse_argv(sys.argv[1:])
    ws = ws_pty.WS(url, headers)
    data = steps[0].replace("\\r", "\r").replace("\\n", "\n").encode() if steps else b""
    if data:
        ws.send(2, data)
    deadline = time.time() + 30
    while True:
        try:
            op, payload = ws.message(deadline)
        except (socket.timeout, TimeoutError):
            print("closed - timed out", file=sys.stderr)
            return 1
        except EOFError:
            print("closed - dropped without a close frame", file=sys.stderr)
            return 1
        if op == 2:
            sys.stdout.buffer.write(payload)
            sys.stdout.flush()
        elif op == 8:
            code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1005
            print(f"closed {code} {payload[2:].decode(errors='replace')}", file=sys.stderr)
            try:
                ws.send(8, payload[:2])
            except OSError:
                pass
            return 0 if code == 1000 else 1
        else:
            print(f"closed - unexpected opcode {op}", file=sys.stderr)
            return 1


sys.exit(main())
