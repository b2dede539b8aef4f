// paths.test.mjs: web/js/paths.js in node, no browser: how this member
// reaches each other one, in the member list's words and the network
// view's, and which member a "via NAME" is reached through.
// dashboard.test.mjs draws every kind in Chromium.
// Run: node --test tests/web/
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hopOf, myAddress, netOrder, pathHelp, pathOf, pathText } from '../../web/js/paths.js';

test('a member\'s path as status says it; from an older daemon, guessed', () => {
  assert.equal(pathOf({ online: true, path: 'lan' }), 'lan');
  assert.equal(pathOf({ online: false }), 'none');
  assert.equal(pathOf({ online: true, direct: true }), 'direct', 'a daemon older than paths');
  assert.equal(pathOf({ online: true, path: null, direct: true }), null, 'online again, status not loaded');
});

test('the list\'s words: own paths with their round trip, via, unreachable', () => {
  assert.equal(pathText({ online: true, path: 'direct', rtt_ms: 1.23 }), 'direct · 1.2 ms');
  assert.equal(pathText({ online: true, path: 'punched' }), 'hole-punched');
  assert.equal(pathText({ online: true, path: 'relay', rtt_ms: 40 }), 'relay · 40 ms');
  assert.equal(pathText({ online: true, path: 'via bo' }), 'via bo');
  assert.equal(pathText({ online: true, path: 'via others' }), 'via other members');
  assert.equal(pathText({ online: false }), 'unreachable');
  assert.equal(pathText({ online: true, path: null }), '');
});

test('the tooltips\' sentences', () => {
  assert.equal(pathHelp({ online: true, path: 'lan', protocol: 3, rtt_ms: 0.05 }),
    'our own connection, on a local network (protocol 3), round trip <0.1 ms');
  assert.match(pathHelp({ online: true, path: 'relay' }), /TURN relay/);
  assert.equal(pathHelp({ online: true, path: 'via bo' }), 'no connection of ours: reached through bo');
  assert.match(pathHelp({ online: false }), /^unreachable now/);
  assert.equal(pathHelp({ online: true, path: null }), 'path not known yet');
});

test('where others reach this member: the address they see, else its own', () => {
  assert.equal(myAddress({ observed: '1.2.3.4:5', addrs: ['10.0.0.1:5'] }), '1.2.3.4:5');
  assert.equal(myAddress({ addrs: ['10.0.0.1:5'] }), '10.0.0.1:5');
  assert.equal(myAddress({}), '');
});

test('a "via NAME" member hangs off the one of that name we reach ourselves', () => {
  const bo1 = { name: 'bo', online: true, path: 'via cy' };
  const bo2 = { name: 'bo', online: true, path: 'direct' };
  const dee = { name: 'dee', online: true, path: 'via bo' };
  const ed = { name: 'ed', online: true, path: 'via others' };
  const others = [bo1, bo2, dee, ed];
  assert.equal(hopOf(dee, others), bo2);
  assert.equal(hopOf(ed, others), null);
  assert.equal(hopOf(bo1, others), null, 'no member named cy');
  assert.equal(hopOf(bo2, others), null);
});

test('around the circle, each member followed by those reached through it; a loop still placed', () => {
  const a = { name: 'a' }, b = { name: 'b' }, c = { name: 'c' }, d = { name: 'd' }, e = { name: 'e' };
  const hops = new Map([[a, null], [b, null], [c, a], [d, e], [e, d]]);
  assert.deepEqual(netOrder([a, b, c, d, e], hops).map((m) => m.name), ['a', 'c', 'b', 'd', 'e']);
});
