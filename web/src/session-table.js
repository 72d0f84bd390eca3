/* session-table.js - <session-table>: sessions as a table (cards on a
 * narrow screen): name, image, status with why it is so (a PENDING
 * session's scheduler message), configuration, usage (its lastStat), age,
 * and, unless compact,
 * the actions: a link to the terminal of a RUNNING session
 * (#/terminal/<name>), a button per app its image serves (`apps`: "image"
 * -> [{name}], apps.js), an event 'open-app' with detail {name, app}, its
 * logs ('show-logs' {name}), and delete ('delete-session' {name}).  Each row carries data-session and
 * data-status.  Ages are redrawn every few seconds from the store's clock;
 * nothing is fetched for that. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { formatConfig, formatDuration, formatUsage } from './format.js';
import { href } from './router.js';
import { sessionStore } from './session-store.js';
import { isTerminal, statusKind, statusReason } from './session-status.js';

const AGE_REDRAW_MS = 5000;

class SessionTable extends TesseraElement {
  static properties = {
    sessions: { attribute: false },
    compact: { type: Boolean },
    caption: {},
    busy: { attribute: false },
    apps: { attribute: false },
  };

  #ticker = null;

  constructor() {
    super();
    this.sessions = [];
    this.compact = false;
    this.caption = 'Sessions';
    this.busy = new Set();
    this.apps = new Map();
  }

  connectedCallback() {
    super.connectedCallback();
    this.#ticker = setInterval(() => this.requestUpdate(), AGE_REDRAW_MS);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    clearInterval(this.#ticker);
  }

  #openApp(session, app) {
    this.dispatchEvent(
      new CustomEvent('open-app', { detail: { name: session.sessionName, app: app.name }, bubbles: true }),
    );
  }

  #logs(session) {
    this.dispatchEvent(new CustomEvent('show-logs', { detail: { name: session.sessionName }, bubbles: true }));
  }

  #delete(session) {
    this.dispatchEvent(new CustomEvent('delete-session', { detail: { name: session.sessionName }, bubbles: true }));
  }

  #row(s) {
    const reason = statusReason(s);
    const slots = Object.keys(s.occupiedSlots ?? {}).length ? s.occupiedSlots : s.requestedSlots;
    return html`<tr data-session=${s.sessionName} data-status=${s.status}>
      <th scope="row" data-label="Name">${s.sessionName}</th>
      <td data-label="Image" class="mono">${s.image}</td>
      <td data-label="Status">
        <span class="status status-${statusKind(s.status)}">${s.status}</span>
        ${reason ? html`<span class="status-reason">${reason}</span>` : ''}
      </td>
      <td data-label="Configuration">${formatConfig(slots)}</td>
      <td data-label="Usage">${s.status === 'RUNNING' ? formatUsage(s.lastStat) : '—'}</td>
      <td data-label="Age">${formatDuration(sessionStore.ageOf(s))}</td>
      ${this.compact
        ? ''
        : html`<td data-label="Actions" class="actions-cell"><span class="row-actions">
            ${s.status === 'RUNNING'
              ? html`<a class="button small" href=${href('terminal', s.sessionName)}
                  aria-label="Open a terminal in session ${s.sessionName}">Terminal</a>
                ${(this.apps.get(s.image) ?? []).map(
                  (app) => html`<button type="button" class="small" @click=${() => this.#openApp(s, app)}
                    aria-label="Open ${app.name} of session ${s.sessionName} in a new tab">${app.name}</button>`,
                )}`
              : ''}
            ${s.status === 'PENDING'
              ? ''
              : html`<button type="button" class="small" @click=${() => this.#logs(s)}
                  aria-label="Logs of session ${s.sessionName}">Logs</button>`}
            ${s.status === 'TERMINATING' || isTerminal(s.status)
              ? ''
              : html`<button
                  type="button"
                  class="danger small"
                  ?disabled=${this.busy.has(s.sessionName)}
                  aria-label="Delete session ${s.sessionName}"
                  @click=${() => this.#delete(s)}
                >
                  Delete
                </button>`}
          </span></td>`}
    </tr>`;
  }

  render() {
    return html`<table class="data-table">
      <caption class="visually-hidden">${this.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Image</th>
          <th scope="col">Status</th>
          <th scope="col">Configuration</th>
          <th scope="col">Usage</th>
          <th scope="col">Age</th>
          ${this.compact ? '' : html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
        </tr>
      </thead>
      <tbody>
        ${this.sessions.map((s) => this.#row(s))}
      </tbody>
    </table>`;
  }
}

customElements.define('session-table', SessionTable);
