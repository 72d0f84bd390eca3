/* folder-dialog.js - <folder-dialog>: a modal form that creates a folder
 * (POST /folders): its name, storage host (those GET /folders/_/hosts
 * allows, the default first chosen), usage mode, and for admins its
 * owner: themselves or one of their projects (GET /projects), whose
 * members get the permission chosen (a folder of one's own is the owner's
 * to read, write and delete).  show() opens it;
 * 'folder-created' (detail: the folder) follows a creation. */
import { html } from 'lit';
import { api } from './api.js';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { PERMISSIONS, USAGE_MODES, createFolder, storageHosts, validFolderName } from './folders.js';
import { errorNotice } from './notices.js';

const ADMIN_ROLES = ['admin', 'superadmin'];

class FolderDialog extends TesseraElement {
  static properties = {
    hosts: { state: true },
    projects: { state: true },
    project: { state: true },
    busy: { state: true },
    error: { state: true },
  };

  constructor() {
    super();
    this.hosts = null;
    this.projects = [];
    this.project = '';
    this.busy = false;
    this.error = null;
  }

  async show() {
    this.error = null;
    this.project = '';
    this.querySelector('form').reset();
    this.querySelector('dialog').showModal();
    try {
      const [hosts, projects] = await Promise.all([
        storageHosts(),
        this.#admin ? api('GET', '/projects') : null,
      ]);
      this.hosts = hosts;
      this.projects = (projects?.projects ?? []).map((p) => p.name);
    } catch (e) {
      this.error = e.message;
    }
  }

  get #admin() {
    return ADMIN_ROLES.includes(auth.user?.role);
  }

  #close() {
    this.querySelector('dialog').close();
  }

  async #submit(e) {
    e.preventDefault();
    const form = e.currentTarget;
    const name = form.folder.value.trim();
    if (!validFolderName(name))
      return (this.error =
        "A folder's name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (or a dot, for one mounted in every session).");
    const body = { name, host: form.host.value, usage_mode: form.usage.value };
    if (this.project) Object.assign(body, { group: this.project, permission: form.permission.value });
    this.busy = true;
    this.error = null;
    try {
      const folder = await createFolder(body);
      this.#close();
      this.dispatchEvent(new CustomEvent('folder-created', { detail: folder, bubbles: true }));
    } catch (err) {
      this.error = err.message;
    } finally {
      this.busy = false;
    }
  }

  #hostOptions() {
    const hosts = this.hosts;
    if (!hosts) return html`<option value="">Loading…</option>`;
    return hosts.allowed.map(
      (h) => html`<option value=${h} ?selected=${h === hosts.default}>${h}${h === hosts.default ? ' (default)' : ''}</option>`,
    );
  }

  render() {
    return html`<dialog class="dialog" aria-labelledby="folder-dialog-title">
      <form @submit=${this.#submit}>
        <h2 id="folder-dialog-title">New folder</h2>
        <div class="field">
          <label for="folder-name">Name</label>
          <input id="folder-name" name="folder" required maxlength="65" autocomplete="off" aria-describedby="folder-name-hint" />
          <p class="hint" id="folder-name-hint">Sessions mount it at /home/work/&lt;name&gt;; a name starting with a dot is mounted in every session.</p>
        </div>
        <div class="field-row">
          <div class="field">
            <label for="folder-host">Storage host</label>
            <select id="folder-host" name="host" required>${this.#hostOptions()}</select>
          </div>
          <div class="field">
            <label for="folder-usage">Usage</label>
            <select id="folder-usage" name="usage">${USAGE_MODES.map((m) => html`<option>${m}</option>`)}</select>
          </div>
        </div>
        ${this.#admin && this.projects.length
          ? html`<div class="field">
              <label for="folder-owner">Owner</label>
              <select id="folder-owner" name="owner" @change=${(e) => (this.project = e.target.value)}>
                <option value="">You</option>
                ${this.projects.map((p) => html`<option value=${p}>Project ${p}</option>`)}
              </select>
            </div>`
          : ''}
        ${this.project
          ? html`<div class="field">
              <label for="folder-permission">Members' permission</label>
              <select id="folder-permission" name="permission">
                ${PERMISSIONS.map((p) => html`<option value=${p.value} ?selected=${p.value === 'rw'}>${p.label}</option>`)}
              </select>
            </div>`
          : ''}
        ${errorNotice(this.error)}
        <div class="actions">
          <button type="button" @click=${this.#close}>Cancel</button>
          <button class="primary" type="submit" ?disabled=${this.busy || !this.hosts}>Create</button>
        </div>
      </form>
    </dialog>`;
  }
}

customElements.define('folder-dialog', FolderDialog);
