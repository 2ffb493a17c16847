#!/usr/bin/python3
"""parley serve with the WebSocket library AG2's Python client uses.

Usage: python_ws_interop_test.py PARLEY_BINARY

Starts `parley serve` on a fresh store (port 0, keepalive pings every
0.3 s), then talks to it with Python's `websockets` (Debian's
python3-websockets) as AG2's WsLink does: two agents register on two
connections, one opens a conversation with the other (the invitee acks the
invite notify), posts a text the other receives as a notify and receipts;
a 300 KB request is answered; the client's pings get pongs and the
server's keepalive pings are answered by the library while it idles; each
connection closes with 1000; SIGTERM stops the server with exit 0.
Exit 0 when all of it held, else 1 naming what did not.
"""
import asyncio
import json
import re
import signal
import subprocess
import sys
import tempfile

import websockets


def request(request_id, op, params):
    return json.dumps({"request_id": request_id, "op": op, "params": params,
                       "kind": "request"})


async def next_of_kind(ws, kind):
    while True:
        frame = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if frame["kind"] == kind:
            return frame


async def call(ws, request_id, op, params):
    await ws.send(request(request_id, op, params))
    response = await next_of_kind(ws, "response")
    assert response["request_id"] == request_id, response
    assert response["ok"], response
    return response["result"]


async def converse(url):
    async with websockets.connect(url, max_size=None, ping_interval=None) as a, \
            websockets.connect(url, max_size=None, ping_interval=None) as b:
        alice = (await call(a, "1", "register",
                            {"passport": {"name": "alice"}, "resume": {}}))["agent_id"]
        bob = (await call(b, "1", "register",
                          {"passport": {"name": "bob"}, "resume": {}}))["agent_id"]
        await a.send(request("2", "create_channel",
                             {"creator_id": alice, "manifest_type": "conversation",
                              "participants": [bob]}))
        invite = (await next_of_kind(b, "notify"))["envelope"]
        assert invite["event_type"] == "ag2.channel.invite", invite
        channel = invite["channel_id"]
        await call(b, "2", "post_envelope", {"envelope": {
            "channel_id": channel, "sender_id": bob, "audience": None,
            "event_type": "ag2.channel.invite.ack",
            "event_data": {"channel_id": channel},
            "causation_id": invite["envelope_id"]}})
        created = await next_of_kind(a, "response")
        assert created["ok"] and created["result"]["channel_id"] == channel, created

        text = "héllo " * 50
        await call(a, "3", "post_envelope", {"envelope": {
            "channel_id": channel, "sender_id": alice, "audience": None,
            "event_type": "ag2.msg.text", "event_data": {"text": text}}})
        notify = await next_of_kind(b, "notify")
        assert notify["envelope"]["event_data"]["text"] == text, notify
        await b.send(json.dumps({"envelope_id": notify["envelope"]["envelope_id"],
                                 "status": "ack", "recipient_id": bob,
                                 "channel_id": channel, "reason": "",
                                 "kind": "receipt"}))

        big = "x" * 300_000
        assert await call(a, "4", "find_agent_id", {"name": big}) is None

        pong = await a.ping(b"are you there")
        await asyncio.wait_for(pong, 5)
        # Idle through several of the server's keepalive pings (0.3 s apart,
        # 0.3 s to answer): the library answers them, so both stay open.
        await asyncio.sleep(1.5)
        assert (await call(b, "3", "find_agent_id", {"name": "alice"})) == alice
    for ws in (a, b):
        assert ws.close_code == 1000, (ws.close_code, ws.close_reason)


def main():
    parley = sys.argv[1]
    with tempfile.TemporaryDirectory() as scratch:
        server = subprocess.Popen(
            [parley, "serve", "--data", scratch + "/data", "--listen",
             "127.0.0.1:0", "--ping-interval", "0.3", "--ping-timeout", "0.3"],
            stdout=subprocess.PIPE, text=True)
        try:
            url = None
            for line in server.stdout:
                match = re.search(r"listening on (ws://\S+)", line)
                if match:
                    url = match.group(1)
                    break
            assert url, "parley serve printed no URL"
            asyncio.run(converse(url))
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(30)
        assert code == 0, f"parley serve exited {code} after SIGTERM"
    print("python_ws_interop_test: websockets", websockets.__version__, "ok")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print("python_ws_interop_test: FAILED:", failure, file=sys.stderr)
        sys.exit(1)
