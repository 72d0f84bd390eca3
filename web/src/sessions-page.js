/* sessions-page.js - <sessions-page>: sessions, live from a session store
 * (no polling): the active ones, or the finished ones with their result
 * and reason; deleting one asks first; a running session's apps open in a
 * new tab through the app proxy (apps.js).  Says whether the event stream
 * is connected.
 *
 * Admins and superadmins choose Mine or Everyone (remembered in
 * localStorage): Everyone is everyoneStore, every session the manager lets
 * them see (a domain admin's domain, every domain for a superadmin), with
 * an Owner column; its logs, apps and delete act for the owner
 * (owner_access_key), and so does its terminal (session-table.js links
 * #/terminal/<name>/<owner>).  Plain users see their own sessions only,
 * and no such choice.
 *
 * Each list pages as the manager pages it: "1–50 of 230", Previous and
 * Next, and a choice of rows per page (10, 25, 50 or 100, remembered in
 * localStorage; session-store.js); the counts on Active and Finished are
 * the manager's totals.  Leaving the page goes back to the first pages. */
import { html } from 'lit';
import { loadImageApps, openApp } from './apps.js';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { errorNotice, loadNotice } from './notices.js';
import { href } from './router.js';
import { PAGE_SIZES, everyoneStore, sessionStore, setPageSize } from './session-store.js';
import { StoreController } from './store-controller.js';
import './confirm-dialog.js';
import './logs-dialog.js';
import './session-table.js';

const SCOPE_KEY = 'tessera.sessions.scope';
const ADMIN_ROLES = ['admin', 'superadmin'];

function savedScope() {
  try {
    return localStorage.getItem(SCOPE_KEY) === 'everyone' ? 'everyone' : 'mine';
  } catch {
    return 'mine';
  }
}

class SessionsPage extends TesseraElement {
  static properties = {
    showFinished: { state: true },
    scope: { state: true },
    deleting: { state: true },
    error: { state: true },
    apps: { state: true },
  };

  constructor() {
    super();
    this.showFinished = false;
    this.scope = savedScope();
    this.deleting = new Set();
    this.error = null;
    this.apps = new Map();
    new StoreController(this, sessionStore);
    new StoreController(this, everyoneStore);
    new StoreController(this, auth, () => this.#follow());
  }

  get #admin() {
    return ADMIN_ROLES.includes(auth.user?.role);
  }

  get #everyone() {
    return this.#admin && this.scope === 'everyone';
  }

  get #store() {
    return this.#everyone ? everyoneStore : sessionStore;
  }

  connectedCallback() {
    super.connectedCallback();
    this.#follow();
    loadImageApps().then(
      (apps) => (this.apps = apps),
      (err) => (this.error = `The images' apps: ${err.message}`),
    );
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    everyoneStore.stop(); /* one event stream less while the page is not shown */
    sessionStore.firstPages(); /* what the summary and the terminal list */
  }

  /* everyoneStore runs while this page shows Everyone. */
  #follow() {
    if (this.#everyone) everyoneStore.start(auth.user.accessKey);
    else everyoneStore.stop();
  }

  #setScope(scope) {
    if (scope === this.scope) return;
    this.scope = scope;
    try {
      localStorage.setItem(SCOPE_KEY, scope);
    } catch {
      /* not remembered: private browsing */
    }
    this.error = null;
    this.#follow();
  }

  async #openApp(e) {
    const { name, app, owner } = e.detail;
    this.error = null;
    try {
      await openApp(name, app, owner);
    } catch (err) {
      this.error = `Opening ${app} of ${name}: ${err.message}`;
    }
  }

  async #delete(e) {
    const { name, owner, id } = e.detail;
    const session = this.#store.sessions.find((s) => s.sessionId === id);
    const whose = owner ? ` of ${session?.userEmail ?? owner}` : '';
    const yes = await this.querySelector('confirm-dialog').ask({
      title: `Delete session ${name}${whose}?`,
      message: 'Its container is destroyed; what it wrote outside mounted folders is lost.',
      confirm: 'Delete',
    });
    if (!yes) return;
    this.error = null;
    this.deleting = new Set([...this.deleting, id]);
    try {
      await this.#store.destroy(name, owner);
    } catch (err) {
      this.error = `Deleting ${name}${whose}: ${err.message}`;
    } finally {
      this.deleting = new Set([...this.deleting].filter((n) => n !== id));
    }
  }

  #list() {
    const store = this.#store;
    const notice = loadNotice(store.error, store.loaded, 'sessions');
    if (notice) return notice;
    const list = this.showFinished ? store.finished : store.active;
    if (!list.length)
      return html`<p class="muted">
        ${this.showFinished ? 'No finished session.' : html`No active session. <a href=${href('launch')}>Launch one</a>.`}
      </p>`;
    const whose = this.#everyone ? 'of everyone' : '';
    return html`<session-table
      caption=${`${this.showFinished ? 'Finished' : 'Active'} sessions ${whose}`.trim()}
      ?owners=${this.#everyone}
      .me=${auth.user?.accessKey ?? null}
      .sessions=${list}
      .busy=${this.deleting}
      .apps=${this.apps}
      @open-app=${this.#openApp}
      @show-logs=${(e) => this.querySelector('logs-dialog').show(e.detail.name, e.detail.owner)}
      @delete-session=${this.#delete}
    ></session-table>
    ${this.#pager()}`;
  }

  get #view() {
    return this.showFinished ? 'finished' : 'active';
  }

  /* Where the list is among the manager's rows, the pages around it and
   * how many rows a page holds. */
  #pager() {
    const store = this.#store, view = this.#view;
    const { items, total, offset } = store.pages[view];
    const what = `${view} sessions${this.#everyone ? ' of everyone' : ''}`;
    return html`<nav class="pager" aria-label="Pages of ${what}">
      <span role="status">${offset + 1}–${offset + items.length} of ${total}</span>
      <label for="sessions-page-size">Per page</label>
      <select id="sessions-page-size" @change=${(e) => setPageSize(Number(e.target.value))}>
        ${PAGE_SIZES.map((n) => html`<option value=${n} ?selected=${n === store.pageSize}>${n}</option>`)}
      </select>
      <button type="button" ?disabled=${offset === 0} @click=${() => store.turn(view, -1)}>Previous</button>
      <button type="button" ?disabled=${offset + items.length >= total} @click=${() => store.turn(view, 1)}>Next</button>
    </nav>`;
  }

  #scopeControl() {
    if (!this.#admin) return '';
    const button = (scope, label) => html`<button type="button" aria-pressed=${this.scope === scope ? 'true' : 'false'}
      @click=${() => this.#setScope(scope)}>${label}</button>`;
    return html`<div class="segmented" role="group" aria-label="Whose sessions">
      ${button('mine', 'Mine')} ${button('everyone', 'Everyone')}
    </div>`;
  }

  render() {
    const store = this.#store;
    const active = store.pages.active.total, finished = store.pages.finished.total;
    return html`<div class="page-head">
        <h1>Sessions</h1>
        <span class="live ${store.live ? 'on' : 'off'}" role="status">${store.live ? 'Live' : 'Connecting…'}</span>
        <a class="button primary" href=${href('launch')}>Launch a session</a>
      </div>
      <div class="session-filters">
        ${this.#scopeControl()}
        <div class="segmented" role="group" aria-label="Which sessions">
          <button type="button" aria-pressed=${this.showFinished ? 'false' : 'true'} @click=${() => (this.showFinished = false)}>
            Active (${active})
          </button>
          <button type="button" aria-pressed=${this.showFinished ? 'true' : 'false'} @click=${() => (this.showFinished = true)}>
            Finished (${finished})
          </button>
        </div>
      </div>
      ${errorNotice(this.error)}
      ${this.#list()}
      <confirm-dialog></confirm-dialog>
      <logs-dialog></logs-dialog>`;
  }
}

customElements.define('sessions-page', SessionsPage);
