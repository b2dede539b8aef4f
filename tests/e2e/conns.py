#!/usr/bin/env python3
# conns.py: the many connections tests/e2e/conns.sh opens to a daemon.
#
#   conns.py idle PORT N OUT SECONDS
#     opens N connections from 127.0.0.1 (until five fail in a row),
#     each sending one byte of a request line and then one more every
#     2 s (never a whole request);
#     writes OUT.ready with how many connected, then OUT.alive with how
#     many the daemon still holds, after every round, for SECONDS.
#   conns.py streams PORT N OUT SECONDS TEXT
#     opens N GET /api/events streams from 127.0.0.1; writes OUT.ok with
#     how many were answered 200, then every second OUT.alive with
#     "OPEN GOT": how many are still open, and how many have had TEXT.
#   conns.py slow PORT N OUT GO
#     opens N GET /api/events streams from 127.0.0.1 with a small
#     receive buffer and reads nothing; writes OUT.ready; once the file
#     GO exists, reads them all to their ends (60 s at most) and writes
#     OUT.result with "ENDED SAID": how many streams the daemon ended,
#     and how many of those said they fell behind.
#   conns.py mcpslow PORT N OUT GO
#     the same with N MCP sessions and their GET /mcp streams.
#   conns.py pool PORT N OUT HOLD
#     what a client's keep-alive pool does: N connections from 127.0.0.1,
#     each asks GET /api/status (credentials: with no token set, any
#     loopback request has them) and stays open and idle; then one more
#     connection asks the same; writes OUT with "OK CODE": how many of
#     the N were answered 200, and the new one's status (0: refused).
#     Keeps the N open HOLD seconds more.
#   conns.py mcpgiven PORT 1 OUT GO
#     one MCP session of the agent "slowpoke" that takes pushes
#     (claude/channel), its GET /mcp stream read by nobody; once GO
#     exists, reads that stream to its end, then asks `wait` (a new
#     session of the same agent) until it has nothing more; writes
#     OUT.result with the first word of each message's text that the
#     stream pushed or wait gave, one a line ("stream m7", "wait m9"),
#     and OUT.said with 1 when the stream ended saying it fell behind.
import http.client
import json
import os
import resource
import select
import selectors
import socket
import sys
import time


def open_(port, timeout=3.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def closed(s):
    """Whether the daemon closed s (or reset it)."""
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text + "\n")
    os.replace(path + ".tmp", path)


def trickle(socks):
    """Sends one more byte on every connection the daemon holds: how many."""
    alive = 0
    for s in socks:
        if closed(s):
            continue
        try:
            s.send(b"E")
            alive += 1
        except BlockingIOError:
            alive += 1
        except OSError:
            pass
    return alive


def idle(port, n, out, seconds):
    socks, failed = [], 0
    last = time.time()
    # Bytes keep flowing while the rest connect, as an attacker's would;
    # once connecting fails five times in a row, the daemon takes no more.
    for _ in range(n):
        try:
            s = open_(port, 1.0)
            # Without a timeout: Python would wait on each socket before
            # every recv and send, MSG_DONTWAIT or not.
            s.setblocking(False)
            s.send(b"G")
            socks.append(s)
            failed = 0
        except OSError:
            failed += 1
            if failed == 5:
                break
        if time.time() - last >= 2:
            trickle(socks)
            last = time.time()
    write(out + ".ready", str(len(socks)))
    end = time.time() + seconds
    while time.time() < end:
        write(out + ".alive", str(trickle(socks)))
        time.sleep(2)


def streams(port, n, out, seconds, text):
    socks, data = [], {}
    req = ("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
           "Accept: text/event-stream\r\n\r\n" % port).encode()
    for _ in range(n):
        s = open_(port)
        s.send(req)
        socks.append(s)
        data[s] = b""
    ok = 0
    for s in socks:
        while b"\r\n" not in data[s]:
            chunk = s.recv(4096)
            if not chunk:
                break
            data[s] += chunk
        if data[s].startswith(b"HTTP/1.1 200"):
            ok += 1
    write(out + ".ok", str(ok))
    want = text.encode()
    end = time.time() + seconds
    live = set(socks)
    while time.time() < end:
        ready, _, _ = select.select(list(live), [], [], 1.0)
        for s in ready:
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                live.discard(s)
                continue
            data[s] += chunk
        got = sum(1 for s in socks if want in data[s])
        write(out + ".alive", "%d %d" % (len(live), got))


def dechunk(raw):
    """The body of an HTTP/1.1 answer in chunks (as far as it came)."""
    body = raw.partition(b"\r\n\r\n")[2]
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        try:
            n = int(size, 16)
        except ValueError:
            break
        if n == 0:
            break
        out += rest[:n]
        body = rest[n + 2:]
    return out


def mcp_session(port, path="/mcp", caps=None):
    """A new MCP session's id (at path, declaring caps)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream"}
    c.request("POST", path, json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25",
                   "capabilities": caps or {},
                   "clientInfo": {"name": "slow", "version": "1"}}}), h)
    r = c.getresponse()
    r.read()
    sid = r.getheader("Mcp-Session-Id")
    h["Mcp-Session-Id"] = sid
    c.request("POST", path, json.dumps({
        "jsonrpc": "2.0", "method": "notifications/initialized"}), h)
    c.getresponse().read()
    c.close()
    return sid


def first_words(sse, method):
    """The first word of each message's text in the SSE body sse whose
    JSON-RPC method is method (the text in params.content)."""
    out = []
    for line in sse.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        try:
            note = json.loads(line[6:])
        except ValueError:
            continue
        if note.get("method") == method:
            out.append(note["params"]["content"].split(" ", 1)[0])
    return out


def again(f):
    """f(), asked again for up to 90 s while its connection is refused,
    reset or closed: while the other slow streams from this address
    drain (60 s at most), the daemon closes a new connection from it at
    once (docs/SECURITY.md: 64 at most without credentials)."""
    end = time.time() + 90
    while True:
        try:
            return f()
        except ConnectionError:
            if time.time() > end:
                raise
            time.sleep(0.5)


def given(port, out, go):
    path = "/mcp?agent=slowpoke"
    caps = {"experimental": {"claude/channel": {}}}
    req = ("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
           "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
           "MCP-Protocol-Version: 2025-11-25\r\n\r\n"
           % (path, port, mcp_session(port, path, caps))).encode()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(3.0)
    s.connect(("127.0.0.1", port))
    s.send(req)
    write(out + ".ready", "1")
    while not os.path.exists(go):
        time.sleep(0.2)
    raw = b""
    s.settimeout(60.0)
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        raw += chunk
    s.close()
    body = dechunk(raw)
    lines = ["stream " + w for w in
             first_words(body, "notifications/claude/channel")]
    # What the stream did not carry waits for the agent: wait for it,
    # on a new session of the same agent, until nothing more comes.
    # While the slow streams beside this one end, the daemon may refuse
    # a new connection from this address for a moment: asked again.
    sid = again(lambda: mcp_session(port, path))
    h = {"Content-Type": "application/json",
         "Accept": "application/json, text/event-stream",
         "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}

    def ask(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("POST", path, json.dumps({
            "jsonrpc": "2.0", "id": 10 + k, "method": "tools/call",
            "params": {"name": "wait", "arguments": {"timeout_s": 1}}}), h)
        r = c.getresponse()
        answer = r.read()
        c.close()
        return r, answer
    for k in range(100):
        r, answer = again(lambda: ask(k))
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            answer = answer.split(b"data: ")[-1]
        msgs = json.loads(answer)["result"]["structuredContent"]["messages"]
        if not msgs:
            break
        lines += ["wait " + m["text"].split(" ", 1)[0] for m in msgs]
    write(out + ".said", "1" if b"fell" in body else "0")
    write(out + ".result", "\n".join(lines) + "\n")


def slow(port, n, out, go, mcp=False):
    socks = []
    for _ in range(n):
        if mcp:
            req = ("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "Accept: text/event-stream\r\nMcp-Session-Id: %s\r\n"
                   "MCP-Protocol-Version: 2025-11-25\r\n\r\n"
                   % (port, mcp_session(port))).encode()
        else:
            req = ("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                   "Accept: text/event-stream\r\n\r\n" % port).encode()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(3.0)
        s.connect(("127.0.0.1", port))
        s.send(req)
        socks.append(s)
    write(out + ".ready", str(len(socks)))
    while not os.path.exists(go):
        time.sleep(0.2)
    # All at once: a stream left waiting while others are read could
    # be timed out instead.
    sel = selectors.DefaultSelector()
    data = {}
    for s in socks:
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ)
        data[s] = b""
    ended = said = 0
    end = time.time() + 60
    while data and time.time() < end:
        for key, _ in sel.select(1.0):
            s = key.fileobj
            try:
                chunk = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                chunk = None
            if chunk:
                data[s] += chunk
                continue
            if chunk is not None:
                ended += 1
                said += b"fell" in dechunk(data[s])
            sel.unregister(s)
            s.close()
            del data[s]
    write(out + ".result", "%d %d" % (ended, said))


def status(conn):
    """GET /api/status on conn, kept alive: its status, 0 when it failed."""
    try:
        conn.request("GET", "/api/status")
        res = conn.getresponse()
        res.read()
        return res.status
    except OSError:
        return 0


def pool(port, n, out, hold):
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in range(n)]
    ok = sum(1 for c in conns if status(c) == 200)
    last = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    write(out, "%d %d" % (ok, status(last)))
    time.sleep(hold)
    for c in conns + [last]:
        c.close()


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    mode, port, n, out, seconds = sys.argv[1:6]
    if mode == "idle":
        idle(int(port), int(n), out, float(seconds))
    elif mode in ("slow", "mcpslow"):
        slow(int(port), int(n), out, seconds, mode == "mcpslow")
    elif mode == "pool":
        pool(int(port), int(n), out, float(seconds))
    elif mode == "mcpgiven":
        given(int(port), out, seconds)
    else:
        streams(int(port), int(n), out, float(seconds), sys.argv[6])


main()
