#!/usr/bin/env python3
"""fake-registry.py - a read-only registry that misbehaves on purpose, for
the failure paths of the registry client that docker-registry never takes.

    fake-registry.py --layout DIR --port-file F [--redirect] [--fail N]
                     [--drop] [--corrupt-manifest]

Serves the OCI image layout DIR on 127.0.0.1 (a free port, written to F):
GET /v2/, GET /v2/<name>/manifests/<tag|digest> (any tag names the
layout's first manifest), GET /v2/<name>/blobs/<digest> (Range honoured).
  --redirect          blobs answer 307 to /storage/<digest>, as registries
                      backed by object storage do
  --fail N            the first N blob requests answer 503
  --drop              the first blob request of a blob larger than 1 KiB
                      sends half of it, then closes the connection
  --corrupt-manifest  manifests are served with one byte changed
Every request is logged to stdout: "GET <path> <status> [range]".
"""
import argparse
import http.server
import json
import os
import re


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def send(self, status, body=b"", ctype="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, code, message):
        body = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
        self.send(status, body)

    def blob_path(self, digest):
        if not re.fullmatch(r"sha256:[a-f0-9]{64}", digest):
            return None
        path = os.path.join(self.server.conf.layout, "blobs", "sha256", digest[7:])
        return path if os.path.exists(path) else None

    def do_GET(self):
        conf, state = self.server.conf, self.server.state
        print("GET %s %s" % (self.path, self.headers.get("Range", "")), flush=True)
        if self.path == "/v2/":
            return self.send(200, b"{}")
        m = re.fullmatch(r"/v2/(.+)/manifests/([^/]+)", self.path)
        if m:
            return self.manifest(m.group(2))
        m = re.fullmatch(r"/v2/(.+)/blobs/([^/]+)", self.path)
        if m and conf.redirect:
            return self.send(307, headers=[("Location", "/storage/" + m.group(2))])
        m = m or re.fullmatch(r"/storage/([^/]+)", self.path)
        if not m:
            return self.error(404, "NOT_FOUND", "not found")
        digest = m.groups()[-1]
        path = self.blob_path(digest)
        if not path:
            return self.error(404, "BLOB_UNKNOWN", "blob unknown to registry")
        if state["fail"] > 0:
            state["fail"] -= 1
            return self.error(503, "UNAVAILABLE", "try again later")
        with open(path, "rb") as f:
            data = f.read()
        if conf.drop and len(data) > 1024 and digest not in state["dropped"]:
            state["dropped"].add(digest)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        rng = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if rng and int(rng.group(1)) < len(data):
            start = int(rng.group(1))
            return self.send(206, data[start:], "application/octet-stream",
                             [("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))])
        self.send(200, data, "application/octet-stream")

    def manifest(self, ref):
        conf = self.server.conf
        with open(os.path.join(conf.layout, "index.json")) as f:
            index = json.load(f)
        desc = index["manifests"][0]
        digest = ref if ref.startswith("sha256:") else desc["digest"]
        path = self.blob_path(digest)
        if not path:
            return self.error(404, "MANIFEST_UNKNOWN", "manifest unknown")
        with open(path, "rb") as f:
            data = f.read()
        if conf.corrupt_manifest:
            data = data.replace(b'"schemaVersion":2', b'"schemaVersion": 2', 1)
        self.send(200, data, json.loads(data).get("mediaType", desc["mediaType"]))

    def log_message(self, fmt, *args):
        pass


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layout", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--redirect", action="store_true")
    p.add_argument("--fail", type=int, default=0)
    p.add_argument("--drop", action="store_true")
    p.add_argument("--corrupt-manifest", action="store_true")
    conf = p.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.conf = conf
    server.state = {"fail": conf.fail, "dropped": set()}
    with open(conf.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(conf.port_file + ".tmp", conf.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
