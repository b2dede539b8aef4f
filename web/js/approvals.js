/*
 * approvals.js: OAuth approval requests (PAPO_OAUTH=on;
 * docs/SECURITY.md).  An MCP client's approval page can also be
 * answered here, by the person at this machine (a page opened from
 * another machine may only look): the page then goes on with Continue.
 * It owns whether the daemon has OAuth on at all.
 */
import { api } from './api.js';
import { ui, el } from './dom.js';

let oauth = true;                  // false once the daemon says it is off

function approvalItem(p, local) {
  const li = el('li', 'approval');
  const what = el('p', 'approval-text');
  what.append(el('strong', null, p.client_name),
    document.createTextNode(' (' + p.client_id + ') asks to act as this member; it goes back to '),
    el('strong', null, p.redirect_host), document.createTextNode('.'));
  li.append(what);
  if (p.approved) {
    li.append(el('p', 'approval-done', 'Approved: press Continue on its page.'));
    return li;
  }
  if (!local) {
    li.append(el('p', 'approval-done', 'Approve it on its page with the token (not from another machine).'));
    return li;
  }
  for (const [decision, label] of [['approve', 'Approve'], ['deny', 'Deny']]) {
    const b = el('button', 'approval-' + decision, label);
    b.type = 'button';
    b.addEventListener('click', async () => {
      try {
        await api('/api/oauth/decide', {
          method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ request: p.request, decision }),
        });
      } catch (e) { /* gone or answered: the list says so */ }
      loadApprovals();
    });
    li.append(b, document.createTextNode(' '));
  }
  return li;
}

// The pending requests again (at load, when the page is shown, every
// 15 s while it is).
export async function loadApprovals() {
  if (!oauth) return;
  let ans;
  try {
    ans = await api('/api/oauth/pending');
  } catch (e) {
    return;
  }
  if (ans.oauth === false) oauth = false;
  ui.approvals.hidden = ans.pending.length === 0;
  const items = ans.pending.map((p) => approvalItem(p, ans.local));
  const h = el('h2', 'approvals-title', 'Approve access?');
  const ol = el('ol', 'approval-list');
  ol.append(...items);
  ui.approvals.replaceChildren(h, ol);
}
