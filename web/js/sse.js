/*
 * sse.js: the event stream's text (the WHATWG event-stream format)
 * parsed as it arrives.  The page reads /api/events with fetch() rather
 * than EventSource, which cannot send the Authorization header a daemon
 * with a token needs (stream.js).  Pure: tests/web/sse.test.mjs.
 */

// Returns a function that takes each chunk of text as it comes; calls
// onEvent(name, data, id) for each event dispatched and onRetry(ms) for
// a retry field.
export function sseParser(onEvent, onRetry) {
  let buf = '';
  let data = [];
  let name = '';
  let id = null;
  function line(l) {
    if (l === '') {
      if (data.length) onEvent(name || 'message', data.join('\n'), id);
      data = [];
      name = '';
      return;
    }
    if (l[0] === ':') return;          // a comment: the heartbeat
    const i = l.indexOf(':');
    const field = i === -1 ? l : l.slice(0, i);
    let value = i === -1 ? '' : l.slice(i + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (field === 'event') name = value;
    else if (field === 'id') {
      if (!value.includes('\0')) id = value;
    } else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
  }
  return (chunk) => {
    buf += chunk;
    let start = 0;
    for (;;) {
      let i = start;
      while (i < buf.length && buf[i] !== '\n' && buf[i] !== '\r') i++;
      if (i >= buf.length) break;
      // A lone \r at the end may be the first half of \r\n.
      if (buf[i] === '\r' && i + 1 === buf.length) break;
      line(buf.slice(start, i));
      start = i + (buf[i] === '\r' && buf[i + 1] === '\n' ? 2 : 1);
    }
    buf = buf.slice(start);
  };
}
