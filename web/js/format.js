/*
 * format.js: how the page writes times, days, sizes and names (README,
 * "The dashboard": one format for a time everywhere).  Pure: no
 * document, no clock of its own when the caller passes `now`, so
 * tests/web/format.test.mjs runs it in node.
 */

const pad = (n) => String(n).padStart(2, '0');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// One format for a time everywhere on the page (the timeline, search,
// the thread): "13:29" today, "Dec 5 13:29" earlier this year, "Dec 5
// 2025 13:29" before.
export function clock(ts, now = new Date()) {
  const d = new Date(ts);
  const hm = pad(d.getHours()) + ':' + pad(d.getMinutes());
  if (d.toDateString() === now.toDateString()) return hm;
  return MONTHS[d.getMonth()] + ' ' + d.getDate() +
    (d.getFullYear() !== now.getFullYear() ? ' ' + d.getFullYear() : '') + ' ' + hm;
}

export function ago(ts, now = Date.now()) {
  const s = Math.max(0, Math.round((now - ts) / 1000));
  if (s < 60) return 'just now';
  const m = Math.round(s / 60);
  if (m < 60) return m + ' min ago';
  const h = Math.round(m / 60);
  if (h < 48) return h + ' h ago';
  return clock(ts, new Date(now));
}

// The label of a day separator: "Today", "Yesterday", else the date
// in the reader's language, with its year when not this one.
export function dayLabel(ts, now = new Date()) {
  const d = new Date(ts);
  const yesterday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - 1);
  if (d.toDateString() === now.toDateString()) return 'Today';
  if (d.toDateString() === yesterday.toDateString()) return 'Yesterday';
  const opts = { weekday: 'long', day: 'numeric', month: 'long' };
  if (d.getFullYear() !== now.getFullYear()) opts.year = 'numeric';
  return d.toLocaleDateString(undefined, opts);
}

// As the CLI writes sizes (cli_size): "512 bytes", "8.7 KiB", "5.0 MiB".
export function humanSize(n) {
  if (typeof n !== 'number' || !isFinite(n)) return '';
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + units[i];
}

// A round trip: "<0.1 ms", "1.2 ms", "42 ms"; '' when not a time.
export function rttText(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 0.1) return '<0.1 ms';
  return (ms < 10 ? ms.toFixed(1) : String(Math.round(ms))) + ' ms';
}

// A stable colour class for a name, so authors are told apart at a glance.
export function hue(name) {
  let h = 0;
  for (const c of String(name)) h = (h * 31 + c.codePointAt(0)) >>> 0;
  return 'hue' + (h % 8);
}

// Text on one line, cut to n characters with an ellipsis.
export function snippet(text, n) {
  const t = String(text).replace(/\s+/g, ' ').trim();
  return t.length > n ? t.slice(0, n - 1) + '…' : t;
}

// A name cut to n characters (not UTF-16 units), for the network view.
export function shortName(name, n) {
  const cs = [...String(name)];
  return cs.length > n ? cs.slice(0, n - 1).join('') + '…' : cs.join('');
}

export function initial(name) {
  const c = [...String(name).trim()][0];
  return c ? c.toUpperCase() : '?';
}
