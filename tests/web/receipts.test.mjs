// receipts.test.mjs: web/js/receipts.js in node, no browser: what an
// own message's line says of it, from the send's answer, history's
// delivery fields and receipt events.
// Run: node --test tests/web/
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import * as receipts from '../../web/js/receipts.js';

beforeEach(() => receipts.clear());

test('sending, then the send\'s answer: queued for whom, or delivered', () => {
  assert.deepEqual(receipts.deliveryText({ sending: true }), { cls: 'sending', text: 'sending…' });
  assert.equal(receipts.deliveryText({ id: 'a' }), null, 'nothing known: nothing said');
  receipts.sent({ id: 'a', state: 'queued', waiting_for: ['bo', 'cy'], delivered_to: [] });
  assert.deepEqual(receipts.deliveryText({ id: 'a' }), { cls: 'queued', text: 'queued for bo, cy' });
  receipts.sent({ id: 'b', state: 'queued' });
  assert.deepEqual(receipts.deliveryText({ id: 'b' }), { cls: 'queued', text: 'queued' });
  receipts.sent({ id: 'c', state: 'delivered' });
  assert.deepEqual(receipts.deliveryText({ id: 'c' }), { cls: 'delivered', text: 'delivered' });
});

test('receipts name who has it and who read it, read winning', () => {
  receipts.sent({ id: 'a', state: 'queued', delivered_to: ['bo'] });
  assert.deepEqual(receipts.deliveryText({ id: 'a' }), { cls: 'delivered', text: 'delivered to bo' });
  receipts.receipt({ id: 'a', by: 'cy', state: 'delivered' });
  receipts.receipt({ id: 'a', by: 'bo', state: 'read' });
  assert.deepEqual(receipts.deliveryText({ id: 'a' }), { cls: 'read', text: 'read by bo · delivered to cy' });
  receipts.receipt({ id: 'a', by_id: 'C', state: 'read' });
  assert.match(receipts.deliveryText({ id: 'a' }).text, /^read by bo, C/);
});

test('history entries carry their state; the send\'s own answer is not overwritten', () => {
  receipts.absorb({ id: 'h', delivered_to: ['bo'], read_by: ['cy'],
    receipts: [{ by: 'dee', state: 'read' }, { by: 'ed', state: 'delivered' }, null, {}] });
  assert.deepEqual(receipts.deliveryText({ id: 'h' }),
    { cls: 'read', text: 'read by cy, dee · delivered to bo, ed' });
  receipts.sent({ id: 's', state: 'delivered' });
  receipts.absorb({ id: 's', state: 'queued', waiting_for: ['x'] });
  assert.equal(receipts.deliveryText({ id: 's' }).text, 'delivered');
  receipts.absorb({ text: 'no id' });
});

test('another room shown: nothing is known', () => {
  receipts.sent({ id: 'a', state: 'delivered' });
  receipts.clear();
  assert.equal(receipts.deliveryText({ id: 'a' }), null);
});
