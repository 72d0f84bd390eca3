/* storage-page.js - <storage-page>: data & storage.
 *
 * #/storage: the folders the user may use (GET /folders) with host,
 * usage, permission, owner and status, or those in the trash; the
 * invitations waiting for an answer (invitation-list); a new folder
 * (folder-dialog); sharing a folder one owns (share-dialog); a folder to
 * the trash, and back or purged for good; leaving a folder another user
 * shared (each but restoring asks first).
 * #/storage/<folder>/<path>: the files of a folder (folder-browser). */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import {
  TRASH,
  leaveFolder,
  listFolders,
  parseBrowseArg,
  permissionLabel,
  purgeFolder,
  restoreFolder,
  trashFolder,
} from './folders.js';
import { errorNotice, loadNotice } from './notices.js';
import { href, router } from './router.js';
import { tableHead } from './table-head.js';
import './confirm-dialog.js';
import './folder-browser.js';
import './folder-dialog.js';
import './invitation-list.js';
import './share-dialog.js';

/* Who owns a folder, for the one who sees it. */
function ownerOf(f) {
  if (f.ownership_type === 'project') return f.is_owner ? 'Project (you manage it)' : 'Project';
  return f.is_owner ? 'You' : `Shared by ${f.creator}`;
}

class StoragePage extends TesseraElement {
  static properties = {
    folders: { state: true },
    showTrash: { state: true },
    busy: { state: true },
    error: { state: true },
    loadError: { state: true },
  };

  #route = parseBrowseArg(router.route.arg);

  constructor() {
    super();
    this.folders = null;
    this.showTrash = false;
    this.busy = new Set();
    this.error = this.loadError = null;
  }

  connectedCallback() {
    super.connectedCallback();
    if (!this.#route.folder) this.#load();
  }

  async #load() {
    try {
      this.folders = await listFolders(this.showTrash ? TRASH : null);
      this.loadError = null;
    } catch (e) {
      this.loadError = e;
    }
  }

  #show(trash) {
    this.showTrash = trash;
    this.folders = null;
    this.#load();
  }

  /* Runs action on folder f after the question, if any, was answered yes. */
  async #act(f, question, action) {
    if (question && !(await this.querySelector('confirm-dialog').ask(question))) return;
    this.error = null;
    this.busy = new Set([...this.busy, f.id]);
    try {
      await action();
      await this.#load();
    } catch (e) {
      this.error = `${f.name}: ${e.message}`;
    } finally {
      this.busy = new Set([...this.busy].filter((id) => id !== f.id));
    }
  }

  #trash(f) {
    return this.#act(
      f,
      { title: `Move ${f.name} to the trash?`, message: 'Sessions can no longer mount it; you can restore it from the trash.', confirm: 'Move to trash' },
      () => trashFolder(f.name),
    );
  }

  #purge(f) {
    return this.#act(
      f,
      { title: `Delete ${f.name} for good?`, message: 'Its files are deleted; this cannot be undone.', confirm: 'Delete for good' },
      () => purgeFolder(f.id),
    );
  }

  #leave(f) {
    return this.#act(
      f,
      { title: `Leave ${f.name}?`, message: `You stop using it; ${f.creator} can invite you again.`, confirm: 'Leave' },
      () => leaveFolder(f.name),
    );
  }

  #actions(f) {
    const busy = this.busy.has(f.id);
    if (this.showTrash)
      return html`<button type="button" class="small" ?disabled=${busy} aria-label="Restore ${f.name}"
          @click=${() => this.#act(f, null, () => restoreFolder(f.id))}>Restore</button>
        <button type="button" class="danger small" ?disabled=${busy} aria-label="Delete ${f.name} for good"
          @click=${() => this.#purge(f)}>Delete for good</button>`;
    if (!f.is_owner)
      return f.ownership_type === 'user'
        ? html`<button type="button" class="small" ?disabled=${busy} aria-label="Leave ${f.name}"
            @click=${() => this.#leave(f)}>Leave</button>`
        : '';
    return html`<button type="button" class="small" aria-label="Share ${f.name}"
        @click=${() => this.querySelector('share-dialog').show(f)}>Share</button>
      <button type="button" class="danger small" ?disabled=${busy} aria-label="Move ${f.name} to the trash"
        @click=${() => this.#trash(f)}>Delete</button>`;
  }

  #row(f) {
    return html`<tr data-folder=${f.name}>
      <th scope="row" data-label="Name">
        ${this.showTrash ? f.name : html`<a href=${href('storage', f.name)}>${f.name}</a>`}
      </th>
      <td data-label="Host">${f.host}</td>
      <td data-label="Usage">${f.usage_mode}</td>
      <td data-label="Permission">${permissionLabel(f.permission)}</td>
      <td data-label="Owner">${ownerOf(f)}</td>
      <td data-label="Status">${f.status}</td>
      <td data-label="Actions" class="actions-cell"><span class="row-actions">${this.#actions(f)}</span></td>
    </tr>`;
  }

  #table() {
    const notice = loadNotice(this.loadError, this.folders, 'folders');
    if (notice) return notice;
    if (!this.folders.length)
      return html`<p class="muted">${this.showTrash ? 'The trash is empty.' : 'You have no folders yet.'}</p>`;
    return html`<table class="data-table">
      ${tableHead(this.showTrash ? 'Folders in the trash' : 'Folders', ['Name', 'Host', 'Usage', 'Permission', 'Owner', 'Status'])}
      <tbody>
        ${this.folders.map((f) => this.#row(f))}
      </tbody>
    </table>`;
  }

  render() {
    if (this.#route.folder)
      return html`<folder-browser .folder=${this.#route.folder} .path=${this.#route.path}></folder-browser>`;
    return html`<div class="page-head">
        <h1>Storage</h1>
        <button type="button" class="primary" @click=${() => this.querySelector('folder-dialog').show()}>New folder</button>
      </div>
      <invitation-list @invitation-accepted=${() => this.#load()}></invitation-list>
      <div class="segmented" role="group" aria-label="Which folders">
        <button type="button" aria-pressed=${this.showTrash ? 'false' : 'true'} @click=${() => this.#show(false)}>Folders</button>
        <button type="button" aria-pressed=${this.showTrash ? 'true' : 'false'} @click=${() => this.#show(true)}>Trash</button>
      </div>
      ${errorNotice(this.error)}
      ${this.#table()}
      <folder-dialog @folder-created=${() => this.#show(false)}></folder-dialog>
      <share-dialog></share-dialog>
      <confirm-dialog></confirm-dialog>`;
  }
}

customElements.define('storage-page', StoragePage);
