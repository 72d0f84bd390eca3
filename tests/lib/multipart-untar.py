#!/usr/bin/python3
"""multipart-untar.py HEADERS BODY DEST: split a multipart/mixed answer
(curl -D HEADERS -o BODY) as Backend.AI's client reads `session download`:
each part must be application/x-tar; each is extracted into DEST.  Prints
every archive member's name, one per line, part by part.  Exits 1 on
anything malformed."""
import io
import re
import sys
import tarfile


def fail(msg):
    sys.exit("multipart-untar: " + msg)


def main():
    headers_path, body_path, dest = sys.argv[1:4]
    headers = open(headers_path, "rb").read().decode("latin-1")
    m = re.search(r"(?im)^content-type:\s*multipart/mixed;\s*boundary=\"?([^\"\r\n;]+)", headers)
    if not m:
        fail("no multipart/mixed content type with a boundary")
    delim = b"--" + m.group(1).encode()
    body = open(body_path, "rb").read()
    chunks = body.split(delim)
    if chunks[0] != b"" or not chunks[-1].startswith(b"--"):
        fail("the body does not start with the boundary or lacks the closing one")
    for chunk in chunks[1:-1]:
        if not chunk.startswith(b"\r\n") or not chunk.endswith(b"\r\n"):
            fail("a part is not framed by CRLF")
        head, sep, data = chunk[2:-2].partition(b"\r\n\r\n")
        if not sep:
            fail("a part has no header end")
        fields = dict(
            (k.strip().lower(), v.strip())
            for k, _, v in (line.partition(":") for line in head.decode("latin-1").split("\r\n"))
        )
        if fields.get("content-type") != "application/x-tar":
            fail("a part is %r, not application/x-tar" % fields.get("content-type"))
        if "content-length" in fields and int(fields["content-length"]) != len(data):
            fail("a part's Content-Length is not its size")
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                print(member.name)
            tar.extractall(dest)


main()
