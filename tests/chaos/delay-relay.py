#!/usr/bin/env python3
"""delay-relay.py LISTEN TARGET CONTROL - a TCP relay that can add latency.

The chaos test puts one in front of each agent's manager connection: the
agent's `manager` is http://LISTEN, which this relays to TARGET (the
front).  CONTROL is a file holding a number of milliseconds, read again
every 200 ms: each chunk read from either side is forwarded that long
after it arrived, in order (a one-way delay on each direction, as
`tc qdisc ... netem delay` would add; this kernel has no sch_netem).
0 relays at once.  Connections open when the delay changes keep going
under the new one.
"""
import asyncio
import sys
import time

listen, target, control = sys.argv[1], sys.argv[2], sys.argv[3]
delay = 0.0


async def watch_control():
    global delay
    while True:
        try:
            with open(control) as f:
                delay = max(0, int(f.read().strip() or 0)) / 1000.0
        except (OSError, ValueError):
            pass
        await asyncio.sleep(0.2)


async def pump(reader, writer):
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.ensure_future(send())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            await queue.put((time.monotonic() + delay, data))
    except (ConnectionError, OSError):
        pass
    await queue.put((0, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def handle(client_reader, client_writer):
    host, port = target.rsplit(":", 1)
    try:
        server_reader, server_writer = await asyncio.open_connection(host, int(port))
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(pump(client_reader, server_writer), pump(server_reader, client_writer),
                         return_exceptions=True)


async def main():
    host, port = listen.rsplit(":", 1)
    server = await asyncio.start_server(handle, host, int(port), reuse_address=True)
    asyncio.ensure_future(watch_control())
    async with server:
        await server.serve_forever()


asyncio.run(main())
