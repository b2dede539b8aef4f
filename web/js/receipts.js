/*
 * receipts.js: what became of this member's messages: the send's
 * answer (queued, delivered) and the receipts other members sent
 * (delivered to, read by), from history entries, events and sends.  It
 * owns both maps; pure, so tests/web/receipts.test.mjs runs it in node.
 */

const receipts = new Map();        // message id -> { delivered: Set, read: Set }
const sendState = new Map();       // message id -> send answer

function receiptOf(id) {
  let r = receipts.get(id);
  if (!r) {
    r = { delivered: new Set(), read: new Set() };
    receipts.set(id, r);
  }
  return r;
}

// History entries may carry their delivery state; take what is there.
export function absorb(m) {
  if (!m.id) return;
  const add = (name, read) => (read ? receiptOf(m.id).read : receiptOf(m.id).delivered).add(name);
  for (const n of m.delivered_to || []) add(n, false);
  for (const n of m.read_by || []) add(n, true);
  for (const x of m.receipts || []) if (x && x.by) add(x.by, x.state === 'read');
  if (m.state && !sendState.has(m.id))
    sendState.set(m.id, { state: m.state, waiting_for: m.waiting_for || [] });
}

// A receipt event: { id, by, state: 'delivered' or 'read' }.
export function receipt(r) {
  const x = receiptOf(r.id);
  (r.state === 'read' ? x.read : x.delivered).add(r.by || r.by_id || '?');
}

// The answer of /send for message r.id.
export function sent(r) {
  sendState.set(r.id, r);
  const x = receiptOf(r.id);
  for (const n of r.delivered_to || []) x.delivered.add(n);
}

// What an own message's line says: { cls, text }, or null for nothing.
export function deliveryText(m) {
  if (m.sending) return { cls: 'sending', text: 'sending…' };
  const r = receipts.get(m.id);
  const s = sendState.get(m.id);
  const parts = [];
  let cls = 'queued';
  if (r && r.read.size) {
    parts.push('read by ' + [...r.read].join(', '));
    cls = 'read';
  }
  const deliveredOnly = r ? [...r.delivered].filter((n) => !r.read.has(n)) : [];
  if (deliveredOnly.length) {
    parts.push('delivered to ' + deliveredOnly.join(', '));
    if (cls !== 'read') cls = 'delivered';
  }
  if (!parts.length && s) {
    if (s.state === 'delivered') {
      parts.push('delivered');
      cls = 'delivered';
    } else if (s.state === 'queued') {
      const w = (s.waiting_for || []).join(', ');
      parts.push(w ? 'queued for ' + w : 'queued');
    }
  }
  if (!parts.length) return null;
  return { cls, text: parts.join(' · ') };
}

// Another room is shown.
export function clear() {
  receipts.clear();
  sendState.clear();
}
