// model.mjs: a scripted model endpoint on loopback that speaks the
// Anthropic Messages API well enough for a real agent CLI (Claude Code)
// to run against it offline.  The model is scripted, the harness real:
// a script decides each answer from the conversation it is sent, and
// every request is recorded (to a JSONL file and in memory) so that the
// tests can say what reached the model.
//
//   POST /v1/messages             stream: true -> SSE (message_start,
//                                 content_block_start/delta/stop for text
//                                 and tool_use blocks, message_delta with
//                                 stop_reason, message_stop); else JSON
//   POST /v1/messages/count_tokens {input_tokens}
//   anything else                 logged, 404 with an error JSON
//
// startModel({ log, script }) -> { url, port, requests, close, onRequest }
// script(body, req) returns (or resolves to) { content: [blocks],
// stop_reason } where blocks are {type:'text', text} or {type:'tool_use',
// name, input} (an id is made); or a string (text, end_turn).
import http from 'node:http';
import fs from 'node:fs';
import crypto from 'node:crypto';

let seq = 0;
const id = (p) => `${p}_${crypto.randomBytes(12).toString('hex')}`;

// Roughly what a tokenizer would say: enough for Claude Code's budgets.
const tokens = (x) => Math.max(1, Math.ceil(JSON.stringify(x ?? '').length / 4));

export function startModel({ log, script, host = '127.0.0.1', port = 0 } = {}) {
  const requests = [];
  const listeners = new Set();
  const logFd = log ? fs.openSync(log, 'a') : null;
  const record = (r) => {
    requests.push(r);
    if (logFd !== null) fs.writeSync(logFd, JSON.stringify(r) + '\n');
    for (const f of listeners) f(r);
  };

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = null;
      }
      const url = new URL(req.url, 'http://x');
      const r = {
        n: seq++,
        t: Date.now(),
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers: req.headers,
        body,
      };
      if (req.method === 'POST' && url.pathname === '/v1/messages') {
        record(r);
        let answer;
        try {
          answer = await script(body, r);
        } catch (e) {
          answer = { content: [{ type: 'text', text: `script error: ${e.stack}` }], stop_reason: 'end_turn' };
        }
        if (typeof answer === 'string') answer = { content: [{ type: 'text', text: answer }] };
        answer.content = answer.content.map((b) =>
          b.type === 'tool_use' ? { id: id('toolu'), ...b, input: b.input ?? {} } : b);
        answer.stop_reason ??= answer.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
        r.answer = answer;
        r.answered = Date.now();
        if (logFd !== null) fs.writeSync(logFd, JSON.stringify({ n: r.n, answered: r.answered, answer }) + '\n');
        if (body?.stream) stream(res, body, answer);
        else json(res, 200, message(body, answer));
        return;
      }
      if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') {
        record(r);
        json(res, 200, { input_tokens: tokens(body?.messages) + tokens(body?.tools) + tokens(body?.system) });
        return;
      }
      r.unknown = true;
      record(r);
      json(res, 404, { type: 'error', error: { type: 'not_found_error', message: `scripted model: no ${req.method} ${url.pathname}` } });
    });
  });

  function message(body, answer) {
    return {
      id: id('msg'),
      type: 'message',
      role: 'assistant',
      model: body?.model ?? 'claude-scripted',
      content: answer.content,
      stop_reason: answer.stop_reason,
      stop_sequence: null,
      usage: { input_tokens: tokens(body?.messages), output_tokens: tokens(answer.content), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
  }

  function stream(res, body, answer) {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'request-id': id('req'),
      'anthropic-ratelimit-unified-status': 'allowed',
    });
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    const m = message(body, answer);
    ev('message_start', { message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 1 } } });
    answer.content.forEach((b, index) => {
      if (b.type === 'text') {
        ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
      } else if (b.type === 'tool_use') {
        ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
        ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
      }
      ev('content_block_stop', { index });
    });
    ev('message_delta', { delta: { stop_reason: answer.stop_reason, stop_sequence: null }, usage: { output_tokens: m.usage.output_tokens } });
    ev('message_stop', {});
    res.end();
  }

  function json(res, status, obj) {
    const s = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s), 'request-id': id('req') });
    res.end(s);
  }

  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(port, host, () => {
      const p = server.address().port;
      resolve({
        url: `http://${host}:${p}`,
        port: p,
        requests,
        onRequest: (f) => {
          listeners.add(f);
          return () => listeners.delete(f);
        },
        close: () => new Promise((r) => {
          server.closeAllConnections?.();
          server.close(() => r());
          if (logFd !== null) fs.closeSync(logFd);
        }),
      });
    });
  });
}

// ---------------------------------------------------------------------------
// Reading what Claude Code sent.

// The text of a content block or message content, flattened.
export function textOf(c) {
  if (c == null) return '';
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(textOf).join('\n');
  if (c.type === 'text') return c.text;
  if (c.type === 'tool_result') return textOf(c.content);
  if (c.type === 'tool_use') return JSON.stringify(c.input);
  return '';
}

// Every content block of a request's messages, with its position:
// { m (message index), b (block index), role, block }.  A string content
// is one text block.
export function blocks(body) {
  const out = [];
  (body?.messages ?? []).forEach((msg, m) => {
    const content = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : msg.content ?? [];
    content.forEach((block, b) => out.push({ m, b, role: msg.role, block }));
  });
  return out;
}

// The main conversation's requests: the ones that offer tools (Claude
// Code's side requests, titles and the like, offer none).
export const isMain = (body) => Array.isArray(body?.tools) && body.tools.length > 0;

// The last message of a request, the newest turn's.
export const last = (body) => body?.messages?.[body.messages.length - 1];

// The tool_result blocks of the last (user) message.
export function newResults(body) {
  const l = last(body);
  if (!l || l.role !== 'user' || !Array.isArray(l.content)) return [];
  return l.content.filter((b) => b.type === 'tool_result');
}
