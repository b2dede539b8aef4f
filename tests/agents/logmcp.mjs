// logmcp.mjs: a tiny MCP server that records what its client sends, to
// see exactly what Claude Code says to an MCP server (the initialize
// request's capabilities above all) and what it does with what it is
// sent (a notifications/claude/channel push).  Not papo: only a probe.
//
//   node logmcp.mjs stdio LOGFILE            (one JSON-RPC message a line)
//   node logmcp.mjs http LOGFILE PORTFILE    (Streamable HTTP at /mcp, the
//                                             port written to PORTFILE)
//   node logmcp.mjs tee LOGFILE CMD ARGS...  (runs a stdio server, papo mcp,
//                                             logging every line both ways)
//   node logmcp.mjs proxy LOGFILE PORTFILE URL (a logging reverse proxy in
//                                             front of URL, papo's /mcp:
//                                             every request and answer)
//
// It offers one tool, `wait` (returns "probe <n>"), says it has
// experimental claude/channel, and pushes a channel notification with
// the text in $LOGMCP_PUSH (if set) 2 s after `notifications/initialized`.
// Every message in and out, and its own environment (CLAUDE_CODE_*),
// go to LOGFILE as JSON lines.
import fs from 'node:fs';
import http from 'node:http';
import readline from 'node:readline';

const [mode, logFile, portFile] = process.argv.slice(2);
const log = (o) => fs.appendFileSync(logFile, JSON.stringify({ t: Date.now(), ...o }) + '\n');
log({
  start: mode,
  pid: process.pid,
  env: Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(CLAUDE|MCP|ANTHROPIC)/.test(k))),
});

let waits = 0;
function answer(msg) {
  if (msg.method === 'initialize')
    return {
      protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
      capabilities: { tools: {}, experimental: { 'claude/channel': {} } },
      serverInfo: { name: 'logmcp', version: '1' },
      instructions: 'logmcp: call wait to get the next probe message.',
    };
  if (msg.method === 'tools/list')
    return {
      tools: [{
        name: 'wait',
        description: 'Wait for the next message.',
        inputSchema: { type: 'object', properties: { timeout_s: { type: 'number' } } },
      }],
    };
  if (msg.method === 'tools/call') return { content: [{ type: 'text', text: `probe ${++waits}` }] };
  if (msg.method === 'ping') return {};
  if (msg.method === 'resources/list') return { resources: [] };
  if (msg.method === 'prompts/list') return { prompts: [] };
  return null;
}

const push = () => ({
  jsonrpc: '2.0',
  method: 'notifications/claude/channel',
  params: { content: process.env.LOGMCP_PUSH, meta: { from: 'bo', id: 'probe0001', ts: String(Date.now()) } },
});

// $LOGMCP_INBOX: text this server posts into its session's inbox socket
// ($LOGMCP_INBOX_MS after start), as papo mcp does: is a child's post held?
if (process.env.LOGMCP_INBOX && process.env.CLAUDE_CODE_MESSAGING_SOCKET) {
  setTimeout(async () => {
    const { postInbox } = await import('./inbox.mjs');
    const r = await postInbox(process.env.CLAUDE_CODE_MESSAGING_SOCKET, process.env.CLAUDE_CODE_MESSAGING_TOKEN, process.env.LOGMCP_INBOX).catch((e) => ({ error: e.message }));
    log({ inbox: process.env.LOGMCP_INBOX, r });
  }, Number(process.env.LOGMCP_INBOX_MS ?? 8000));
}

if (mode === 'stdio') {
  const out = (o) => {
    log({ out: o });
    process.stdout.write(JSON.stringify(o) + '\n');
  };
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      log({ bad: line });
      return;
    }
    log({ in: msg });
    if (msg.method === 'notifications/initialized' && process.env.LOGMCP_PUSH)
      setTimeout(() => out(push()), Number(process.env.LOGMCP_PUSH_MS ?? 2000));
    if (msg.id === undefined || !msg.method) return;
    const r = answer(msg);
    out(r ? { jsonrpc: '2.0', id: msg.id, result: r } : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no ${msg.method}` } });
  });
  process.stdin.on('end', () => {
    log({ eof: true });
    process.exit(0);
  });
} else if (mode === 'tee') {
  const { spawn } = await import('node:child_process');
  const [cmd, ...args] = process.argv.slice(4);
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = (stream, f) => readline.createInterface({ input: stream }).on('line', f);
  lines(process.stdin, (l) => {
    log({ in: l });
    child.stdin.write(l + '\n');
  });
  process.stdin.on('end', () => {
    log({ eof: 'client' });
    child.stdin.end();
  });
  lines(child.stdout, (l) => {
    log({ out: l });
    process.stdout.write(l + '\n');
  });
  child.on('exit', (code, signal) => {
    log({ exit: code, signal });
    process.exit(code ?? 1);
  });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => { log({ signal: sig }); child.kill(sig); });
} else if (mode === 'proxy') {
  const target = new URL(process.argv[5]);
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const n = Math.random().toString(36).slice(2, 8);
      log({ n, http: req.method, url: req.url, headers: req.headers, body: raw });
      const up = http.request({ hostname: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } }, (ur) => {
        log({ n, status: ur.statusCode, headers: ur.headers });
        res.writeHead(ur.statusCode, ur.headers);
        ur.on('data', (c) => {
          log({ n, chunk: c.toString('utf8') });
          res.write(c);
        });
        ur.on('end', () => {
          log({ n, end: true });
          res.end();
        });
      });
      up.on('error', (e) => {
        log({ n, error: e.message });
        res.destroy();
      });
      res.on('close', () => { if (!res.writableEnded) { log({ n, closed: 'client' }); up.destroy(); } });
      up.end(raw);
    });
  });
  server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
} else {
  const streams = new Set();
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      log({ http: req.method, url: req.url, headers: req.headers, body: raw });
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'logmcp1' });
        res.write(': open\n\n');
        streams.add(res);
        res.on('close', () => streams.delete(res));
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(200);
        res.end();
        return;
      }
      let msg;
      try {
        msg = JSON.parse(raw);
      } catch {
        res.writeHead(400);
        res.end();
        return;
      }
      if (msg.method === 'notifications/initialized' && process.env.LOGMCP_PUSH)
        setTimeout(() => {
          for (const s of streams) s.write(`event: message\ndata: ${JSON.stringify(push())}\n\n`);
          log({ pushed: streams.size });
        }, Number(process.env.LOGMCP_PUSH_MS ?? 2000));
      if (msg.id === undefined || !msg.method) {
        res.writeHead(202, { 'mcp-session-id': 'logmcp1' });
        res.end();
        return;
      }
      const r = answer(msg);
      const o = r ? { jsonrpc: '2.0', id: msg.id, result: r } : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `no ${msg.method}` } };
      log({ out: o });
      const s = JSON.stringify(o);
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'logmcp1' });
      res.end(s);
    });
  });
  server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
}
