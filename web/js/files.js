/*
 * files.js: a message's files (docs/FILES.md), listed under it with
 * their size, a download button and, once here, a preview (an image, or
 * a text's first PREVIEW_TEXT bytes).  Both are fetched with the token
 * (GET /api/blobs/REF?room=ID) and shown from blob: URLs, which the
 * CSP's img-src allows.  A file being fetched shows its progress from
 * the stream's "file" events; one only named (too large to be fetched
 * at once) has a Fetch button.  It owns what the page learnt of each
 * file and the previews; the timeline is drawn again through the
 * function given to onRedraw.
 */
import { api, authFetch } from './api.js';
import { gen, onLeave, shown } from './current.js';
import { ui, el } from './dom.js';
import { humanSize } from './format.js';

const REF_RE = /^[A-Za-z0-9]{1,64}$/;
const PREVIEW_TEXT = 2048;         // bytes of a text file shown under it
const PREVIEW_IMAGE_MAX = 8 << 20; // images larger are not previewed

const files = new Map();           // ref -> its newest state (fetch, "file" events)
const previews = new Map();        // ref -> { url } or { text } or { error }, or 'loading'
const previewTries = new Map();    // ref -> previews that failed

let redraw = () => {};

// fn(ref) is called when what a file shows changed (ref null: a
// preview, whose message is drawn again).
export function onRedraw(fn) {
  redraw = fn;
}

// A file as its message names it, with what this page learnt since.
function fileState(f) {
  const s = files.get(f.ref);
  return Object.assign({}, f, s || {});
}

function blobPath(ref, extra) {
  return '/api/blobs/' + encodeURIComponent(ref) + (extra || '') +
    (shown ? '?room=' + encodeURIComponent(shown) : '');
}

// GET a file (or its first bytes) with the token; a Response.
function blobFetch(ref, range) {
  return authFetch(blobPath(ref), { headers: range ? { Range: range } : {} });
}

function isImage(f) {
  return typeof f.type === 'string' && /^image\/(png|jpeg|gif|webp)$/.test(f.type);
}

function isText(f) {
  return typeof f.type === 'string' && (f.type.startsWith('text/') ||
    f.type === 'application/json');
}

// Loads a preview of a file that is here, once; the message is drawn
// again when it is ready.
async function loadPreview(f) {
  if (previews.has(f.ref)) return;
  previews.set(f.ref, 'loading');
  const asked = gen;
  let p;
  try {
    if (isImage(f)) {
      const res = await blobFetch(f.ref);
      p = { url: URL.createObjectURL(await res.blob()) };
    } else {
      const res = await blobFetch(f.ref, 'bytes=0-' + (PREVIEW_TEXT - 1));
      const buf = await res.arrayBuffer();
      const text = new TextDecoder('utf-8').decode(buf.slice(0, PREVIEW_TEXT));
      p = { text: text + (f.size > PREVIEW_TEXT ? '\n…' : '') };
    }
  } catch (e) {
    // Tried again a little later, a few times (a file that just
    // became whole, a daemon restarting).
    const tries = (previewTries.get(f.ref) || 0) + 1;
    previewTries.set(f.ref, tries);
    p = { error: e.message };
    if (tries < 4) {
      setTimeout(() => {
        if (asked === gen && previews.get(f.ref) === p) {
          previews.delete(f.ref);
          redraw(null);
        }
      }, 2000 * tries);
    }
  }
  if (asked !== gen) {
    if (p.url) URL.revokeObjectURL(p.url);
    return;
  }
  previews.set(f.ref, p);
  redraw(null);
}

async function download(ref, name) {
  try {
    const res = await blobFetch(ref);
    const url = URL.createObjectURL(await res.blob());
    const a = el('a');
    a.href = url;
    a.download = name || 'file';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  } catch (e) {
    ui.sendStatus.textContent = 'Could not download ' + name + ': ' + e.message;
  }
}

async function fetchFile(ref) {
  try {
    const j = await api(blobPath(ref, '/fetch'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    onFile(j);
  } catch (e) {
    ui.sendStatus.textContent = 'Could not fetch the file: ' + e.message;
  }
}

// A file's state changed (the stream's "file" event, a fetch's answer).
export function onFile(j) {
  if (!j || typeof j.ref !== 'string') return;
  // A fetch's answer can come after the stream's event that the file
  // is here (a small file is fetched at once): it never takes a file
  // back from here.
  const known = files.get(j.ref);
  if (known && known.state === 'here' && j.state !== 'here') return;
  files.set(j.ref, j);
  redraw(j.ref);
}

function fileItem(f) {
  const li = el('li', 'file');
  li.dataset.ref = f.ref;
  li.dataset.state = f.state || '';
  const head = el('div', 'file-head');
  head.append(el('span', 'file-name', f.name || 'file'),
    el('span', 'file-size', humanSize(f.size)));
  if (f.type) head.lastChild.title = f.type;
  if (f.state === 'here') {
    const b = el('button', 'file-download link-button', 'Download');
    b.type = 'button';
    b.dataset.ref = f.ref;
    b.dataset.name = f.name || 'file';
    head.append(b);
  } else if (f.state === 'named') {
    const b = el('button', 'file-fetch link-button', 'Fetch');
    b.type = 'button';
    b.dataset.ref = f.ref;
    b.title = 'Fetch it from the members who hold it';
    head.append(b);
  } else if (f.state === 'fetching') {
    head.append(el('span', 'file-state', 'fetching…'));
  } else if (f.state === 'waiting') {
    head.append(el('span', 'file-state', 'waiting for a member who holds it'));
  } else if (f.state === 'failed') {
    head.append(el('span', 'file-state failed', 'failed' + (f.error ? ': ' + f.error : '')));
  }
  li.append(head);
  if (f.state === 'fetching' && typeof f.size === 'number' && f.size > 0) {
    const p = el('progress', 'file-progress');
    p.max = f.size;
    p.value = typeof f.have === 'number' ? f.have : 0;
    p.title = humanSize(p.value) + ' of ' + humanSize(f.size);
    li.append(p);
  }
  if (f.state === 'here' && (isImage(f) ? f.size <= PREVIEW_IMAGE_MAX : isText(f))) {
    const p = previews.get(f.ref);
    if (!p) loadPreview(f);
    else if (p.url) {
      const img = el('img', 'file-image');
      img.src = p.url;
      img.alt = f.name || 'image';
      li.append(img);
    } else if (typeof p.text === 'string') {
      li.append(el('pre', 'file-text', p.text));
    }
  }
  return li;
}

// The list under message m.
export function filesOf(m) {
  const ul = el('ul', 'files');
  for (const f of m.files)
    if (f && typeof f.ref === 'string' && REF_RE.test(f.ref)) ul.append(fileItem(fileState(f)));
  return ul;
}

// What a message's files show, for its signature (timeline.js).
export function filesLook(m) {
  if (!Array.isArray(m.files)) return '';
  return m.files.map((f) => {
    if (!f) return '';
    const s = fileState(f);
    const p = previews.get(f.ref);
    return [f.ref, s.state, s.have, p ? (p === 'loading' ? 'l' : 'p') : ''].join(':');
  }).join(',');
}

// A click on a file's Download or Fetch button; true when it was one.
export function fileClick(ev) {
  const dl = ev.target.closest('button.file-download');
  if (dl) {
    download(dl.dataset.ref, dl.dataset.name);
    return true;
  }
  const fb = ev.target.closest('button.file-fetch');
  if (fb) {
    fb.disabled = true;
    fetchFile(fb.dataset.ref);
    return true;
  }
  return false;
}

onLeave(() => {
  files.clear();
  for (const p of previews.values()) if (p && p.url) URL.revokeObjectURL(p.url);
  previews.clear();
  previewTries.clear();
});
