/*
 * current.js: the room shown, and how many times it changed (gen): an
 * answer asked for a room no longer shown is dropped by comparing gen.
 * Modules that hold what a room shows register with onLeave what to
 * forget when another is shown (rooms.js calls show()).  Pure.
 */

export let shown = null;           // the id of the room shown (null: none known)
export let gen = 0;                // counts switches

const leaving = [];

// fn() runs, in the order registered, when another room is shown.
export function onLeave(fn) {
  leaving.push(fn);
}

// Shows room id from now on: what the last one showed is forgotten.
export function show(id) {
  shown = id;
  gen++;
  for (const fn of leaving) fn();
}

// The first room shown, at load: nothing to forget.
export function first(id) {
  shown = id;
}

// An API path for one room: '/status' -> '/api/rooms/ID/status'.  With
// no room known (yet) it is the default room's: '/api/status'.
export function roomPath(p, id) {
  const room = id === undefined ? shown : id;
  return room ? '/api/rooms/' + encodeURIComponent(room) + p : '/api' + p;
}
