// model_gemini.mjs: a scripted model endpoint on loopback that speaks the
// Gemini API (generativelanguage v1beta) well enough for the REAL Gemini
// CLI to run against it offline (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY).
// The model is scripted, the harness real: a script decides each answer
// from the conversation it is sent, and every request is recorded (to a
// JSONL file and in memory), as model.mjs does for Claude Code.
//
//   POST /v1beta/models/M:streamGenerateContent?alt=sse   SSE, one
//        `data: GenerateContentResponse` event with the whole answer
//   POST /v1beta/models/M:generateContent                 JSON
//   POST /v1beta/models/M:countTokens                     {totalTokens}
//   POST /v1beta/models/M:embedContent / batchEmbedContents  zeros
//   anything else                                         logged, 404
//
// startModel({ log, script }) -> { url, port, requests, close, onRequest }
// script(body, req) returns (or resolves to) { parts: [parts] } where a
// part is {text} or {functionCall: {name, args}}; or a string (one text
// part).  req.model is the model named in the path, req.method the
// Gemini method (streamGenerateContent, generateContent...).
import http from 'node:http';
import fs from 'node:fs';

let seq = 0;
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
      const m = /^\/v1(?:beta|alpha)?\/models\/([^:/]+):(\w+)$/.exec(url.pathname);
      const r = {
        n: seq++,
        t: Date.now(),
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers: req.headers,
        model: m?.[1],
        call: m?.[2],
        body,
      };
      if (req.method === 'POST' && m && (m[2] === 'streamGenerateContent' || m[2] === 'generateContent')) {
        record(r);
        let answer;
        try {
          answer = await script(body, r);
        } catch (e) {
          answer = { parts: [{ text: `script error: ${e.stack}` }] };
        }
        if (typeof answer === 'string') answer = { parts: [{ text: answer }] };
        answer.parts = answer.parts.map((p) => (p.functionCall ? { functionCall: { args: {}, ...p.functionCall } } : p));
        r.answer = answer;
        r.answered = Date.now();
        if (logFd !== null) fs.writeSync(logFd, JSON.stringify({ n: r.n, answered: r.answered, answer }) + '\n');
        const out = response(body, r.model, answer);
        if (m[2] === 'streamGenerateContent') {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          res.write(`data: ${JSON.stringify(out)}\r\n\r\n`);
          res.end();
        } else json(res, 200, out);
        return;
      }
      if (req.method === 'POST' && m && m[2] === 'countTokens') {
        record(r);
        json(res, 200, { totalTokens: tokens(body?.contents ?? body?.generateContentRequest?.contents) });
        return;
      }
      if (req.method === 'POST' && m && (m[2] === 'embedContent' || m[2] === 'batchEmbedContents')) {
        record(r);
        const one = { values: new Array(8).fill(0) };
        json(res, 200, m[2] === 'embedContent' ? { embedding: one } : { embeddings: (body?.requests ?? [0]).map(() => one) });
        return;
      }
      r.unknown = true;
      record(r);
      json(res, 404, { error: { code: 404, message: `scripted model: no ${req.method} ${url.pathname}`, status: 'NOT_FOUND' } });
    });
  });

  function response(body, model, answer) {
    const prompt = tokens(body?.contents);
    const out = tokens(answer.parts);
    return {
      candidates: [{ content: { role: 'model', parts: answer.parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: out, totalTokenCount: prompt + out },
      modelVersion: model ?? 'gemini-scripted',
      responseId: `resp-${seq}`,
    };
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
// Reading what Gemini CLI sent.

// Is this a generate request (the conversation)?
export const isGenerate = (r) => r.call === 'streamGenerateContent' || r.call === 'generateContent';

// The names of the functions a request offers.
export const toolNames = (body) => (body?.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));

// The main conversation's requests: the ones that offer tools (side
// requests, the next-speaker check and the like, offer none).
export const isMain = (body) => toolNames(body).length > 0;

// The text of a part: text, a function response's response (JSON), a
// function call's args (JSON).
export function textOf(p) {
  if (p == null) return '';
  if (typeof p === 'string') return p;
  if (Array.isArray(p)) return p.map(textOf).join('\n');
  if (typeof p.text === 'string') return p.text;
  if (p.functionResponse) return JSON.stringify(p.functionResponse.response ?? {});
  if (p.functionCall) return JSON.stringify(p.functionCall.args ?? {});
  return '';
}

// The kind of a part: text, functionCall, functionResponse, other.
export const kindOf = (p) => (p?.functionResponse ? 'functionResponse' : p?.functionCall ? 'functionCall' : typeof p?.text === 'string' ? 'text' : 'other');

// Every part of a request's contents with its place: { m, b, role, part }.
export function parts(body) {
  const out = [];
  (body?.contents ?? []).forEach((c, m) => (c.parts ?? []).forEach((part, b) => out.push({ m, b, role: c.role, part })));
  return out;
}

export const last = (body) => body?.contents?.[body.contents.length - 1];

// A value that fits a JSON schema (the side requests that ask for JSON:
// the router's complexity score, the next-speaker check...): the first
// enum value, 1 for numbers, the property's name for strings.  over:
// values by property name.
export function fillSchema(s, over = {}, name = '') {
  if (!s) return {};
  if (name in over) return over[name];
  const type = String(s.type ?? (s.properties ? 'object' : 'string')).toLowerCase();
  if (s.enum?.length) return s.enum[0];
  if (type === 'object') return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, fillSchema(v, over, k)]));
  if (type === 'array') return [];
  if (type === 'integer' || type === 'number') return 1;
  if (type === 'boolean') return false;
  return name || 'ok';
}

// The schema a side request asks its answer to follow, or null.
export const jsonSchemaOf = (body) => {
  const g = body?.generationConfig ?? {};
  return g.responseMimeType === 'application/json' ? g.responseJsonSchema ?? g.responseSchema ?? {} : null;
};
