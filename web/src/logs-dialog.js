/* logs-dialog.js - <logs-dialog>: what a session's container printed (GET
 * /session/{name}/logs: the output so far of a running session, the end
 * kept of a finished one), in a modal with Refresh.  show(name, owner)
 * opens it; owner is the access key of another owner's session (admins),
 * sent as owner_access_key. */
import { html } from 'lit';
import { api, query } from './api.js';
import { DialogElement } from './dialog-element.js';
import { errorNotice } from './notices.js';

class LogsDialog extends DialogElement {
  static properties = {
    name: { state: true },
    owner: { state: true },
    logs: { state: true },
    error: { state: true },
    busy: { state: true },
  };

  constructor() {
    super();
    this.name = '';
    this.owner = null;
    this.logs = null;
    this.error = null;
    this.busy = false;
  }

  async show(name, owner = null) {
    this.name = name;
    this.owner = owner;
    this.logs = this.error = null;
    this.#load();
    await this.openDialog('.close');
  }

  async #load() {
    this.busy = true;
    try {
      const path = `/session/${encodeURIComponent(this.name)}/logs${query({ owner_access_key: this.owner })}`;
      const answer = await api('GET', path);
      this.logs = answer?.result?.logs ?? '';
      this.error = null;
    } catch (err) {
      this.error = err.message;
    } finally {
      this.busy = false;
    }
  }

  render() {
    return html`<dialog class="dialog wide" aria-labelledby="logs-title">
      <h2 id="logs-title">Logs of ${this.name}</h2>
      ${errorNotice(this.error)}
      ${this.logs === null
        ? html`<p class="muted" role="status">Loading…</p>`
        : html`<pre class="logs" tabindex="0" aria-label="The output of ${this.name}">${this.logs || '(nothing printed yet)'}</pre>`}
      <div class="actions">
        <button type="button" ?disabled=${this.busy} @click=${() => this.#load()}>Refresh</button>
        <button type="button" class="close" @click=${() => this.closeDialog()}>Close</button>
      </div>
    </dialog>`;
  }
}

customElements.define('logs-dialog', LogsDialog);
