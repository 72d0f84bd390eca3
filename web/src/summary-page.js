/* summary-page.js - <summary-page>: the user's resources as bars (used
 * against limit for their keypair, the project and the resource group,
 * from check-presets) and their running and pending sessions (the store's
 * first page of them: a line says when there are more).  Both follow
 * the live session list: a session that starts or ends re-reads the
 * resources. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { loadNotice } from './notices.js';
import { DEFAULT_PROJECT, loadResourceLimits } from './resources.js';
import { href } from './router.js';
import { sessionStore } from './session-store.js';
import { StoreController } from './store-controller.js';
import './session-table.js';
import './usage-bars.js';

/* A key that changes when a session appears, ends or changes status. */
function statusKey(sessions) {
  return sessions.map((s) => `${s.sessionId}:${s.status}`).join(',');
}

class SummaryPage extends TesseraElement {
  static properties = {
    limits: { state: true },
    error: { state: true },
  };

  #lastKey = null;

  constructor() {
    super();
    this.limits = null;
    this.error = null;
    new StoreController(this, sessionStore, () => this.#sessionsChanged());
  }

  connectedCallback() {
    super.connectedCallback();
    this.#load();
  }

  #sessionsChanged() {
    const key = statusKey(sessionStore.sessions);
    if (this.#lastKey !== null && key !== this.#lastKey) this.#load();
    this.#lastKey = key;
  }

  async #load() {
    try {
      this.limits = await loadResourceLimits();
      this.error = null;
    } catch (e) {
      this.error = e.message;
    }
  }

  #resources() {
    const notice = loadNotice(this.error, this.limits, 'resources');
    if (notice) return notice;
    const { keypair, project, resourceGroup } = this.limits;
    return html`<div class="usage-grid">
      <usage-bars heading="Your keypair" .used=${keypair.used} .limit=${keypair.limit}></usage-bars>
      <usage-bars heading="Project ${DEFAULT_PROJECT}" .used=${project.used} .limit=${project.limit}></usage-bars>
      ${resourceGroup.name
        ? html`<usage-bars
            heading="Resource group ${resourceGroup.name}"
            note="Everyone's sessions against the capacity of its live agents"
            .used=${resourceGroup.used}
            .limit=${resourceGroup.capacity}
          ></usage-bars>`
        : html`<p class="card muted">No resource group is open to you.</p>`}
    </div>`;
  }

  #sessions() {
    const notice = loadNotice(sessionStore.error, sessionStore.loaded, 'sessions');
    if (notice) return notice;
    const active = sessionStore.active, { items, total } = sessionStore.pages.active;
    const running = active.filter((s) => s.status === 'RUNNING').length;
    const pending = active.filter((s) => s.status === 'PENDING').length;
    return html`<p class="counts">
        <span><strong>${running}</strong> running</span>
        <span><strong>${pending}</strong> pending</span>
        <span><strong>${active.length - running - pending}</strong> starting or ending</span>
      </p>
      ${active.length
        ? html`<session-table compact caption="Your running and pending sessions" .sessions=${active}></session-table>`
        : html`<p class="muted">No session is running. <a href=${href('launch')}>Launch one</a>.</p>`}
      ${total > items.length ? html`<p class="muted">The newest ${items.length} of ${total} active sessions.</p>` : ''}`;
  }

  render() {
    return html`<div class="page-head">
        <h1>Summary</h1>
        <a class="button primary" href=${href('launch')}>Launch a session</a>
      </div>
      <section aria-labelledby="summary-resources">
        <h2 id="summary-resources">Resources</h2>
        ${this.#resources()}
      </section>
      <section aria-labelledby="summary-sessions">
        <h2 id="summary-sessions">Sessions</h2>
        ${this.#sessions()}
        <p><a href=${href('sessions')}>All sessions</a></p>
      </section>`;
  }
}

customElements.define('summary-page', SummaryPage);
