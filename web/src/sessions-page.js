/* sessions-page.js - <sessions-page>: the user's sessions, live from the
 * session store (no polling): the active ones, or the finished ones with
 * their result and reason; deleting one asks first; a running session's
 * apps open in a new tab through the app proxy (apps.js).  Says whether
 * the event stream is connected. */
import { html } from 'lit';
import { loadImageApps, openApp } from './apps.js';
import { TesseraElement } from './element.js';
import { errorNotice, loadNotice } from './notices.js';
import { href } from './router.js';
import { sessionStore } from './session-store.js';
import { StoreController } from './store-controller.js';
import './confirm-dialog.js';
import './logs-dialog.js';
import './session-table.js';

class SessionsPage extends TesseraElement {
  static properties = {
    showFinished: { state: true },
    deleting: { state: true },
    error: { state: true },
    apps: { state: true },
  };

  constructor() {
    super();
    this.showFinished = false;
    this.deleting = new Set();
    this.error = null;
    this.apps = new Map();
    new StoreController(this, sessionStore);
  }

  connectedCallback() {
    super.connectedCallback();
    loadImageApps().then(
      (apps) => (this.apps = apps),
      (err) => (this.error = `The images' apps: ${err.message}`),
    );
  }

  async #openApp(e) {
    const { name, app } = e.detail;
    this.error = null;
    try {
      await openApp(name, app);
    } catch (err) {
      this.error = `Opening ${app} of ${name}: ${err.message}`;
    }
  }

  async #delete(e) {
    const { name } = e.detail;
    const yes = await this.querySelector('confirm-dialog').ask({
      title: `Delete session ${name}?`,
      message: 'Its container is destroyed; what it wrote outside mounted folders is lost.',
      confirm: 'Delete',
    });
    if (!yes) return;
    this.error = null;
    this.deleting = new Set([...this.deleting, name]);
    try {
      await sessionStore.destroy(name);
    } catch (err) {
      this.error = `Deleting ${name}: ${err.message}`;
    } finally {
      this.deleting = new Set([...this.deleting].filter((n) => n !== name));
    }
  }

  #list() {
    const notice = loadNotice(sessionStore.error, sessionStore.loaded, 'sessions');
    if (notice) return notice;
    const list = this.showFinished ? sessionStore.finished : sessionStore.active;
    if (!list.length)
      return html`<p class="muted">
        ${this.showFinished ? 'No finished session.' : html`No active session. <a href=${href('launch')}>Launch one</a>.`}
      </p>`;
    return html`<session-table
      caption=${this.showFinished ? 'Finished sessions' : 'Active sessions'}
      .sessions=${list}
      .busy=${this.deleting}
      .apps=${this.apps}
      @open-app=${this.#openApp}
      @show-logs=${(e) => this.querySelector('logs-dialog').show(e.detail.name)}
      @delete-session=${this.#delete}
    ></session-table>`;
  }

  render() {
    const active = sessionStore.active.length, finished = sessionStore.finished.length;
    return html`<div class="page-head">
        <h1>Sessions</h1>
        <span class="live ${sessionStore.live ? 'on' : 'off'}" role="status">
          ${sessionStore.live ? 'Live' : 'Connecting…'}
        </span>
        <a class="button primary" href=${href('launch')}>Launch a session</a>
      </div>
      <div class="segmented" role="group" aria-label="Which sessions">
        <button type="button" aria-pressed=${this.showFinished ? 'false' : 'true'} @click=${() => (this.showFinished = false)}>
          Active (${active})
        </button>
        <button type="button" aria-pressed=${this.showFinished ? 'true' : 'false'} @click=${() => (this.showFinished = true)}>
          Finished (${finished})
        </button>
      </div>
      ${errorNotice(this.error)}
      ${this.#list()}
      <confirm-dialog></confirm-dialog>
      <logs-dialog></logs-dialog>`;
  }
}

customElements.define('sessions-page', SessionsPage);
