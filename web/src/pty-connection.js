/* pty-connection.js - a terminal in a session that stays connected: the
 * manager's terminal WebSocket (pty-protocol.js) opened again by itself
 * after it drops, to the same shell.
 *
 * The connection names its terminal (terminalIdFor: one ID per browser
 * tab and session, in sessionStorage), so the agent keeps the shell when
 * the socket closes and the next socket attaches to it again: a reload of
 * the tab or a dropped connection finds the shell as it was, its
 * scrollback replayed ('attached' with kept: the replay is the truth, the
 * page clears the terminal first).  A shell kept too long without a socket
 * is gone, and the next socket gets a new one (kept false).
 *
 * When the socket closes, the session is asked for (GET /session/{name}):
 * a session that is over or gone ends the connection; a normal close
 * (1000: the shell exited) of a running session ends it too, until
 * open({fresh: true}) starts a new shell under a new ID; a close with
 * TERMINAL_TAKEN_CODE (another tab took the terminal over) ends it until
 * open() takes it back; anything else (the network dropped, the manager
 * restarted, the agent could not be reached) is tried again after
 * retryDelay() of the failures in a row (backoff.js), at retryAt.  A
 * failure count goes back to 0 once the shell sends something.
 *
 * A session of another owner (an admin's: owner, that owner's access
 * key) is opened and asked for with owner_access_key; when the manager
 * refuses the caller that (a 403: a plain user, or a domain admin and a
 * superadmin's session), the connection ends with the manager's sentence.
 *
 * state: 'connecting', 'open', 'waiting' (for retryAt) or 'ended';
 * reason: why it waits or ended, for people; ended: why it ended
 * ('session', 'shell', 'taken' or 'refused'); kept: the open socket found
 * the shell it had before.  Events: 'change' after each change of those,
 * 'attached' (detail: {kept}) before the terminal's first output on each
 * socket, 'output' (detail: a Uint8Array) per message of the terminal. */
import { api, query } from './api.js';
import { retryDelay } from './backoff.js';
import {
  PING_MESSAGE,
  TERMINAL_TAKEN_CODE,
  parseMessage,
  ptyUrl,
  resizeMessage,
  stdinMessage,
  terminalIdFor,
} from './pty-protocol.js';
import { isTerminal } from './session-status.js';

const PING_EVERY_MS = 30_000;
const NORMAL_CLOSURE = 1000;

export class PtyConnection extends EventTarget {
  state = 'connecting';
  reason = '';
  ended = '';
  kept = false;
  retryAt = 0;
  failures = 0;
  #socket = null;
  #timer = null;
  #size;
  #closed = false;
  #terminal;

  /* session: its name; size: {rows, cols} to open with; owner: the
   * owner's access key of another owner's session, else null. */
  constructor(session, size, owner = null) {
    super();
    this.session = session;
    this.owner = owner;
    this.#size = size;
    this.#terminal = terminalIdFor(window.sessionStorage, session, { owner });
  }

  /* Connects now: the first time, instead of waiting, or to take the
   * terminal back from another tab; fresh: a new shell (a new ID). */
  open({ fresh = false } = {}) {
    clearTimeout(this.#timer);
    this.#closed = false;
    if (fresh) this.#terminal = terminalIdFor(window.sessionStorage, this.session, { fresh: true, owner: this.owner });
    this.#socket?.close();
    this.#connect();
  }

  /* For good: the page is left (the agent keeps the shell a while). */
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
    const url = ptyUrl(window.location, this.session, this.#size.rows, this.#size.cols, this.#terminal, this.owner);
    const socket = new WebSocket(url);
    let refusal = '',
      ping = null;
    this.#socket = socket;
    this.kept = false;
    this.#set('connecting', '');
    socket.addEventListener('open', () => {
      ping = setInterval(() => socket.send(PING_MESSAGE), PING_EVERY_MS);
      this.#set('open', '');
    });
    socket.addEventListener('message', (e) => {
      if (this.#socket !== socket) return;
      const m = parseMessage(e.data);
      if (m?.type === 'out') {
        this.failures = 0;
        this.dispatchEvent(new CustomEvent('output', { detail: m.bytes }));
      } else if (m?.type === 'terminal') {
        this.kept = m.kept;
        this.dispatchEvent(new CustomEvent('attached', { detail: { kept: m.kept } }));
        this.#set(this.state, this.reason);
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
    if (code === TERMINAL_TAKEN_CODE) return this.#end('taken', 'This terminal was opened in another tab or window.');
    let session = null, refused = '';
    try {
      session = await api('GET', `/session/${encodeURIComponent(this.session)}${query({ owner_access_key: this.owner })}`);
    } catch (e) {
      /* 404: gone; 401: logged out (the app shows the login); 403: not
       * this caller's to open; else unknown */
      if (e.status === 404 || e.status === 401) session = { status: 'gone' };
      if (e.status === 403) refused = e.message;
    }
    if (this.#closed) return;
    if (refused) return this.#end('refused', refused);
    if (session?.status === 'gone') return this.#end('session', `There is no session ${this.session}.`);
    if (session && isTerminal(session.status)) return this.#end('session', `The session is ${session.status}.`);
    if (code === NORMAL_CLOSURE && session?.status === 'RUNNING') return this.#end('shell', 'The shell ended.');
    const delay = retryDelay(this.failures++);
    this.retryAt = Date.now() + delay;
    this.#timer = setTimeout(() => this.#connect(), delay);
    const status = session && session.status !== 'RUNNING' ? ` The session is ${session.status}.` : '';
    this.#set('waiting', `${refusal || 'The connection was lost.'}${status}`);
  }

  #end(why, reason) {
    this.ended = why;
    this.#set('ended', reason);
  }

  #set(state, reason) {
    this.state = state;
    this.reason = reason;
    if (state !== 'ended') this.ended = '';
    this.dispatchEvent(new Event('change'));
  }
}
