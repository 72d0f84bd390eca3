/* upload-panel.js - <upload-panel>: files into a directory (.dir) of a
 * folder (.folder): dropped on the zone or chosen with the picker (a
 * button, so that the keyboard reaches it).  Lists every upload of the
 * page (upload-store.js) with its progress, and pause, resume or remove;
 * a failed or retrying one says why.  Directories dropped are left out
 * (only files go).  Uploads a page reload interrupted are listed too,
 * each resumed when the user chooses its file again. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { formatBytes, formatDuration } from './format.js';
import { errorNotice } from './notices.js';
import { StoreController } from './store-controller.js';
import { uploadStore } from './upload-store.js';

const STATE_TEXT = {
  queued: 'waiting',
  uploading: 'uploading',
  retrying: 'interrupted',
  paused: 'paused',
  done: 'done',
  failed: 'failed',
};

/* The files of a drop, without directories. */
function droppedFiles(dataTransfer) {
  const items = [...(dataTransfer.items ?? [])];
  if (!items.length) return [...dataTransfer.files];
  return items
    .filter((i) => i.kind === 'file' && !i.webkitGetAsEntry?.()?.isDirectory)
    .map((i) => i.getAsFile())
    .filter(Boolean);
}

class UploadPanel extends TesseraElement {
  static properties = {
    folder: {},
    dir: {},
    over: { state: true },
    error: { state: true },
  };

  #resuming = null;

  constructor() {
    super();
    this.folder = '';
    this.dir = '';
    this.over = false;
    this.error = null;
    new StoreController(this, uploadStore);
  }

  #add(files) {
    if (files.length) uploadStore.add(this.folder, this.dir, files);
  }

  #picked(e) {
    this.#add([...e.target.files]);
    e.target.value = '';
  }

  #chooseAgain(entry) {
    this.#resuming = entry;
    this.querySelector('.resume-input').click();
  }

  #pickedAgain(e) {
    const [file] = e.target.files;
    e.target.value = '';
    if (!file || !this.#resuming) return;
    try {
      uploadStore.resumeInterrupted(this.#resuming, file);
      this.error = null;
    } catch (err) {
      this.error = err.message;
    }
    this.#resuming = null;
  }

  #dragOver(e) {
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    this.over = true;
  }

  #drop(e) {
    e.preventDefault();
    this.over = false;
    this.#add(droppedFiles(e.dataTransfer));
  }

  #why(u) {
    if (u.state === 'retrying')
      return `${u.error?.message ?? ''} Resuming in ${formatDuration(Math.max(0, u.retryAt - Date.now()))}.`;
    return u.state === 'failed' ? u.error?.message ?? '' : '';
  }

  #item(u) {
    const label = `${u.folder}/${u.path}`;
    return html`<li class="upload" data-upload=${label} data-state=${u.state}>
      <div class="upload-head">
        <span class="upload-name">${label}</span>
        <span class="muted small">${formatBytes(u.sent)} of ${formatBytes(u.size)} · ${STATE_TEXT[u.state]}</span>
        <span class="row-actions">
          ${u.state === 'uploading' || u.state === 'retrying' || u.state === 'queued'
            ? html`<button type="button" class="small" aria-label="Pause ${label}" @click=${() => uploadStore.pause(u)}>Pause</button>`
            : ''}
          ${u.state === 'paused'
            ? html`<button type="button" class="small" aria-label="Resume ${label}" @click=${() => uploadStore.resume(u)}>Resume</button>`
            : ''}
          ${u.finished
            ? ''
            : html`<button type="button" class="small" aria-label="Remove ${label}" @click=${() => uploadStore.remove(u)}>Remove</button>`}
        </span>
      </div>
      <progress max=${u.size || 1} .value=${u.size ? u.sent : u.state === 'done' ? 1 : 0} aria-label="Upload of ${label}"></progress>
      ${this.#why(u) ? html`<p class=${u.state === 'failed' ? 'error' : 'warning'}>${this.#why(u)}</p>` : ''}
    </li>`;
  }

  #interruptedItem(entry) {
    const label = `${entry.folder}/${entry.path}`;
    return html`<li class="upload" data-interrupted=${label}>
      <div class="upload-head">
        <span class="upload-name">${label}</span>
        <span class="muted small">${formatBytes(entry.sent)} of ${formatBytes(entry.size)} · stopped when the page was left</span>
        <span class="row-actions">
          <button type="button" class="small" aria-label="Resume ${label}: choose the file again" @click=${() => this.#chooseAgain(entry)}>Choose again</button>
          <button type="button" class="small" aria-label="Forget ${label}" @click=${() => uploadStore.forget(entry)}>Forget</button>
        </span>
      </div>
    </li>`;
  }

  render() {
    const uploads = uploadStore.uploads, interrupted = uploadStore.interrupted;
    return html`<div
        class="drop-zone ${this.over ? 'over' : ''}"
        @dragover=${this.#dragOver}
        @dragleave=${() => (this.over = false)}
        @drop=${this.#drop}
      >
        <span>Drop files here to upload them to ${this.dir ? `${this.folder}/${this.dir}` : this.folder}, or</span>
        <button type="button" @click=${() => this.querySelector('input[multiple]').click()}>Choose files…</button>
        <input type="file" multiple hidden aria-label="Files to upload" @change=${this.#picked} />
        <input type="file" class="resume-input" hidden aria-label="The file to resume" @change=${this.#pickedAgain} />
      </div>
      ${interrupted.length
        ? html`<section class="uploads" aria-label="Interrupted uploads">
            <ul class="plain-list">
              ${interrupted.map((entry) => this.#interruptedItem(entry))}
            </ul>
          </section>`
        : ''}
      ${errorNotice(this.error)}
      ${uploads.length
        ? html`<section class="uploads" aria-label="Uploads">
            <ul class="plain-list">
              ${uploads.map((u) => this.#item(u))}
            </ul>
            ${uploads.some((u) => u.finished)
              ? html`<button type="button" class="small" @click=${() => uploadStore.clearFinished()}>Clear finished</button>`
              : ''}
          </section>`
        : ''}`;
  }
}

customElements.define('upload-panel', UploadPanel);
