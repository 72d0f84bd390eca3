/* session-table.js - <session-table>: sessions as a table (cards on a
 * narrow screen): name, image, status with why it is so (a PENDING
 * session's scheduler message), configuration, usage (its lastStat), age,
 * and, unless compact,
 * the actions: a link to the terminal of a RUNNING session
 * (#/terminal/<name>), a button per app its image serves (`apps`: "image"
 * -> [{name}], apps.js), an event 'open-app' with detail {name, app,
 * owner}, its logs ('show-logs' {name, owner}), and delete
 * ('delete-session' {name, owner}).  With `owners` (an admin's "Everyone")
 * an Owner column shows each session's owner (email, else access key);
 * `owner` in the events is the access key of a session that is not the
 * caller's (`me`), null for the caller's own, and the terminal link of
 * such a session names its owner too (#/terminal/<name>/<access key>,
 * terminalArg).  Each row carries data-session, data-owner and data-status.  Ages are
 * redrawn every few seconds from the store's clock; nothing is fetched
 * for that. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { formatConfig, formatDuration, formatUsage } from './format.js';
import { href } from './router.js';
import { sessionStore } from './session-store.js';
import { isTerminal, statusKind, statusReason } from './session-status.js';
import { terminalArg } from './terminal-route.js';

const AGE_REDRAW_MS = 5000;

class SessionTable extends TesseraElement {
  static properties = {
    sessions: { attribute: false },
    compact: { type: Boolean },
    caption: {},
    busy: { attribute: false },
    apps: { attribute: false },
    owners: { type: Boolean },
    me: {},
  };

  #ticker = null;

  constructor() {
    super();
    this.sessions = [];
    this.compact = false;
    this.caption = 'Sessions';
    this.busy = new Set();
    this.apps = new Map();
    this.owners = false;
    this.me = null;
  }

  connectedCallback() {
    super.connectedCallback();
    this.#ticker = setInterval(() => this.requestUpdate(), AGE_REDRAW_MS);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    clearInterval(this.#ticker);
  }

  /* The owner's access key of another owner's session, else null. */
  #ownerOf(session) {
    return this.me && session.ownerAccessKey && session.ownerAccessKey !== this.me ? session.ownerAccessKey : null;
  }

  #emit(type, session, more = {}) {
    const detail = { name: session.sessionName, owner: this.#ownerOf(session), ...more };
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true }));
  }

  #row(s) {
    const reason = statusReason(s);
    const slots = Object.keys(s.occupiedSlots ?? {}).length ? s.occupiedSlots : s.requestedSlots;
    const other = this.#ownerOf(s);
    const whose = other ? ` of ${s.userEmail ?? other}` : '';
    return html`<tr data-session=${s.sessionName} data-owner=${s.userEmail ?? s.ownerAccessKey} data-status=${s.status}>
      <th scope="row" data-label="Name">${s.sessionName}</th>
      ${this.owners
        ? html`<td data-label="Owner" class=${s.userEmail ? '' : 'mono'}>${s.userEmail ?? s.ownerAccessKey}</td>`
        : ''}
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
              ? html`<a class="button small" href=${href('terminal', terminalArg(s.sessionName, other))}
                  aria-label="Open a terminal in session ${s.sessionName}${whose}">Terminal</a>
                ${(this.apps.get(s.image) ?? []).map(
                  (app) => html`<button type="button" class="small" @click=${() => this.#emit('open-app', s, { app: app.name })}
                    aria-label="Open ${app.name} of session ${s.sessionName}${whose} in a new tab">${app.name}</button>`,
                )}`
              : ''}
            ${s.status === 'PENDING'
              ? ''
              : html`<button type="button" class="small" @click=${() => this.#emit('show-logs', s)}
                  aria-label="Logs of session ${s.sessionName}${whose}">Logs</button>`}
            ${s.status === 'TERMINATING' || isTerminal(s.status)
              ? ''
              : html`<button
                  type="button"
                  class="danger small"
                  ?disabled=${this.busy.has(s.sessionId)}
                  aria-label="Delete session ${s.sessionName}${whose}"
                  @click=${() => this.#emit('delete-session', s, { id: s.sessionId })}
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
          ${this.owners ? html`<th scope="col">Owner</th>` : ''}
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
