/* pty-protocol.js - the terminal WebSocket of the manager,
 * GET /stream/session/{name}/pty?rows=R&cols=C (src/manager/
 * api_stream_pty.c; the messages are those of src/agent/agent_pty.c),
 * without the socket itself (no DOM: tested by node --test).  Messages
 * are JSON text:
 *
 *   to the manager    {"type": "stdin", "chars": BASE64}   keystrokes (UTF-8)
 *                     {"type": "resize", "rows": R, "cols": C}
 *                     {"type": "ping"}   keeps the session from the idle timeout
 *   from it           {"type": "out", "data": BASE64}      what the terminal shows
 *                     {"type": "error", "data": MESSAGE}
 *
 * The browser's session cookie authenticates the socket; the manager
 * accepts it only from its own origin. */

/* rows and cols the manager accepts (1-1000). */
const clamp = (n) => Math.min(1000, Math.max(1, Math.round(n) || 1));

/* The socket's URL on the page's own origin: ws:// for http://, wss:// for https://. */
export function ptyUrl(location, session, rows, cols) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/stream/session/${encodeURIComponent(session)}/pty?rows=${clamp(rows)}&cols=${clamp(cols)}`;
}

export function bytesToBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function base64ToBytes(text) {
  const s = atob(text);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

const encoder = new TextEncoder();

export function stdinMessage(text) {
  return JSON.stringify({ type: 'stdin', chars: bytesToBase64(encoder.encode(text)) });
}

export function resizeMessage(rows, cols) {
  return JSON.stringify({ type: 'resize', rows: clamp(rows), cols: clamp(cols) });
}

export const PING_MESSAGE = JSON.stringify({ type: 'ping' });

/* A message from the manager: {type: 'out', bytes} (a Uint8Array: UTF-8
 * that may end inside a character; xterm.js joins it with what follows),
 * {type: 'error', message}, or null for anything else. */
export function parseMessage(text) {
  let m;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (m?.type === 'out' && typeof m.data === 'string') {
    try {
      return { type: 'out', bytes: base64ToBytes(m.data) };
    } catch {
      return null;
    }
  }
  if (m?.type === 'error') return { type: 'error', message: String(m.data ?? 'the terminal failed') };
  return null;
}
