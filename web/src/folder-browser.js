/* folder-browser.js - <folder-browser>: the files of one directory
 * (.path, '' for the top) of a folder (.folder, its name), with the
 * folder's host, permission and use (GET /folders/{name}).  A directory
 * opens (#/storage/<folder>/<path>, so that a reload stays there), a file
 * or directory downloads (request-download, then its URL: a directory
 * comes as a tar); with rw a new directory, renames and uploads
 * (upload-panel), with wd deletions (each asks first).  The listing is
 * read again when an upload into this directory arrives. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import {
  browseArg,
  deleteFiles,
  folderInfo,
  joinPath,
  listFiles,
  makeDirectory,
  parentPath,
  pathSteps,
  permissionLabel,
  renameFile,
  requestDownload,
  transferUrl,
  validFileName,
} from './folders.js';
import { formatBytes } from './format.js';
import { errorNotice, loadNotice } from './notices.js';
import { href } from './router.js';
import { tableHead } from './table-head.js';
import { uploadStore } from './upload-store.js';
import './confirm-dialog.js';
import './upload-panel.js';

const NAME_RULE = 'A name is 1 to 255 bytes, without "/" or control characters, and not "." or "..".';
const checkName = (name) => (validFileName(name) ? null : NAME_RULE);

/* Directories first, then by name. */
const byKindAndName = (a, b) => (a.type === 'DIRECTORY') !== (b.type === 'DIRECTORY')
  ? (a.type === 'DIRECTORY' ? -1 : 1)
  : a.name.localeCompare(b.name);

class FolderBrowser extends TesseraElement {
  static properties = {
    folder: {},
    path: {},
    info: { state: true },
    files: { state: true },
    loadError: { state: true },
    error: { state: true },
    busy: { state: true },
  };

  constructor() {
    super();
    this.folder = '';
    this.path = '';
    this.info = this.files = this.loadError = this.error = null;
    this.busy = false;
  }

  connectedCallback() {
    super.connectedCallback();
    uploadStore.addEventListener('uploaded', this.#uploaded);
    this.#load();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    uploadStore.removeEventListener('uploaded', this.#uploaded);
  }

  #uploaded = (e) => {
    const { folder, path } = e.detail;
    if (folder === this.folder && parentPath(path) === this.path) this.#load();
  };

  async #load() {
    try {
      const [info, files] = await Promise.all([folderInfo(this.folder), listFiles(this.folder, this.path)]);
      this.info = info;
      this.files = files.sort(byKindAndName);
      this.loadError = null;
    } catch (e) {
      this.loadError = e;
    }
  }

  get #canWrite() {
    return ['rw', 'wd'].includes(this.info?.permission);
  }

  get #canDelete() {
    return this.info?.permission === 'wd';
  }

  get #dialog() {
    return this.querySelector('confirm-dialog');
  }

  async #do(action) {
    this.busy = true;
    this.error = null;
    try {
      await action();
      await this.#load();
    } catch (e) {
      this.error = e.message;
    } finally {
      this.busy = false;
    }
  }

  async #newDirectory() {
    const name = await this.#dialog.prompt({ title: 'New directory', label: 'Name', confirm: 'Create', check: checkName });
    if (name) this.#do(() => makeDirectory(this.folder, joinPath(this.path, name)));
  }

  async #rename(file) {
    const name = await this.#dialog.prompt({
      title: `Rename ${file.name}`,
      label: 'New name',
      value: file.name,
      confirm: 'Rename',
      check: checkName,
    });
    if (name && name !== file.name) this.#do(() => renameFile(this.folder, joinPath(this.path, file.name), name));
  }

  async #delete(file) {
    const directory = file.type === 'DIRECTORY';
    const yes = await this.#dialog.ask({
      title: `Delete ${file.name}?`,
      message: directory ? 'The directory and everything in it are deleted.' : 'The file is deleted.',
      confirm: 'Delete',
    });
    if (yes) this.#do(() => deleteFiles(this.folder, [joinPath(this.path, file.name)]));
  }

  /* The browser downloads what the token's URL sends (an attachment). */
  async #download(path) {
    this.error = null;
    try {
      const link = document.createElement('a');
      link.href = transferUrl(await requestDownload(this.folder, path), window.location.href);
      link.download = '';
      link.click();
    } catch (e) {
      this.error = e.message;
    }
  }

  #crumbs() {
    const steps = pathSteps(this.path);
    return html`<nav class="crumbs" aria-label="Path">
      <ol>
        <li><a href=${href('storage')}>Storage</a></li>
        <li>
          ${steps.length
            ? html`<a href=${href('storage', browseArg(this.folder))}>${this.folder}</a>`
            : html`<span aria-current="page">${this.folder}</span>`}
        </li>
        ${steps.map((s, i) => html`<li>
          ${i === steps.length - 1
            ? html`<span aria-current="page">${s.name}</span>`
            : html`<a href=${href('storage', browseArg(this.folder, s.path))}>${s.name}</a>`}
        </li>`)}
      </ol>
    </nav>`;
  }

  #row(f) {
    const path = joinPath(this.path, f.name), directory = f.type === 'DIRECTORY';
    return html`<tr data-file=${f.name} data-type=${f.type}>
      <th scope="row" data-label="Name">
        ${directory ? html`<a href=${href('storage', browseArg(this.folder, path))}>${f.name}/</a>` : f.name}
      </th>
      <td data-label="Size">${directory ? '—' : formatBytes(f.size)}</td>
      <td data-label="Modified">${new Date(f.modified).toLocaleString()}</td>
      <td data-label="Actions" class="actions-cell"><span class="row-actions">
        <button type="button" class="small" aria-label="Download ${f.name}" @click=${() => this.#download(path)}>Download</button>
        ${this.#canWrite
          ? html`<button type="button" class="small" ?disabled=${this.busy} aria-label="Rename ${f.name}"
              @click=${() => this.#rename(f)}>Rename</button>`
          : ''}
        ${this.#canDelete
          ? html`<button type="button" class="danger small" ?disabled=${this.busy} aria-label="Delete ${f.name}"
              @click=${() => this.#delete(f)}>Delete</button>`
          : ''}
      </span></td>
    </tr>`;
  }

  #table() {
    const notice = loadNotice(this.loadError, this.files, 'files');
    if (notice) return notice;
    if (!this.files.length) return html`<p class="muted">This directory is empty.</p>`;
    return html`<table class="data-table file-table">
      ${tableHead(`Files in ${this.path || this.folder}`, ['Name', 'Size', 'Modified'])}
      <tbody>
        ${this.files.map((f) => this.#row(f))}
      </tbody>
    </table>`;
  }

  render() {
    const info = this.info;
    return html`${this.#crumbs()}
      <div class="page-head">
        <h1>${this.path ? this.path.split('/').pop() : this.folder}</h1>
        ${this.#canWrite
          ? html`<button type="button" ?disabled=${this.busy} @click=${this.#newDirectory}>New directory</button>`
          : ''}
        <button type="button" @click=${() => this.#download(this.path)}>Download ${this.path ? 'directory' : 'folder'}</button>
      </div>
      ${info
        ? html`<p class="muted folder-facts">
            ${info.host} · ${permissionLabel(info.permission)} · ${info.usage_mode} · ${formatBytes(info.used_bytes)} in
            ${info.num_files} ${info.num_files === 1 ? 'file' : 'files'} · mounted at /home/work/${info.name}
          </p>`
        : ''}
      ${this.#canWrite ? html`<upload-panel .folder=${this.folder} .dir=${this.path}></upload-panel>` : ''}
      ${errorNotice(this.error)}
      ${this.#table()}
      <confirm-dialog></confirm-dialog>`;
  }
}

customElements.define('folder-browser', FolderBrowser);
