// model_responses.mjs: a scripted model endpoint on loopback that speaks
// the OpenAI Responses API well enough for a real Codex CLI to run
// against it offline (model.mjs is its Anthropic twin).  The model is
// scripted, the harness real: a script decides each answer from the
// request it is sent, and every request is recorded (to a JSONL file and
// in memory) so that the tests can say what reached the model.
//
//   POST /v1/responses   stream: true -> SSE (response.created, per item
//                        response.output_item.added, output_text.delta,
//                        output_item.done, then response.completed with
//                        usage); without stream: the response JSON
//   GET  /v1/models      an empty list (Codex asks at start)
//   anything else        logged, 404 with an error JSON
//
// startResponses({ log, script }) -> { url (…/v1), port, requests, close,
// onRequest }.  script(body, r) returns (or resolves to) { output: [items] }
// where an item is { type: 'message', text } or { type: 'function_call',
// name, namespace?, arguments (an object) } (ids are made); or a string
// (one message).
import http from 'node:http';
import fs from 'node:fs';
import crypto from 'node:crypto';

let seq = 0;
const id = (p) => `${p}_${crypto.randomBytes(12).toString('hex')}`;
const tokens = (x) => Math.max(1, Math.ceil(JSON.stringify(x ?? '').length / 4));

export function startResponses({ log, script, host = '127.0.0.1', port = 0 } = {}) {
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
      const t = Date.now();
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = null;
      }
      const url = new URL(req.url, 'http://x');
      const r = { n: seq++, t, method: req.method, path: url.pathname, query: url.search, headers: req.headers, body };
      if (req.method === 'POST' && url.pathname.endsWith('/responses')) {
        record(r);
        let answer;
        try {
          answer = await script(body, r);
        } catch (e) {
          answer = `script error: ${e.stack}`;
        }
        if (typeof answer === 'string') answer = { output: [{ type: 'message', text: answer }] };
        const output = answer.output.map(item);
        r.answer = output;
        r.answered = Date.now();
        if (logFd !== null) fs.writeSync(logFd, JSON.stringify({ n: r.n, answered: r.answered, output }) + '\n');
        if (body?.stream === false) json(res, 200, response(body, output, 'completed'));
        else stream(res, body, output);
        return;
      }
      if (req.method === 'GET' && url.pathname.endsWith('/models')) {
        record(r);
        json(res, 200, { models: [] });
        return;
      }
      r.unknown = true;
      record(r);
      json(res, 404, { error: { type: 'not_found', message: `scripted model: no ${req.method} ${url.pathname}` } });
    });
  });

  // The item as the API gives it back.
  function item(x) {
    if (x.type === 'message')
      return { type: 'message', id: id('msg'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: x.text, annotations: [] }] };
    if (x.type === 'function_call') {
      const o = { type: 'function_call', id: id('fc'), status: 'completed', call_id: id('call'), name: x.name, arguments: JSON.stringify(x.arguments ?? {}) };
      if (x.namespace) o.namespace = x.namespace;
      return o;
    }
    return x;
  }

  function response(body, output, status) {
    const input = tokens(body?.input);
    const out = tokens(output);
    return {
      id: id('resp'), object: 'response', created_at: Math.floor(Date.now() / 1000), status,
      model: body?.model ?? 'scripted', output,
      usage: status === 'completed'
        ? { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: out, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + out }
        : null,
    };
  }

  function stream(res, body, output) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': id('req') });
    let n = 0;
    const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n++, ...data })}\n\n`);
    const done = response(body, output, 'completed');
    ev('response.created', { response: { ...done, status: 'in_progress', output: [], usage: null } });
    output.forEach((it, output_index) => {
      if (it.type === 'message') {
        ev('response.output_item.added', { output_index, item: { ...it, status: 'in_progress', content: [] } });
        ev('response.content_part.added', { output_index, item_id: it.id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        ev('response.output_text.delta', { output_index, item_id: it.id, content_index: 0, delta: it.content[0].text });
        ev('response.output_text.done', { output_index, item_id: it.id, content_index: 0, text: it.content[0].text });
        ev('response.content_part.done', { output_index, item_id: it.id, content_index: 0, part: it.content[0] });
      } else if (it.type === 'function_call') {
        ev('response.output_item.added', { output_index, item: { ...it, status: 'in_progress', arguments: '' } });
        ev('response.function_call_arguments.delta', { output_index, item_id: it.id, delta: it.arguments });
        ev('response.function_call_arguments.done', { output_index, item_id: it.id, arguments: it.arguments });
      }
      ev('response.output_item.done', { output_index, item: it });
    });
    ev('response.completed', { response: done });
    res.end();
  }

  function json(res, status, obj) {
    const s = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s) });
    res.end(s);
  }

  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(port, host, () => {
      const p = server.address().port;
      resolve({
        url: `http://${host}:${p}/v1`,
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
// Reading what Codex sent.

// The text of an input item or content, flattened.
export function textOf(c) {
  if (c == null) return '';
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(textOf).join('\n');
  if (typeof c.text === 'string') return c.text;
  if (c.type === 'message') return textOf(c.content);
  if (c.type === 'function_call_output' || c.type === 'custom_tool_call_output') return textOf(c.output);
  if (c.type === 'function_call') return c.arguments ?? '';
  return '';
}

// The model calls (the Responses requests), in order.
export const turns = (model) => model.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/responses'));

// The tools a request offers, flattened: [{ name, namespace }] (a
// namespace tool's own tools come with its name).
export function toolsOf(body) {
  const out = [];
  for (const t of body?.tools ?? []) {
    if (t.type === 'namespace' || Array.isArray(t.tools)) for (const s of t.tools ?? []) out.push({ name: s.name, namespace: t.name });
    else out.push({ name: t.name ?? t.type, namespace: null });
  }
  return out;
}
