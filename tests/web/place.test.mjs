// place.test.mjs: web/js/place.js in node, no browser, with a stand-in
// scroller: the view pinned to the newest message, unpinned by the
// reader scrolling up (even before the scroll's event came), and the
// messages of others counted while scrolled up, under a "New messages"
// line.  dashboard_reader.test.mjs and dashboard_reading.test.mjs show
// the same in Chromium.
// Run: node --test tests/web/
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import * as place from '../../web/js/place.js';

// A scroller 1,000 px tall showing 200; scrollTop clamps as a browser's.
function scroller(top) {
  return {
    scrollHeight: 1000, clientHeight: 200, top,
    get scrollTop() { return this.top; },
    set scrollTop(v) { this.top = Math.max(0, Math.min(v, this.scrollHeight - this.clientHeight)); },
  };
}

beforeEach(() => {
  place.reset();
  place.keepPinned(scroller(800));   // pinTop where the page put it last
});

test('pinned, the view goes back to the bottom when content grows', () => {
  const s = scroller(800);
  s.scrollHeight = 1400;           // an image decoded above the bottom
  assert.equal(place.nearBottom(s), true, 'content grew: no scroll of the reader');
  place.keepPinned(s);
  assert.equal(s.scrollTop, 1200);
});

test('a scroll up whose event has not come yet counts already', () => {
  const s = scroller(300);         // the reader scrolled; no event yet
  assert.equal(place.nearBottom(s), false);
  assert.equal(place.pinned, false);
  place.keepPinned(s);
  assert.equal(s.scrollTop, 300, 'unpinned: left where the reader put it');
});

test('scrolled back near the bottom (within 80 px), it follows again', () => {
  assert.equal(place.nearBottom(scroller(300)), false);
  assert.equal(place.nearBottom(scroller(730)), true);
  assert.equal(place.nearBottom(scroller(715)), false);
});

test('messages come while scrolled up are counted; the first has the line above it', () => {
  place.arrived('a', false);
  place.arrived('b', false);
  assert.equal(place.below, 2);
  assert.equal(place.newMark, 'a');
  assert.equal(place.belowText(place.below), '2 new messages ↓');
  assert.equal(place.belowText(1), '1 new message ↓');
  // Seen (scrolled down to them): the count goes, the line stays until
  // the next message read as it came.
  place.seen();
  assert.equal(place.below, 0);
  assert.equal(place.newMark, 'a');
  place.arrived('c', true);
  assert.equal(place.newMark, null);
});

test('a message come at the bottom while some are still counted keeps the line', () => {
  place.arrived('a', false);
  place.arrived('b', true);
  assert.equal(place.newMark, 'a');
  assert.equal(place.below, 1);
});

test('answering reads everything; another room starts pinned with nothing counted', () => {
  place.arrived('a', false);
  place.answered();
  assert.deepEqual([place.below, place.newMark], [0, null]);
  place.nearBottom(scroller(0));
  place.arrived('b', false);
  place.reset();
  assert.deepEqual([place.pinned, place.below, place.newMark], [true, 0, null]);
});
