/* pty-connection.js - a terminal in a session that stays connected: the
 * manager's terminal WebSocket (pty-protocol.js) opened again by itself
 * after it drops.
 *
 * When the socket closes, the session is asked for (GET /session/{name}):
 * a session that is over or gone ends the connection; a normal close
 * (1000: the shell exited) of a running session ends it too, until
 * open() starts a new shell; anything else (the network dropped, the
 * manager restarted, the agent could not be reached) is tried again after
 * retryDelay() of the failures in a row (backoff.js), at retryAt.  A
 * failure count goes back to 0 once the shell sends something.  Each
 * socket is a new shell in the same session.
 *
 * state: 'connecting', 'open', 'waiting' (for retryAt) or 'ended';
 * reason: why it waits or ended, for people.  Events: 'change' after
 * each change of those, 'output' (detail: a Uint8Array) per message of
 * the terminal. */
import { api } from './api.js';
import { retryDelay } from './backoff.js';
import { PING_MESSAGE, parseMessage, ptyUrl, resizeMessage, stdinMessage } from './pty-protocol.js';
import { isTerminal } from './session-status.js';

const PING_EVERY_MS = 30_000;
const NORMAL_CLOSURE = 1000;

export class PtyConnection extends EventTarget {
  state = 'connecting';
  reason = '';
  retryAt = 0;
  failures = 0;
  #socket = null;
  #timer = null;
  #size;
  #closed = false;

  /* session: its name; size: {rows, cols} to open with. */
  constructor(session, size) {
    super();
    this.session = session;
    this.#size = size;
  }

  /* Connects now: the first time, instead of waiting, or a new shell. */
  open() {
    clearTimeout(this.#timer);
    this.#closed = false;
    this.#socket?.close();
    this.#connect();
  }

  /* For good: the page is left. */
  close() {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#socket?.close();
    this.#socket = null;
  }

  send(text) {
    if (this.state === 'open') this.#socket.send(stdinMessage(text));
  }

  resize(rows, cols) {
    this.#size = { rows, cols };
    if (this.state === 'open') this.#socket.send(resizeMessage(rows, cols));
  }

  #connect() {
    const socket = new WebSocket(ptyUrl(window.location, this.session, this.#size.rows, this.#size.cols));
    let refusal = '', ping = null;
    this.#socket = socket;
    this.#set('connecting', '');
    socket.addEventListener('open', () => {
      ping = setInterval(() => socket.send(PING_MESSAGE), PING_EVERY_MS);
      this.#set('open', '');
    });
    socket.addEventListener('message', (e) => {
      const m = parseMessage(e.data);
      if (m?.type === 'out') {
        this.failures = 0;
        this.dispatchEvent(new CustomEvent('output', { detail: m.bytes }));
      } else if (m?.type === 'error') {
        refusal = m.message;
      }
    });
    socket.addEventListener('close', (e) => {
      clearInterval(ping);
      if (this.#socket !== socket) return;
      this.#socket = null;
      if (!this.#closed) this.#afterClose(e.code, refusal);
    });
  }

  async #afterClose(code, refusal) {
    let session = null;
    try {
      session = await api('GET', `/session/${encodeURIComponent(this.session)}`);
    } catch (e) {
      /* 404: gone; 401: logged out (the app shows the login); else unknown */
      if (e.status === 404 || e.status === 401) session = { status: 'gone' };
    }
    if (this.#closed) return;
    if (session?.status === 'gone') return this.#set('ended', `There is no session ${this.session}.`);
    if (session && isTerminal(session.status)) return this.#set('ended', `The session is ${session.status}.`);
    if (code === NORMAL_CLOSURE && session?.status === 'RUNNING') return this.#set('ended', 'The shell ended.');
    const delay = retryDelay(this.failures++);
    this.retryAt = Date.now() + delay;
    this.#timer = setTimeout(() => this.#connect(), delay);
    const status = session && session.status !== 'RUNNING' ? ` The session is ${session.status}.` : '';
    this.#set('waiting', `${refusal || 'The connection was lost.'}${status}`);
  }

  #set(state, reason) {
    this.state = state;
    this.reason = reason;
    this.dispatchEvent(new Event('change'));
  }
}
