#!/usr/bin/env python3
"""ws-exec.py - Backend.AI's streamed execution as its SDK speaks it
(`backend.ai run`: GET /stream/session/{name}/execute), over the
WebSocket client of ws-pty.py (written apart from Tessera's own).

usage: ws-exec.py URL [-H 'Name: value']... STEP...

Steps, in order:
  send:TEXT          a text frame as is (the first one is the request,
                     {"code", "mode", "options"}; later ones are input)
  binary:TEXT        a binary frame
  until:STATUS       read frames until one has that status (30 s)
  until-close[:CODE] read frames until the server closes (with that code)
  close              send a close frame

Every frame received is printed as `frame JSON`, the close as
`closed CODE REASON`, and the stdout records of the frames seen, joined,
as `stdout JSON-STRING` at the end.  Exit 0 if every step passed."""
import importlib.util
import json
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
    stdout = []
    closed = [None]

    def read_until(status=None, close_code=None):
        deadline = time.time() + 30
        while True:
            try:
                op, data = ws.message(deadline)
            except (socket.timeout, TimeoutError):
                print(f"# timed out waiting for {status or 'the close'}")
                return False
            except EOFError:
                print("# connection dropped without a close frame")
                return False
            if op == 8:
                code = struct.unpack("!H", data[:2])[0] if len(data) >= 2 else None
                closed[0] = code
                print(f"closed {code} {data[2:].decode(errors='replace')}")
                ws.send(8, data[:2])
                if status is not None:
                    return False
                return close_code is None or code == close_code
            if op != 1:
                print(f"# unexpected opcode {op}")
                return False
            frame = json.loads(data)
            print("frame " + json.dumps(frame, sort_keys=True))
            for rec in frame.get("console") or []:
                if rec[0] == "stdout":
                    stdout.append(rec[1])
            if status is not None and frame.get("status") == status:
                return True

    ok = True
    for step in steps:
        kind, _, arg = step.partition(":")
        if kind == "send":
            ws.send(1, arg.encode())
        elif kind == "binary":
            ws.send(2, arg.encode())
        elif kind == "until":
            ok = read_until(status=arg)
        elif kind == "until-close":
            ok = read_until(close_code=int(arg) if arg else None)
        elif kind == "close":
            ws.send(8, struct.pack("!H", 1000))
        else:
            raise SystemExit(f"unknown step {step!r}")
        if not ok:
            print(f"# step failed: {step}")
            break
    print("stdout " + json.dumps("".join(stdout)))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
