/*
 * invite.js: "Copy invite", for owners and admins (status.js shows the
 * button).  The invite holds the room's key, so whoever gets it reads
 * and writes here: it is fetched (GET /api/invite) and copied only
 * after a confirmation (#invite-confirm).  No state.
 */
import { api } from './api.js';
import { roomPath } from './current.js';
import { ui, copyText } from './dom.js';

async function copyInvite() {
  ui.inviteCopy.disabled = true;
  try {
    const j = await api(roomPath('/invite'));
    if (!j || typeof j.invite !== 'string') throw new Error('no invite in the answer');
    const ok = await copyText(j.invite);
    ui.inviteStatus.textContent = ok ? 'The invite is copied. Give it only to who should join.' :
      'The browser refused to copy it.';
    if (ok) setTimeout(() => { ui.inviteConfirm.hidden = true; }, 2500);
  } catch (e) {
    ui.inviteStatus.textContent = 'Could not get the invite: ' + e.message;
  } finally {
    ui.inviteCopy.disabled = false;
  }
}

export function wire() {
  ui.invite.addEventListener('click', () => {
    ui.inviteStatus.textContent = '';
    ui.inviteConfirm.hidden = false;
    ui.inviteCancel.focus();
  });
  ui.inviteCancel.addEventListener('click', () => {
    ui.inviteConfirm.hidden = true;
  });
  ui.inviteCopy.addEventListener('click', copyInvite);
}
