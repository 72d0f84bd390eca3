#!/usr/bin/env python3
"""fault-proxy.py - an HTTP relay between an agent and its manager that
fails on purpose: while the file given as --control exists it answers
every request 503 (with Retry-After: N when the file holds a number N),
otherwise it relays the request to --upstream and its answer back.

    fault-proxy.py --upstream 127.0.0.1:PORT --control FILE --port-file FILE

It writes the port it listens on (127.0.0.1, a free one) to --port-file,
and one line per request to stdout: "<time> <method> <path> <status>",
so a test can count what the agent sent while the manager failed."""
import argparse
import http.client
import http.server
import os
import sys
import threading
import time

HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te", "upgrade", "trailer"}
log_lock = threading.Lock()


def log(method, path, status):
    with log_lock:
        print(f"{time.time():.3f} {method} {path} {status}", flush=True)


class Relay(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def relay(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        try:
            control = open(self.server.control).read().strip()
        except FileNotFoundError:
            control = None
        if control is not None:
            answer = b'{"title": "failing on purpose (fault-proxy)"}'
            self.send_response(503)
            self.send_header("Content-Type", "application/json")
            if control.isdigit():
                self.send_header("Retry-After", control)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            log(self.command, self.path, 503)
            return
        host, port = self.server.upstream.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except OSError:
            # the manager is away: the agent sees no answer, as without a proxy
            log(self.command, self.path, 0)
            self.close_connection = True
            self.connection.close()
            return
        finally:
            conn.close()
        self.send_response(resp.status)
        for k, v in resp.getheaders():
            if k.lower() not in HOP and k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        log(self.command, self.path, resp.status)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = relay


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--upstream", required=True)
    p.add_argument("--control", required=True)
    p.add_argument("--port-file", required=True)
    a = p.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    server.daemon_threads = True
    server.upstream = a.upstream
    server.control = a.control
    with open(a.port_file + ".tmp", "w") as f:
        f.write(f"{server.server_address[1]}\n")
    os.rename(a.port_file + ".tmp", a.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
