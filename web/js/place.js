/*
 * place.js: the reader's place in the timeline.  Pinned, the view
 * follows the newest message (kept there while images load); scrolled
 * up, it stays where the reader put it, and messages of others that
 * come meanwhile are counted on a button, under a "New messages" line
 * above the first of them.  It owns pinned, pinTop, below and newMark.
 * The scroller is passed in (any { scrollTop, scrollHeight,
 * clientHeight }), so tests/web/place.test.mjs runs it in node.
 */

const NEAR_PX = 80;                // this near the end counts as at it

export let pinned = true;          // the view follows the newest message
let pinTop = 0;                    // the scrollTop keepPinned set last
export let below = 0;              // messages come while scrolled up, not yet seen
export let newMark = null;         // the first of them: "New messages" above it

function atBottom(s) {
  return s.scrollHeight - s.scrollTop - s.clientHeight < NEAR_PX;
}

// Whether the view follows the newest message: set by scrolling only
// (growing content fires no scroll event), so that content growing
// above the bottom (an image preview decoded late) does not unpin it.
// A scroll whose event has not come yet (it comes with the next frame,
// a message may come first) counts already.
export function nearBottom(s) {
  if (s.scrollTop !== pinTop) pinned = atBottom(s);
  return pinned;
}

// Back to the bottom while pinned: after a layout, and whenever the
// timeline's height changes (images loading) until the reader scrolls.
export function keepPinned(s) {
  if (!pinned) return;
  if (s.scrollHeight - s.scrollTop - s.clientHeight > 1) s.scrollTop = s.scrollHeight;
  // Its scroll event comes later, maybe after content grew again: at
  // this place, it is the page's own and leaves the view pinned.
  pinTop = s.scrollTop;
}

// Follows the newest message again, from the next keepPinned on.
export function pin() {
  pinned = true;
}

// A message of another member came; near: the view was at the bottom.
// The reader higher up: counted, and marked where they start.
export function arrived(id, near) {
  if (!near) {
    if (below === 0) newMark = id;
    below++;
  } else if (below === 0) {
    newMark = null;                // read as it came: the old line goes
  }
}

// The messages below were seen (scrolled to, or the view at the end).
export function seen() {
  below = 0;
}

// This member answered: what came is read, and its line goes.
export function answered() {
  newMark = null;
  below = 0;
}

// Another room is shown.
export function reset() {
  pinned = true;
  below = 0;
  newMark = null;
}

// The button's words.
export function belowText(n) {
  return n === 1 ? '1 new message ↓' : n + ' new messages ↓';
}
