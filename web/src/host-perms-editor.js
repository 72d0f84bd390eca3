/* host-perms-editor.js - <host-perms-editor>: an object of storage host ->
 * permissions (allowed_vfolder_hosts of a domain, project or keypair
 * resource policy) edited as rows: a host name, then a checkbox per
 * permission the manager knows (HOST_PERMISSIONS of admin-form.js), and a
 * button to remove the row; another adds a row.  .rows is [[host,
 * [permission, ...]], ...]; every edit sends 'rows-change' with the new
 * rows in detail.  .hosts (names) are offered in a datalist.  Each row is
 * a group named "Host N"; its name input is "Host N name", its checkboxes
 * are labelled with the permission's name. */
import { html, nothing } from 'lit';
import { HOST_PERMISSIONS } from './admin-form.js';
import { TesseraElement } from './element.js';

let lists = 0;

class HostPermsEditor extends TesseraElement {
  static properties = {
    rows: { attribute: false },
    hosts: { attribute: false },
  };

  #listId = `host-list-${++lists}`;

  constructor() {
    super();
    this.rows = [];
    this.hosts = [];
  }

  #emit(rows) {
    this.rows = rows;
    this.dispatchEvent(new CustomEvent('rows-change', { detail: rows, bubbles: true }));
  }

  #setHost(i, host) {
    this.#emit(this.rows.map((r, k) => (k === i ? [host, r[1]] : r)));
  }

  #setPerm(i, perm, on) {
    this.#emit(
      this.rows.map((r, k) =>
        k === i ? [r[0], on ? [...new Set([...r[1], perm])] : r[1].filter((p) => p !== perm)] : r,
      ),
    );
  }

  async #add() {
    this.#emit([...this.rows, ['', []]]);
    await this.updateComplete;
    this.querySelector(`input[data-row="${this.rows.length - 1}"]`)?.focus();
  }

  #row([host, perms], i) {
    const all = HOST_PERMISSIONS.every((p) => perms.includes(p));
    return html`<fieldset class="host-perms">
      <legend class="visually-hidden">Host ${i + 1}</legend>
      <div class="host-perms-head">
        <input
          data-row=${i}
          aria-label="Host ${i + 1} name"
          placeholder="host"
          list=${this.hosts.length ? this.#listId : nothing}
          .value=${host}
          @input=${(e) => this.#setHost(i, e.target.value)}
        />
        <button type="button" class="small" aria-label="${all ? 'No' : 'All'} permissions on host ${i + 1}"
          @click=${() => this.#emit(this.rows.map((r, k) => (k === i ? [r[0], all ? [] : [...HOST_PERMISSIONS]] : r)))}>
          ${all ? 'None' : 'All'}
        </button>
        <button type="button" class="small" aria-label="Remove host ${i + 1}"
          @click=${() => this.#emit(this.rows.filter((_, k) => k !== i))}>Remove</button>
      </div>
      <div class="host-perms-checks">
        ${HOST_PERMISSIONS.map(
          (p) => html`<label><input type="checkbox" .checked=${perms.includes(p)}
            @change=${(e) => this.#setPerm(i, p, e.target.checked)} /> ${p}</label>`,
        )}
      </div>
    </fieldset>`;
  }

  render() {
    return html`${this.hosts.length
        ? html`<datalist id=${this.#listId}>${this.hosts.map((h) => html`<option value=${h}></option>`)}</datalist>`
        : nothing}
      ${this.rows.length ? nothing : html`<p class="muted">No host.</p>`}
      ${this.rows.map((r, i) => this.#row(r, i))}
      <button type="button" class="small" @click=${() => this.#add()}>Add a host</button>`;
  }
}

customElements.define('host-perms-editor', HostPermsEditor);
