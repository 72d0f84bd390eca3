#!/usr/bin/env python3
"""app-client.py - a browser's part against Tessera's app proxy, for the
tests (stdlib only; the WebSocket client is ws-pty.py's).

usage: app-client.py JAR COMMAND ARGS...

JAR is a cookie file (created when missing) that every command reads and
updates, as a browser keeps its cookies.

  login BASE EMAIL PASSWORD
                           log in to the web UI at BASE (POST /server/login):
                           the jar gets its session cookie; prints the status
  open URL                 GET the start-service URL without following the
                           redirect; prints the status and the Location
  follow URL               GET URL and follow redirects (at most 8) as a
                           browser does: an app link goes by the web UI's
                           login check and back with a code; prints
                           "STATUS URL" for each, the last one's body after
  request METHOD URL [BODY | @FILE]
                           prints the status, then the body; sends
                           X-XSRFToken when the jar has an _xsrf cookie for
                           the URL (Jupyter wants it on POST)
  headers URL              GET URL; prints the status and the headers
  jupyter-cell PREFIX_URL CODE
                           Jupyter Notebook through the proxy: an XSRF cookie
                           (GET tree), a new kernel (POST api/kernels), CODE
                           run over the kernel's WebSocket
                           (api/kernels/ID/channels); prints "kernel ID" and
                           what the cell wrote; exit 0 once it went idle
  websocket URL            open a WebSocket; prints the status line of the
                           answer (exit 1 when it is not 101)
  websocket-held URL SECONDS
                           open a WebSocket (prints 101 once open) and hold
                           it, answering pings, until the server ends it
                           (prints "closed", exit 0) or SECONDS passed
                           (exit 1)
"""
import http.cookiejar
import importlib.util
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("ws_pty", os.path.join(HERE, "ws-pty.py"))
ws_pty = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ws_pty)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def opener(jar):
    return urllib.request.build_opener(NoRedirect, urllib.request.HTTPCookieProcessor(jar))


def cookie_header(jar, url):
    req = urllib.request.Request(url)
    jar.add_cookie_header(req)
    return req.get_header("Cookie")


def xsrf(jar, url):
    path = urllib.parse.urlsplit(url).path
    for c in jar:
        if c.name == "_xsrf" and path.startswith(c.path):
            return c.value
    return None


def send(jar, method, url, body=None, content_type="application/json"):
    data = body.encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", content_type)
    token = xsrf(jar, url)
    if token:
        req.add_header("X-XSRFToken", token)
    try:
        with opener(jar).open(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def jupyter_cell(jar, prefix, code):
    status, _, _ = send(jar, "GET", prefix + "tree")
    if status != 200:
        print(f"GET tree: {status}")
        return 1
    status, _, body = send(jar, "POST", prefix + "api/kernels", "{}")
    if status != 201:
        print(f"POST api/kernels: {status} {body[:300]!r}")
        return 1
    kernel = json.loads(body)["id"]
    print(f"kernel {kernel}", flush=True)
    u = urllib.parse.urlsplit(prefix)
    session = uuid.uuid4().hex
    ws_url = f"ws://{u.netloc}{u.path}api/kernels/{kernel}/channels?session_id={session}"
    ws = ws_pty.WS(ws_url, [f"Cookie: {cookie_header(jar, prefix)}"])
    msg_id = uuid.uuid4().hex
    ws.send(1, json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": session, "msg_type": "execute_request",
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True},
    }).encode())
    deadline = time.time() + 60
    while time.time() < deadline:
        op, data = ws.message(deadline)
        if op != 1:
            continue
        msg = json.loads(data)
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = msg.get("msg_type"), msg.get("content", {})
        if kind == "stream":
            sys.stdout.write(content.get("text", ""))
        elif kind == "error":
            print(f"error: {content.get('ename')}: {content.get('evalue')}")
        elif kind == "status" and content.get("execution_state") == "idle":
            ws.send(8, b"\x03\xe8")
            return 0
    print("no idle status within 60 s")
    return 1


def websocket_held(jar, url, seconds):
    ws = ws_pty.WS(url, [f"Cookie: {cookie_header(jar, 'http' + url[2:]) or ''}"])
    print("101", flush=True)
    deadline = time.time() + seconds
    try:
        while time.time() < deadline:
            try:
                op, _ = ws.message(deadline)
            except TimeoutError:
                break
            if op == 8:
                break
    except (EOFError, ConnectionError):
        pass
    if time.time() >= deadline:
        print(f"still open after {seconds:g} s")
        return 1
    print("closed")
    return 0


def main():
    jar_path, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    jar = http.cookiejar.LWPCookieJar(jar_path)
    if os.path.exists(jar_path):
        jar.load(ignore_discard=True, ignore_expires=True)
    rc = 0
    if command == "open":
        status, headers, _ = send(jar, "GET", args[0])
        print(status)
        print(headers.get("Location", ""))
    elif command == "login":
        body = json.dumps({"email": args[1], "password": args[2]})
        status, _, _ = send(jar, "POST", args[0].rstrip("/") + "/server/login", body)
        print(status)
    elif command == "follow":
        url = args[0]
        for _ in range(8):
            status, headers, body = send(jar, "GET", url)
            print(f"{status} {url}")
            if status not in (301, 302, 303, 307, 308):
                break
            url = urllib.parse.urljoin(url, headers.get("Location", ""))
        sys.stdout.write(body.decode(errors="replace"))
    elif command == "request":
        body = args[2] if len(args) > 2 else None
        if body and body.startswith("@"):
            with open(body[1:]) as f:
                body = f.read()
        status, _, body = send(jar, args[0], args[1], body)
        print(status)
        sys.stdout.write(body.decode(errors="replace"))
    elif command == "headers":
        status, headers, _ = send(jar, "GET", args[0])
        print(status)
        for k, v in headers.items():
            print(f"{k}: {v}")
    elif command == "jupyter-cell":
        rc = jupyter_cell(jar, args[0], args[1])
    elif command == "websocket":
        try:
            http_url = "http" + args[0][2:] if args[0].startswith("ws") else args[0]
            ws_pty.WS(args[0], [f"Cookie: {cookie_header(jar, http_url) or ''}"])
            print("101")
        except SystemExit as e:
            print(e)
            rc = 1
    elif command == "websocket-held":
        rc = websocket_held(jar, args[0], float(args[1]))
    else:
        raise SystemExit(f"unknown command {command}")
    jar.save(ignore_discard=True, ignore_expires=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
