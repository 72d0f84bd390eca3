/* terminal-page.js - <terminal-page>: a terminal in a running session at
 * #/terminal/<session name>: xterm.js over pty-connection.js.
 *
 * The terminal fills the page and follows its size (the fit addon; new
 * rows and columns go to the manager).  The URL names the session, so a
 * page reload opens it again, and the tab's terminal ID (pty-connection.js)
 * finds the same shell: its scrollback is replayed into a cleared
 * terminal.  A dropped connection comes back by itself, to the same shell
 * (a session the live list sees start again is tried at once); a shell
 * that was gone meanwhile is marked in the terminal as a new one.  The
 * line above the terminal says what happens (role=status, data-state).
 * Tab and Shift+Tab belong to the shell: Ctrl+] leaves the terminal.
 * An admin's terminal in a session of another owner is
 * #/terminal/<name>/<owner's access key> (terminal-route.js; the sessions
 * page's Everyone links it): the socket acts for that owner
 * (owner_access_key), and the heading names the owner (their email,
 * asked for once).  The live list that retries at once follows the
 * caller's own sessions only; another owner's is retried on the
 * backoff's clock.
 * Without a session in the URL the page lists the running ones.
 * xterm.js makes this the heaviest chunk; nothing else imports it. */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import { html } from 'lit';
import { api, query } from './api.js';
import { TesseraElement } from './element.js';
import { PtyConnection } from './pty-connection.js';
import { href, router } from './router.js';
import { sessionStore } from './session-store.js';
import { StoreController } from './store-controller.js';
import { parseTerminalArg } from './terminal-route.js';

const SCROLLBACK_LINES = 5000;
const COUNTDOWN_MS = 1000;

/* A line in the terminal itself between two shells, dimmed. */
const NOTE = (text) => `\r\n\x1b[2m[${text}]\x1b[0m\r\n`;
/* RIS, through xterm.js's write queue (after what is still queued): a
 * cleared terminal and scrollback for a replay. */
const RESET = '\x1bc';

class TerminalPage extends TesseraElement {
  static properties = {
    ownerName: { state: true },
  };

  #route = parseTerminalArg(router.route.arg);
  #session = this.#route.session || null;
  #owner = this.#route.owner; /* another owner's access key, or null */
  #terminal = null;
  #fit = null;
  #connection = null;
  #observer = null;
  #ticker = null;
  #attached = 0;
  #asked = false; /* the user asked for a new shell */

  constructor() {
    super();
    this.ownerName = this.#owner;
    new StoreController(this, sessionStore, () => this.#followSession());
  }

  connectedCallback() {
    super.connectedCallback();
    if (this.#session) document.title = `${this.#session} · Terminal · Tessera`;
    if (this.#session && this.#owner) this.#askOwner();
    this.#ticker = setInterval(() => this.#connection?.state === 'waiting' && this.requestUpdate(), COUNTDOWN_MS);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    clearInterval(this.#ticker);
    this.#observer?.disconnect();
    this.#connection?.close();
    this.#terminal?.dispose();
    this.#observer = this.#connection = this.#terminal = null;
  }

  firstUpdated() {
    if (this.#session) this.#start(this.querySelector('.terminal-frame'));
  }

  #start(frame) {
    const mono = getComputedStyle(document.documentElement).getPropertyValue('--mono').trim();
    const terminal = new Terminal({ cursorBlink: true, fontFamily: mono || 'monospace', fontSize: 14, scrollback: SCROLLBACK_LINES });
    this.#fit = new FitAddon();
    terminal.loadAddon(this.#fit);
    terminal.open(frame);
    terminal.attachCustomKeyEventHandler((e) => this.#leaveKey(e));
    this.#fit.fit();
    const connection = new PtyConnection(this.#session, { rows: terminal.rows, cols: terminal.cols }, this.#owner);
    terminal.onData((data) => connection.send(data));
    terminal.onResize(({ rows, cols }) => connection.resize(rows, cols));
    connection.addEventListener('attached', (e) => this.#attachedTo(e.detail.kept));
    connection.addEventListener('output', (e) => terminal.write(e.detail));
    connection.addEventListener('change', () => this.#connectionChanged());
    this.#observer = new ResizeObserver(() => frame.offsetWidth && this.#fit.fit());
    this.#observer.observe(frame);
    this.#terminal = terminal;
    this.#connection = connection;
    connection.open();
    terminal.focus();
  }

  /* Ctrl+] takes the focus out of the terminal, to the line above it. */
  #leaveKey(e) {
    if (!(e.type === 'keydown' && e.ctrlKey && e.key === ']')) return true;
    this.querySelector('.terminal-bar a')?.focus();
    return false;
  }

  /* A socket found its shell: the same one (its scrollback follows: the
   * terminal starts over from it, nothing twice) or a new one. */
  #attachedTo(kept) {
    if (kept) this.#terminal.write(RESET);
    else if (this.#attached > 0) this.#terminal.write(NOTE(this.#asked ? 'a new shell' : 'the shell was gone: a new shell'));
    this.#attached++;
    this.#asked = false;
  }

  #connectionChanged() {
    const c = this.#connection;
    if (c.state === 'ended') this.#terminal.write(NOTE(c.reason));
    this.requestUpdate();
  }

  /* Another owner's session: the owner's email for the heading (else
   * their access key stays); what the manager refuses, the connection
   * says. */
  async #askOwner() {
    try {
      const s = await api('GET', `/session/${encodeURIComponent(this.#session)}${query({ owner_access_key: this.#owner })}`);
      if (s?.userEmail) this.ownerName = s.userEmail;
    } catch {
      /* the access key it is */
    }
  }

  /* The live list saw the session (again) RUNNING while we wait: now. */
  #followSession() {
    const c = this.#connection;
    if (this.#owner) return; /* sessionStore holds the caller's own */
    const running = sessionStore.active.some((s) => s.sessionName === this.#session && s.status === 'RUNNING');
    if (c?.state === 'waiting' && running) c.open();
  }

  #reconnect() {
    this.#connection.open();
    this.#terminal.focus();
  }

  #newShell() {
    this.#asked = true;
    this.#connection.open({ fresh: true });
    this.#terminal.focus();
  }

  #status() {
    const c = this.#connection;
    if (!c) return '';
    const name = this.#session;
    switch (c.state) {
      case 'connecting':
        return `Connecting to ${name}…`;
      case 'open':
        return c.kept ? `Connected to ${name}: the same shell as before.` : `Connected to ${name}.`;
      case 'waiting': {
        const seconds = Math.max(0, Math.ceil((c.retryAt - Date.now()) / 1000));
        return `${c.reason} Reconnecting in ${seconds} s (failed ${c.failures} ${c.failures === 1 ? 'time' : 'times'}).`;
      }
      default:
        return c.reason;
    }
  }

  #chooser() {
    const running = sessionStore.active.filter((s) => s.status === 'RUNNING');
    return html`<h1>Terminal</h1>
      ${running.length
        ? html`<p>Open a terminal in a running session:</p>
            <ul>
              ${running.map((s) => html`<li><a href=${href('terminal', s.sessionName)}>${s.sessionName}</a></li>`)}
            </ul>`
        : html`<p class="muted">No session is running. <a href=${href('launch')}>Launch one</a>.</p>`}`;
  }

  render() {
    if (!this.#session) return this.#chooser();
    const state = this.#connection?.state ?? 'connecting';
    const whose = this.#owner ? ` of ${this.ownerName}` : '';
    return html`<div class="terminal-bar">
        <h1>
          Terminal <span class="terminal-name">${this.#session}</span>
          ${this.#owner ? html`<span class="terminal-owner">of ${this.ownerName}</span>` : ''}
        </h1>
        <p class="terminal-status" role="status" data-state=${state}>${this.#status()}</p>
        ${state === 'waiting'
          ? html`<button type="button" class="small" @click=${this.#reconnect}>Reconnect now</button>`
          : ''}
        ${state === 'ended' && this.#connection.ended === 'taken'
          ? html`<button type="button" class="small" @click=${this.#reconnect}>Take it back</button>`
          : ''}
        ${state === 'ended' && !['taken', 'refused'].includes(this.#connection.ended)
          ? html`<button type="button" class="small" @click=${this.#newShell}>Open a new shell</button>`
          : ''}
        <a class="button small" href=${href('sessions')}>Sessions</a>
      </div>
      <section class="terminal-frame" aria-label="Terminal of session ${this.#session}${whose}"></section>
      <p class="hint">Tab goes to the shell; Ctrl+] leaves the terminal.</p>`;
  }
}

customElements.define('terminal-page', TerminalPage);
