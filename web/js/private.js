/*
 * private.js: the private view, the timeline narrowed to the private
 * messages between this member and one other (only their two daemons
 * can read them: docs/SECURITY.md, "Who is trusted").  A member's row
 * or the mark of a private message opens it, which also points the
 * composer at that member; "Show the
 * whole room" or leaving the room closes it.  It owns which member that
 * is; the timeline asks shows(m) of every message and is told of a
 * change through onChange.
 */
import { onLeave } from './current.js';
import { ui } from './dom.js';

let withId = null;
const changed = [];

// Whether message m is shown: every one, or in the private view only
// the private ones between us and that member.
export function shows(m) {
  return !withId || (!!m.private && (m.from_id === withId || m.to_id === withId));
}

export function onChange(f) {
  changed.push(f);
}

function show(id, name) {
  withId = id || null;
  ui.privateView.hidden = !withId;
  ui.privateName.textContent = withId ? name : '';
  if (withId && [...ui.to.options].some((o) => o.value === withId)) {
    ui.to.value = withId;
    ui.to.dispatchEvent(new Event('change'));
  }
  for (const f of changed) f();
}

export function wire() {
  // A member's row, or the mark of a private message.
  const open = (ev) => {
    const b = ev.target.closest('button.private-open');
    if (b) show(b.dataset.id, b.dataset.name);
  };
  ui.members.addEventListener('click', open);
  ui.messages.addEventListener('click', open);
  ui.privateAll.addEventListener('click', () => show(null));
}

// Another room: its members are others.
onLeave(() => {
  withId = null;
  ui.privateView.hidden = true;
});
