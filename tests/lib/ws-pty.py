#!/usr/bin/env python3
"""ws-pty.py - a small WebSocket client (RFC 6455, written here so that the
tests do not check Tessera's WebSocket code against itself) that speaks
Backend.AI's terminal protocol.

usage: ws-pty.py URL [-H 'Name: value']... STEP...

Steps, in order:
  send:TEXT           keystrokes (\\n and \\r escapes are expanded)
  ctrl:C               Ctrl+C (any letter)
  resize:ROWS:COLS
  raw:TEXT            send TEXT as a text message as is
  expect:TEXT         wait (10 s) until the terminal output contains TEXT
  expect-error:TEXT   wait until an {"type": "error"} message contains TEXT
  expect-terminal:KEPT  wait for a named terminal's {"type": "terminal"}
                      message; KEPT: kept (an existing shell) or new
  sleep:SECONDS       wait (answering pings)
  wait-file:PATH      wait (answering pings) until PATH exists, however long
  close               send a close frame
  expect-close[:CODE] wait until the server closes the connection (with
                      that close code)

The server's close code and reason are printed as "# closed CODE REASON";
a refused handshake prints its status line and body.

The 101 must carry exactly `Upgrade: websocket` and `Connection: upgrade`
(case aside), as aiohttp, Backend.AI's SDK's client, wants.

Prints the terminal output seen; exit 0 if every step passed, else 1.
"""
import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.parse


class WS:
    def __init__(self, url, headers):
        u = urllib.parse.urlsplit(url)
        self.sock = socket.create_connection((u.hostname, u.port or 80), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        target = u.path + ("?" + u.query if u.query else "")
        lines = [f"GET {target} HTTP/1.1", f"Host: {u.netloc}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"] + headers
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise SystemExit(f"handshake: connection closed after {head!r}")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        status = head.split(b"\r\n")[0].decode()
        if " 101 " not in status + " ":
            self.sock.settimeout(2)
            try:
                while len(self.buf) < 4096:
                    chunk = self.sock.recv(4096)
                    if not chunk:
                        break
                    self.buf += chunk
            except OSError:
                pass
            raise SystemExit(f"handshake: {status} {self.buf[:300].decode(errors='replace')}")
        # as strict as aiohttp (Backend.AI's SDK): Upgrade: websocket and
        # Connection: upgrade, exactly one token each
        fields = {}
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.decode(errors="replace").partition(":")
            fields.setdefault(name.strip().lower(), []).append(value.strip())
        for name, want in (("upgrade", "websocket"), ("connection", "upgrade")):
            if [v.lower() for v in fields.get(name, [])] != [want]:
                raise SystemExit(f"handshake: {name}: {fields.get(name)}, not {want!r}")
        self.closed = False
        self.close_code = None

    def send(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            hdr = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            hdr = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            hdr = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(hdr + mask + body)

    def _read(self, n, deadline):
        while len(self.buf) < n:
            self.sock.settimeout(max(0.01, deadline - time.time()))
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self, deadline):
        """(opcode, payload) of the next whole message."""
        b0, b1 = self._read(2, deadline)
        n = b1 & 0x7F
        if n == 126:
            n = struct.unpack("!H", self._read(2, deadline))[0]
        elif n == 127:
            n = struct.unpack("!Q", self._read(8, deadline))[0]
        if b1 & 0x80:
            raise SystemExit("server frames must not be masked")
        return b0 & 0x0F, self._read(n, deadline)


    def message(self, deadline):
        """(opcode, payload) of the next message that is not a ping (pings are answered)."""
        while True:
            op, data = self.recv(deadline)
            if op != 9:
                return op, data
            self.send(10, data)


def parse_argv(args):
    """URL [-H 'Name: value']... STEP...: (url, headers, steps)"""
    url, headers, steps = args[0], [], []
    i = 1
    while i < len(args):
        if args[i] == "-H":
            headers.append(args[i + 1])
            i += 2
        else:
            steps.append(args[i])
            i += 1
    return url, headers, steps


def main():
    url, headers, steps = parse_argv(sys.argv[1:])
    ws = WS(url, headers)
    seen, errors, terminal = "", "", None

    def wait_for(pred, what, seconds=10):
        nonlocal seen, errors, terminal
        deadline = time.time() + seconds
        while not pred():
            try:
                op, data = ws.message(deadline)
            except (socket.timeout, TimeoutError):
                if what == "time":
                    return True
                print(f"\n# timed out waiting for {what}; output so far: {seen!r} errors: {errors!r}")
                return False
            except EOFError:
                ws.closed = True
                if what == "close":
                    return True
                print(f"\n# connection closed waiting for {what}; output: {seen!r}")
                return False
            if op == 8:
                ws.closed = True
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
                ws.close_code = code
                print(f"\n# closed {code} {data[2:].decode(errors='replace')}")
                if what == "close":
                    return True
                print(f"\n# server closed waiting for {what}")
                return False
            if op != 1:
                continue
            msg = json.loads(data)
            if msg.get("type") == "out":
                text = base64.b64decode(msg["data"]).decode(errors="replace")
                seen += text
                sys.stdout.write(text)
                sys.stdout.flush()
            elif msg.get("type") == "error":
                errors += msg.get("data", "") + "\n"
            elif msg.get("type") == "terminal":
                terminal = msg
                print(f"# terminal {json.dumps(msg)}")
        return True

    for step in steps:
        kind, _, arg = step.partition(":")
        if kind == "send":
            text = arg.replace("\\n", "\n").replace("\\r", "\r")
            ws.send(1, json.dumps({"type": "stdin", "chars": base64.b64encode(text.encode()).decode()}).encode())
        elif kind == "ctrl":
            ws.send(1, json.dumps({"type": "stdin", "chars": base64.b64encode(bytes([ord(arg.upper()) - 64])).decode()}).encode())
        elif kind == "resize":
            rows, cols = arg.split(":")
            ws.send(1, json.dumps({"type": "resize", "rows": int(rows), "cols": int(cols)}).encode())
        elif kind == "raw":
            ws.send(1, arg.encode())
        elif kind == "expect":
            if not wait_for(lambda: arg in seen, repr(arg)):
                return 1
        elif kind == "expect-error":
            if not wait_for(lambda: arg in errors, "error " + repr(arg)):
                return 1
        elif kind == "expect-terminal":
            if not wait_for(lambda: terminal is not None, "the terminal message"):
                return 1
            if terminal.get("kept") is not (arg == "kept"):
                print(f"# wanted a {arg} terminal, got {terminal}")
                return 1
        elif kind == "sleep":
            if not ws.closed:
                wait_for(lambda: False, "time", float(arg))
        elif kind == "wait-file":
            while not ws.closed and not os.path.exists(arg):
                wait_for(lambda: False, "time", 0.2)
        elif kind == "close":
            ws.send(8, struct.pack("!H", 1000))
        elif kind == "expect-close":
            if not ws.closed and not wait_for(lambda: ws.closed, "close"):
                return 1
            if arg and str(ws.close_code) != arg:
                print(f"# closed with {ws.close_code}, not {arg}")
                return 1
        else:
            raise SystemExit(f"unknown step {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
