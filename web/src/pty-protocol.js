/* pty-protocol.js - the terminal WebSocket of the manager,
 * GET /stream/session/{name}/pty?rows=R&cols=C&terminal=ID
 * (src/manager/sessions/api_stream_pty.c; the messages are those of
 * src/agent/agent_pty.c),
 * without the socket itself (no DOM: tested by node --test).  Messages
 * are JSON text:
 *
 *   to the manager    {"type": "stdin", "chars": BASE64}   keystrokes (UTF-8)
 *                     {"type": "resize", "rows": R, "cols": C}
 *                     {"type": "ping"}   keeps the session from the idle timeout
 *   from it           {"type": "terminal", "id": ID, "kept": BOOL}  first: the
 *                                        same shell as before (its scrollback
 *                                        follows) or a new one
 *                     {"type": "out", "data": BASE64}      what the terminal shows
 *                     {"type": "error", "data": MESSAGE}
 *
 * The terminal ID names a shell the agent keeps between sockets (for
 * terminal_keep, 15 min by default); a socket closed with
 * TERMINAL_TAKEN_CODE lost its terminal to another socket with the same ID.
 * The browser's session cookie authenticates the socket; the manager
 * accepts it only from its own origin.  An admin opens a terminal in a
 * session of another owner with that owner's access key
 * (&owner_access_key=, as on the other session routes); the page's route
 * names both (terminal-route.js). */
import { terminalArg } from './terminal-route.js';

/* rows and cols the manager accepts (1-1000). */
const clamp = (n) => Math.min(1000, Math.max(1, Math.round(n) || 1));

/* The socket's URL on the page's own origin: ws:// for http://, wss:// for
 * https://; terminal: the ID of a kept shell, if any; owner: the owner's
 * access key of a session that is not the caller's, else null. */
export function ptyUrl(location, session, rows, cols, terminal = '', owner = null) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const name = terminal ? `&terminal=${encodeURIComponent(terminal)}` : '';
  const whose = owner ? `&owner_access_key=${encodeURIComponent(owner)}` : '';
  return `${scheme}//${location.host}/stream/session/${encodeURIComponent(session)}/pty?rows=${clamp(rows)}&cols=${clamp(cols)}${name}${whose}`;
}

/* The close code of a socket whose terminal another socket (another tab
 * with the same ID) took over. */
export const TERMINAL_TAKEN_CODE = 4001;

const TERMINAL_ID = /^[A-Za-z0-9_-]{8,64}$/;

/* A new terminal ID: 16 random bytes as base64url (22 characters). */
export function newTerminalId(random = (bytes) => crypto.getRandomValues(bytes)) {
  return bytesToBase64(random(new Uint8Array(16))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/* The terminal ID of this tab for a session, kept in storage (the tab's
 * sessionStorage: a reload finds the same shell, another tab makes its
 * own); fresh: a new one in its place; owner: the owner's access key of
 * another owner's session (a name of its own, which the caller's session
 * of the same name does not share). */
export function terminalIdFor(storage, session, { fresh = false, random, owner = null } = {}) {
  const key = `tessera.terminal.${terminalArg(session, owner)}`;
  let id = null;
  try {
    id = fresh ? null : storage.getItem(key);
  } catch {
    /* storage refused: a shell for this page only */
  }
  if (id && TERMINAL_ID.test(id)) return id;
  id = newTerminalId(random);
  try {
    storage.setItem(key, id);
  } catch {
    /* as above */
  }
  return id;
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
 * {type: 'error', message}, {type: 'terminal', id, kept}, or null for
 * anything else. */
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
  if (m?.type === 'terminal') return { type: 'terminal', id: String(m.id ?? ''), kept: m.kept === true };
  return null;
}
