/*
 * paths.js: how this member reaches each of the others
 * (docs/REACHABILITY.md), in words: the member list's "direct · 1.2
 * ms", the tooltips' sentences, and which member a "via NAME" member
 * is reached through (net.js draws it).  Pure, so
 * tests/web/paths.test.mjs runs it in node.
 */
import { rttText } from './format.js';

export const NAT_TEXT = {
  open: 'no NAT',
  cone: 'cone NAT',
  symmetric: 'symmetric NAT',
  unknown: 'NAT not known yet',
};
export const NAT_HELP = {
  open: 'Other members see this daemon at one of its own addresses: no NAT is in the way.',
  cone: 'Behind a NAT that keeps one public port for every peer: members behind other NATs can reach it by hole punching.',
  symmetric: 'Behind a NAT that picks a new port for each peer: members behind NATs reach it only through others.',
  unknown: 'Fewer than two members have said where they see this daemon.',
};
export const OWN_PATHS = { direct: 'direct', lan: 'LAN', punched: 'hole-punched', relay: 'relay' };

// The address others reach this member at: the one they see, else its own.
export function myAddress(me) {
  if (me.observed) return me.observed;
  return Array.isArray(me.addrs) && me.addrs.length ? me.addrs[0] : '';
}

// A member's path: as status says it (or a daemon older than paths:
// guessed from 'direct'); null when not known (online again, but status
// not loaded since).
export function pathOf(m) {
  if (typeof m.path === 'string' && m.path) return m.path;
  if (!m.online) return 'none';
  return m.path === undefined && m.direct ? 'direct' : null;
}

export const isOwnPath = (p) => Object.prototype.hasOwnProperty.call(OWN_PATHS, p);

// NAME of 'via NAME' ('others' for 'via others'), else null.
export function viaOf(p) {
  return typeof p === 'string' && p.startsWith('via ') ? p.slice(4) : null;
}

// What the member list says of a member's path: "direct · 1.2 ms",
// "via bo", "unreachable"; '' when not known.
export function pathText(m) {
  const p = pathOf(m);
  if (isOwnPath(p)) {
    const rtt = rttText(m.rtt_ms);
    return OWN_PATHS[p] + (rtt ? ' · ' + rtt : '');
  }
  if (p === 'none') return 'unreachable';
  const via = viaOf(p);
  if (via === 'others') return 'via other members';
  if (via !== null) return 'via ' + via;
  return p ? String(p) : '';
}

// The same in a sentence, for tooltips and the network view's titles.
export function pathHelp(m) {
  const p = pathOf(m);
  if (isOwnPath(p)) {
    const what = { direct: 'our own connection',
      lan: 'our own connection, on a local network',
      punched: 'our own connection, made by hole punching',
      relay: 'our own connection, through the TURN relay (sealed end to end)' }[p];
    const rtt = rttText(m.rtt_ms);
    return what + (m.protocol ? ' (protocol ' + m.protocol + ')' : '') +
      (rtt ? ', round trip ' + rtt : '');
  }
  if (p === 'none') return 'unreachable now: messages to it wait until a path appears';
  const via = viaOf(p);
  if (via === 'others') return 'reached through other members, over several hops';
  if (via !== null) return 'no connection of ours: reached through ' + via;
  return 'path not known yet';
}

// The member a 'via NAME' member is reached through (one we reach on
// our own, if several have that name), or null.
export function hopOf(m, others) {
  const via = viaOf(pathOf(m));
  if (via === null || via === 'others') return null;
  const named = others.filter((o) => o !== m && o.name === via);
  return named.find((o) => isOwnPath(pathOf(o))) || named[0] || null;
}

// Around the circle by name, each member followed by those reached
// through it: a dashed curve joins neighbours.
export function netOrder(others, hops) {
  const order = [];
  const placed = new Set();
  const place = (m) => {
    if (placed.has(m)) return;
    placed.add(m);
    order.push(m);
    for (const d of others) if (hops.get(d) === m) place(d);
  };
  for (const m of others) if (!hops.get(m)) place(m);
  for (const m of others) place(m);   // a loop of vias, should one be told
  return order;
}
