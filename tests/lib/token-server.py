#!/usr/bin/env python3
"""token-server.py - a registry token server for tests (the Docker token
authentication flow): GET /token?service=S&scope=repository:NAME:ACTIONS
answers {"token": JWT} (or only "access_token" with --access-token-only),
a JWT signed RS256 with KEY whose header carries CERT (x5c), which
docker-registry trusts through `auth: token: rootcertbundle: CERT`.

    token-server.py --key K --cert C --issuer I --service S --port-file F
                    [--user NAME:PASSWORD] [--access-token-only]

With --user, requests must carry that HTTP Basic credential (else 401);
without, anyone gets a token.  It listens on 127.0.0.1 on a free port,
written to --port-file once it listens.  Signing runs `openssl dgst`.
"""
import argparse
import base64
import http.server
import json
import os
import subprocess
import time
import urllib.parse


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def der_of(cert_pem):
    out = subprocess.run(["openssl", "x509", "-in", cert_pem, "-outform", "DER"],
                         check=True, capture_output=True)
    return base64.b64encode(out.stdout).decode()


def sign(key, data):
    out = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=data,
                         check=True, capture_output=True)
    return out.stdout


def access_of(scopes):
    access = []
    for scope in scopes:
        for one in scope.split(" "):
            parts = one.split(":")
            if len(parts) >= 3 and parts[0] == "repository":
                access.append({"type": "repository", "name": ":".join(parts[1:-1]),
                               "actions": parts[-1].split(",")})
    return access


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        conf = self.server.conf
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/token":
            return self.answer(404, {"error": "not found"})
        query = urllib.parse.parse_qs(url.query)
        subject = ""
        if conf.user:
            expected = "Basic " + base64.b64encode(conf.user.encode()).decode()
            if self.headers.get("Authorization") != expected:
                return self.answer(401, {"details": "invalid username or password"},
                                   [("WWW-Authenticate", 'Basic realm="token"')])
            subject = conf.user.split(":")[0]
        if query.get("service", [""])[0] != conf.service:
            return self.answer(400, {"details": "unknown service"})
        now = int(time.time())
        claims = {"iss": conf.issuer, "sub": subject, "aud": conf.service, "iat": now,
                  "nbf": now - 60, "exp": now + 300, "jti": b64url(os.urandom(12)),
                  "access": access_of(query.get("scope", []))}
        header = {"alg": "RS256", "typ": "JWT", "x5c": [conf.cert_der]}
        signing_input = (b64url(json.dumps(header).encode()) + "." +
                         b64url(json.dumps(claims).encode())).encode()
        token = signing_input.decode() + "." + b64url(sign(conf.key, signing_input))
        body = {"access_token": token} if conf.access_token_only else {"token": token}
        body.update({"expires_in": 300})
        self.answer(200, body)

    def log_message(self, fmt, *args):
        print("token-server: " + fmt % args, flush=True)


def main():
    p = argparse.ArgumentParser()
    for opt in ("--key", "--cert", "--issuer", "--service", "--port-file"):
        p.add_argument(opt, required=True)
    p.add_argument("--user")
    p.add_argument("--access-token-only", action="store_true")
    conf = p.parse_args()
    conf.cert_der = der_of(conf.cert)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.conf = conf
    with open(conf.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(conf.port_file + ".tmp", conf.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
