// model_chat.mjs: a scripted model endpoint on loopback that speaks the
// OpenAI Chat Completions API well enough for real agent CLIs (GitHub
// Copilot CLI, Qwen Code, opencode through @ai-sdk/openai-compatible) to
// run against it offline.  As in model.mjs: the model is scripted, the
// harness real; a script decides each answer from the conversation it is
// sent, and every request is recorded (to a JSONL file and in memory).
//
//   POST /v1/chat/completions   (and /chat/completions, and any path
//                               ending in /chat/completions)
//                               stream: true -> SSE chunks
//                               (chat.completion.chunk: delta.role,
//                               delta.content, delta.tool_calls, then
//                               finish_reason; a usage chunk when
//                               stream_options.include_usage; data: [DONE]);
//                               else one chat.completion JSON
//   GET  /v1/models, /models    the models list (opts.models, or the
//                               model names seen, or 'scripted')
//   GET  /v1/models/ID          that model
//   anything else               logged (r.unknown), 404 with an error JSON
//
// startChatModel({ log, script, models }) ->
//   { url (base, no /v1), v1 (url + '/v1'), port, requests, onRequest, close }
// script(body, r) returns (or resolves to) a string (text, finish 'stop')
// or { content?: string, tool_calls?: [{ name, arguments (object or JSON
// string), id? }], finish_reason? , reasoning?: string } ; or
// { status, error } for an HTTP error answer.
import http from 'node:http';
import fs from 'node:fs';
import crypto from 'node:crypto';

let seq = 0;
const id = (p) => `${p}-${crypto.randomBytes(12).toString('hex')}`;
const tokens = (x) => Math.max(1, Math.ceil(JSON.stringify(x ?? '').length / 4));

const isChat = (p) => p === '/v1/chat/completions' || p === '/chat/completions' || p.endsWith('/chat/completions');

export function startChatModel({ log, script, models, host = '127.0.0.1', port = 0 } = {}) {
  const requests = [];
  const listeners = new Set();
  const seenModels = new Set();
  const logFd = log ? fs.openSync(log, 'a') : null;
  const write = (o) => {
    if (logFd !== null) fs.writeSync(logFd, JSON.stringify(o) + '\n');
  };
  const record = (r) => {
    requests.push(r);
    write(r);
    for (const f of listeners) f(r);
  };
  const modelList = () => {
    const names = models ?? (seenModels.size ? [...seenModels] : ['scripted']);
    return names.map((n) => ({ id: n, object: 'model', created: 1700000000, owned_by: 'scripted' }));
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
      const r = { n: seq++, t: Date.now(), method: req.method, path: url.pathname, query: url.search, headers: req.headers, body };
      if (req.method === 'POST' && isChat(url.pathname)) {
        r.chat = true;
        if (body?.model) seenModels.add(body.model);
        record(r);
        let answer;
        try {
          answer = await script(body, r);
        } catch (e) {
          answer = { content: `script error: ${e.stack}` };
        }
        if (answer == null) answer = '';
        if (typeof answer === 'string') answer = { content: answer };
        if (answer.error) {
          r.answer = answer;
          r.answered = Date.now();
          write({ n: r.n, answered: r.answered, answer });
          return json(res, answer.status ?? 500, { error: { message: String(answer.error), type: 'server_error', code: null } });
        }
        const calls = (answer.tool_calls ?? []).map((c) => ({
          id: c.id ?? id('call'),
          type: 'function',
          function: { name: c.name ?? c.function?.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? c.function?.arguments ?? {}) },
        }));
        const a = { content: answer.content ?? (calls.length ? null : ''), tool_calls: calls, reasoning: answer.reasoning, finish_reason: answer.finish_reason ?? (calls.length ? 'tool_calls' : 'stop') };
        r.answer = a;
        r.answered = Date.now();
        write({ n: r.n, answered: r.answered, answer: a });
        if (body?.stream) stream(res, body, a);
        else json(res, 200, completion(body, a));
        return;
      }
      if (req.method === 'GET' && (url.pathname === '/v1/models' || url.pathname === '/models')) {
        record(r);
        return json(res, 200, { object: 'list', data: modelList() });
      }
      const m = /^\/(?:v1\/)?models\/(.+)$/.exec(url.pathname);
      if (req.method === 'GET' && m) {
        record(r);
        return json(res, 200, { id: decodeURIComponent(m[1]), object: 'model', created: 1700000000, owned_by: 'scripted' });
      }
      r.unknown = true;
      record(r);
      json(res, 404, { error: { message: `scripted model: no ${req.method} ${url.pathname}`, type: 'not_found', code: null } });
    });
  });

  function usage(body, a) {
    const p = tokens(body?.messages) + tokens(body?.tools);
    const c = tokens(a.content) + tokens(a.tool_calls);
    return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };
  }

  function completion(body, a) {
    const message = { role: 'assistant', content: a.content };
    if (a.tool_calls.length) message.tool_calls = a.tool_calls;
    if (a.reasoning) message.reasoning_content = a.reasoning;
    return {
      id: id('chatcmpl'),
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body?.model ?? 'scripted',
      choices: [{ index: 0, message, finish_reason: a.finish_reason, logprobs: null }],
      usage: usage(body, a),
    };
  }

  function stream(res, body, a) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': id('req') });
    const cid = id('chatcmpl');
    const created = Math.floor(Date.now() / 1000);
    const model = body?.model ?? 'scripted';
    const chunk = (choices, extra = {}) =>
      res.write(`data: ${JSON.stringify({ id: cid, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`);
    const delta = (d, finish = null) => chunk([{ index: 0, delta: d, finish_reason: finish, logprobs: null }]);
    delta({ role: 'assistant', content: '' });
    if (a.reasoning) delta({ reasoning_content: a.reasoning });
    if (a.content) delta({ content: a.content });
    a.tool_calls.forEach((c, index) => {
      delta({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
      delta({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] });
    });
    delta({}, a.finish_reason);
    if (body?.stream_options?.include_usage) chunk([], { usage: usage(body, a) });
    res.write('data: [DONE]\n\n');
    res.end();
  }

  function json(res, status, obj) {
    const s = JSON.stringify(obj);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(s), 'x-request-id': id('req') });
    res.end(s);
  }

  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(port, host, () => {
      const p = server.address().port;
      const base = `http://${host}:${p}`;
      resolve({
        url: base,
        v1: `${base}/v1`,
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
// Reading what a Chat Completions client sent.

// The text of a message's content (a string, or parts [{type:'text', text}]).
export function textOf(c) {
  if (c == null) return '';
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(textOf).join('\n');
  if (c.type === 'text' || c.type === 'input_text') return c.text ?? '';
  return '';
}

// The chat requests (POSTs to .../chat/completions), in order.
export const chats = (requests) => requests.filter((r) => r.chat);

// The function names a request offers the model.
export const toolNames = (body) => (body?.tools ?? []).map((t) => t.function?.name ?? t.name).filter(Boolean);

// A main request: one that offers tools (side requests, titles and the
// like, offer none).
export const isMain = (body) => Array.isArray(body?.tools) && body.tools.length > 0;

export const last = (body) => body?.messages?.[body.messages.length - 1];

// The tool calls of the assistant messages of a request's conversation:
// [{ m, id, name, args (parsed, or the raw string) }].
export function toolCalls(body) {
  const out = [];
  (body?.messages ?? []).forEach((msg, m) => {
    if (msg.role !== 'assistant') return;
    for (const c of msg.tool_calls ?? []) {
      let args = c.function?.arguments;
      try {
        args = JSON.parse(args);
      } catch {
        // raw
      }
      out.push({ m, id: c.id, name: c.function?.name, args });
    }
  });
  return out;
}

// The messages (role user or tool) after the last assistant message.
export function newMessages(body) {
  const msgs = body?.messages ?? [];
  const out = [];
  for (let m = msgs.length - 1; m >= 0 && msgs[m].role !== 'assistant'; m--) out.unshift({ m, msg: msgs[m] });
  return out;
}

// Every message of the recorded chat requests whose text holds needle,
// each counted once by its place and text (clients resend the whole
// conversation on every turn): [{ m, role, text, n (first request), t }].
// roles: only these roles (default user and tool).
export function messagesWith(requests, needle, { roles = ['user', 'tool'], main = true } = {}) {
  const seen = new Map();
  for (const r of chats(requests)) {
    if (main && !isMain(r.body)) continue;
    (r.body?.messages ?? []).forEach((msg, m) => {
      if (!roles.includes(msg.role)) return;
      const text = textOf(msg.content);
      if (!text.includes(needle)) return;
      const k = `${m}/${msg.role}/${text}`;
      if (!seen.has(k)) seen.set(k, { m, role: msg.role, text, n: r.n, t: r.t, tool_call_id: msg.tool_call_id });
    });
  }
  return [...seen.values()];
}

// How many times needle reached the model: its occurrences over the
// distinct messages that hold it.
export function timesSeen(requests, needle, opts) {
  return messagesWith(requests, needle, opts).reduce((n, x) => n + x.text.split(needle).length - 1, 0);
}

// The first chat request after request number afterN whose user or tool
// messages hold needle (resolves when it comes).
export function requestWith(model, needle, afterN = -1, { roles = ['user', 'tool'] } = {}) {
  const has = (r) => r.chat && r.n > afterN && isMain(r.body) &&
    (r.body?.messages ?? []).some((msg) => roles.includes(msg.role) && textOf(msg.content).includes(needle));
  const found = model.requests.find(has);
  if (found) return Promise.resolve(found);
  return new Promise((resolve) => {
    const off = model.onRequest((r) => {
      if (has(r)) {
        off();
        resolve(r);
      }
    });
  });
}

// ---------------------------------------------------------------------------
// An agent's script for a Chat Completions harness (copilot.mjs, qwen.mjs):
// what the scripted model does, decided from the conversation it is sent.
//
//   tools: { wait, send } the names the harness gives papo's tools
//     (Copilot 'papo-wait', Qwen 'mcp__papo__wait'); search, call: a
//     harness's deferred-tool bridge (Qwen's tool_search / tool_call),
//     used when wait is not among the offered tools;
//   main(body): is it the main conversation's request (else 'ok');
//   waits: calls of wait at the start, with waitArgs (an object, or
//     a function of k, the calls of wait so far); beforeWait(k) is awaited before the
//     k-th call is answered, duringWait(k) runs (not awaited) once it is;
//   sendText: after the waits, send it once (the agent answers bo);
//   new input (a user message after an assistant one: a wake, a person's
//     prompt): await onInput(text), then call wait (inputTools);
//   else end the turn ('done'), after awaiting beforeEnd(k) (k: ends so
//   far); agent.idle(n) resolves at the n-th end (from 0).
export function chatAgent({ tools, main = isMain, waits = 0, waitArgs = { timeout_s: 5 }, beforeWait = async () => {}, duringWait = () => {}, sendText = null, onInput = async () => {}, inputTools = ['wait'], beforeEnd = async () => {} }) {
  const ends = [];
  let endWaiters = [];
  const seen = new Set();
  const pending = [];
  const agent = {
    ends,
    inputs: [], // { n, t, text } of each new input acted on
    idle(after = ends.length) {
      if (ends.length > after) return Promise.resolve(ends[after]);
      return new Promise((r) => endWaiters.push({ after, r }));
    },
    script: async (body, req) => {
      if (!main(body)) return 'ok';
      const names = new Set(toolNames(body));
      const calls = toolCalls(body);
      const called = (n) => calls.filter((c) => c.name === n || (c.name === tools.call && c.args?.name === n));
      const use = (n, args) => (names.has(n) || !tools.call || !names.has(tools.call)
        ? { name: n, arguments: args }
        : { name: tools.call, arguments: { name: n, arguments: args } });
      const wargs = (k) => (typeof waitArgs === 'function' ? waitArgs(k) : waitArgs);
      const argsOf = (k) => (k === 'wait' ? wargs(called(tools.wait).length) : k === 'send' ? { text: sendText } : {});
      const end = () => {
        const e = { n: req.n, t: Date.now() };
        ends.push(e);
        const w = endWaiters;
        endWaiters = [];
        for (const x of w) if (ends.length > x.after) x.r(ends[x.after]);
        else endWaiters.push(x);
        return 'done';
      };
      if (tools.search && !names.has(tools.wait) && names.has(tools.search) && !calls.some((c) => c.name === tools.search))
        return { tool_calls: [{ name: tools.search, arguments: { query: `select:${tools.wait},${tools.send}` } }] };
      if (pending.length) {
        const k = pending.shift();
        return { tool_calls: [use(tools[k], argsOf(k))] };
      }
      const waited = called(tools.wait).length;
      if (waited < waits) {
        await beforeWait(waited);
        setImmediate(() => duringWait(waited));
        return { content: `waiting (${waited + 1})`, tool_calls: [use(tools.wait, wargs(waited))] };
      }
      if (sendText && called(tools.send).length === 0)
        return { tool_calls: [use(tools.send, { text: sendText })] };
      const input = newInput(body);
      if (input && !seen.has(input.key)) {
        seen.add(input.key);
        agent.inputs.push({ n: req.n, t: req.t, text: input.text });
        await onInput(input.text);
        pending.push(...inputTools);
        const k = pending.shift();
        return { content: 'new input: looking', tool_calls: [use(tools[k], argsOf(k))] };
      }
      await beforeEnd(ends.length);
      return end();
    },
  };
  return agent;
}

// The text of the user messages after the last assistant message, when
// there is an assistant message before them: { key, text } or null.
export function newInput(body) {
  const msgs = body?.messages ?? [];
  let m = msgs.length - 1;
  const texts = [];
  for (; m >= 0 && msgs[m].role !== 'assistant'; m--) if (msgs[m].role === 'user') texts.unshift({ m, text: textOf(msgs[m].content) });
  if (m < 0 || !texts.length) return null;
  return { key: `${texts[0].m}/${texts[0].text}`, text: texts.map((x) => x.text).join('\n') };
}
