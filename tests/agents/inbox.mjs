// inbox.mjs: posts a message into a Claude Code session's inbox socket
// (CLAUDE_CODE_MESSAGING_SOCKET, a Unix socket; CLAUDE_CODE_MESSAGING_TOKEN
// authenticates), as another session, or papo mcp, would:
//
//   {"type":"auth","token":"..."}\n
//   {"type":"user","message":{"role":"user","content":"..."}}\n
//
// and prints what the socket answers (a line, or nothing) as JSON lines
// on stdout.  A probe for FINDINGS.md and a helper for the tests.
//
//   node inbox.mjs SOCKET TOKEN TEXT [WAIT_MS]
import net from 'node:net';
import { fileURLToPath } from 'node:url';

// Resolves to { answers: [lines the socket wrote], closed: bool } after
// waitMs (or when the socket closes).
export function postInbox(socket, token, text, { waitMs = 500, raw } = {}) {
  return new Promise((resolve, reject) => {
    const answers = [];
    let buf = '';
    let done = false;
    const c = net.createConnection(socket);
    const finish = (closed) => {
      if (done) return;
      done = true;
      if (buf) answers.push(buf);
      c.destroy();
      resolve({ answers, closed });
    };
    c.on('connect', () => {
      const lines = raw ?? [
        { type: 'auth', token },
        { type: 'user', message: { role: 'user', content: text } },
      ];
      c.write(lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l)) + '\n').join(''));
      setTimeout(() => finish(false), waitMs);
    });
    c.on('data', (d) => {
      buf += d.toString('utf8');
      let i;
      while ((i = buf.indexOf('\n')) !== -1) {
        answers.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    c.on('end', () => finish(true));
    c.on('error', (e) => (done ? null : reject(e)));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [socket, token, text, waitMs] = process.argv.slice(2);
  const r = await postInbox(socket, token, text, { waitMs: Number(waitMs ?? 500) });
  console.log(JSON.stringify(r));
}
