/*
 * net.js: the network view (#net, an SVG built with DOM calls): this
 * member in the middle, the others around it, a line for each path
 * (paths.js names them), and #net-count's summary.  It holds no state:
 * status.js passes this member and the others each time, and the view
 * is drawn again only when what it shows changed.
 */
import { ui } from './dom.js';
import { ago, hue, initial, rttText, shortName } from './format.js';
import { NAT_TEXT, OWN_PATHS, hopOf, isOwnPath, myAddress, netOrder, pathHelp, pathOf, viaOf } from './paths.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const NET_W = 260;                 // the viewBox of #net in index.html
const NET_H = 190;

function svgEl(tag, cls, attrs) {
  const e = document.createElementNS(SVG_NS, tag);
  if (cls) e.setAttribute('class', cls);
  for (const k of Object.keys(attrs || {})) e.setAttribute(k, String(attrs[k]));
  return e;
}

function svgText(cls, attrs, text) {
  const t = svgEl('text', cls, attrs);
  t.textContent = text;
  return t;
}

// Its first child, so that it names the element for assistive technology.
function svgTitle(text) {
  const t = document.createElementNS(SVG_NS, 'title');
  t.textContent = text;
  return t;
}

const fx = (v) => v.toFixed(1);

function netNode(m, x, y, r, opts) {
  const g = svgEl('g', 'net-node ' + (opts.me ? 'me' : hue(m.name)) +
    (opts.dim ? ' dim' : ''));
  g.dataset.id = m.id || '';
  g.dataset.name = m.name || '';
  g.dataset.path = opts.me ? 'self' : pathOf(m) || '';
  g.append(svgTitle(opts.title),
    svgEl('circle', 'net-dot', { cx: fx(x), cy: fx(y), r }),
    svgText('net-initial', { x: fx(x), y: fx(y + r * 0.36), 'font-size': fx(r * 1.05) },
      initial(m.name)));
  if (opts.label) g.append(svgText('net-name', { x: fx(x), y: fx(y + r + 10) }, opts.label));
  return g;
}

// kind: 'direct', 'lan', 'punched' (our own connection: a solid line
// from the middle, labelled), 'relay' (our own connection through the
// TURN relay: the same, dashed), 'via' (a dashed curve from the member to
// the one it is reached through) or 'others' (a dotted line to the
// middle: reached over several hops).
function netEdge(kind, from, to, a, b, c, title, label) {
  const g = svgEl('g', 'net-edge ' + (isOwnPath(kind) ? 'own' : kind));
  g.dataset.kind = kind;
  g.dataset.from = from;
  g.dataset.to = to;
  g.append(svgTitle(title));
  if (kind === 'via') {
    // Bowed away from the middle, so it is not taken for a link of ours.
    const mx = (a.x + b.x) / 2;
    const my = (a.y + b.y) / 2;
    let ox = mx - c.x;
    let oy = my - c.y;
    const len = Math.hypot(ox, oy);
    if (len < 1) {
      ox = a.y - b.y;
      oy = b.x - a.x;
    }
    const k = len < 1 ? 30 / Math.hypot(ox, oy) : 0.35;
    g.append(svgEl('path', 'net-line', {
      d: 'M' + fx(a.x) + ' ' + fx(a.y) + ' Q' + fx(mx + ox * k) + ' ' + fx(my + oy * k) +
        ' ' + fx(b.x) + ' ' + fx(b.y) }));
  } else {
    g.append(svgEl('line', 'net-line', { x1: fx(a.x), y1: fx(a.y), x2: fx(b.x), y2: fx(b.y) }));
  }
  if (label) {
    // Above the middle of a flat line; else 60 % of the way out, on
    // its outer side, clear of the labels of lines beside it.
    const dx = b.x - a.x;
    const flat = Math.abs(b.y - a.y) < Math.abs(dx) * 0.4;
    const x = a.x + dx * (flat ? 0.5 : 0.6);
    const y = a.y + (b.y - a.y) * (flat ? 0.5 : 0.6);
    g.append(svgText('net-label', flat ?
      { x: fx(x), y: fx(y - 5), 'text-anchor': 'middle' } :
      { x: fx(x + (dx < -1 ? -5 : 5)), y: fx(y + 3), 'text-anchor': dx < -1 ? 'end' : 'start' },
    label));
  }
  return g;
}

// Draws me (status's) and the other members.
export function renderNet(me, members) {
  const others = [...members].sort((a, b) =>
    String(a.name).localeCompare(String(b.name)) || String(a.id).localeCompare(String(b.id)));

  // Drawn again only when what it shows changed: a tooltip being read
  // is not pulled away every few seconds.
  const sig = JSON.stringify([me.id, me.name, me.nat, myAddress(me),
    others.map((m) => [m.id, m.name, pathOf(m), rttText(m.rtt_ms), m.protocol || 0,
      !m.online && m.last_seen ? ago(m.last_seen) : ''])]);
  if (ui.net.dataset.sig === sig) return;
  ui.net.dataset.sig = sig;

  const hops = new Map(others.map((m) => [m, hopOf(m, others)]));
  const ring = netOrder(others, hops);
  const n = ring.length;
  const c = { x: NET_W / 2, y: NET_H / 2 - 4 };
  const r = n <= 8 ? 11 : n <= 16 ? 8 : 5;
  const pos = new Map();
  ring.forEach((m, i) => {
    const a = 2 * Math.PI * i / n;   // the first on the right, then clockwise
    pos.set(m, { x: c.x + 98 * Math.cos(a), y: c.y + 64 * Math.sin(a) });
  });

  const edges = [];
  const nodes = [];
  let own = 0;
  let turned = 0;
  let relayed = 0;
  let unreachable = 0;
  for (const m of ring) {
    const p = pathOf(m);
    const at = pos.get(m);
    const hop = hops.get(m);
    if (isOwnPath(p)) {
      if (p === 'relay') turned++;
      else own++;
      const rtt = rttText(m.rtt_ms);
      edges.push(netEdge(p, me.id, m.id, c, at, c, me.name + ' to ' + m.name + ': ' + pathHelp(m),
        n <= 8 ? (p === 'punched' ? 'punched' : OWN_PATHS[p]) + (rtt ? ' ' + rtt : '') : ''));
    } else if (hop) {
      relayed++;
      edges.push(netEdge('via', m.id, hop.id, at, pos.get(hop), c,
        m.name + ' is reached through ' + hop.name, ''));
    } else if (viaOf(p) !== null) {
      // Over several hops, or through a member this page does not know.
      relayed++;
      const via = viaOf(p);
      edges.push(netEdge('others', m.id, me.id, at, c, c,
        m.name + ' is reached through ' + (via === 'others' ? 'other members' : via), ''));
    } else if (p === 'none') {
      unreachable++;
    }
    const seen = !m.online && m.last_seen ? ', last seen ' + ago(m.last_seen) : '';
    nodes.push(netNode(m, at.x, at.y, r, {
      dim: p === 'none',
      title: m.name + ': ' + pathHelp(m) + seen,
      label: n <= 16 ? shortName(m.name, 10) : '',
    }));
  }
  const addr = myAddress(me);
  const nat = NAT_TEXT[me.nat] || '';
  nodes.push(netNode(me, c.x, c.y, r + 3, {
    me: true,
    title: me.name + ' (you)' + (nat ? ', ' + nat : '') + (addr ? ', reached at ' + addr : ''),
  }));

  const title = ui.net.querySelector('title');
  const edgeLayer = svgEl('g', 'net-edges');
  const nodeLayer = svgEl('g', 'net-nodes');
  edgeLayer.append(...edges);
  nodeLayer.append(...nodes);
  ui.net.replaceChildren(title, edgeLayer, nodeLayer);

  const parts = [];
  if (own) parts.push(own + ' direct');
  if (turned) parts.push(turned + ' through the relay');
  if (relayed) parts.push(relayed + ' via others');
  if (unreachable) parts.push(unreachable + ' unreachable');
  ui.netCount.textContent = n ? parts.join(' · ') : 'nobody else yet';
}
