/* tus-upload.js - one file into a folder, resumable: the tus 1.0 flow of
 * the manager (docs/vfolder-transfers.md,
 * src/manager/vfolder/api_vfolder_transfer.c).
 *
 *   POST /folders/{name}/request-upload {path, size}  -> {token, url}
 *   POST   url?token=  Upload-Length       creates it, or finds the part
 *                                          sent before: Upload-Offset
 *   PATCH  url?token=  Upload-Offset + the next CHUNK_BYTES of the file
 *   HEAD   url?token=  Upload-Offset, to resume
 *
 * The file is read a chunk at a time (File.slice), never whole.  The
 * server keeps what complete PATCHes sent, under a name made of folder,
 * path, size and user: after a failure (the network, the manager, a 5xx)
 * the upload asks HEAD for the offset and goes on from there after
 * retryDelay() (backoff.js); pause() stops it and run() resumes it the
 * same way; a new upload of the same file to the same path, even after a
 * page reload, resumes from what the server has (POST answers its
 * offset).  A HEAD that finds nothing after the last chunk was sent means
 * that chunk arrived: the file is in place.  Other refusals (permission,
 * quota) fail it with the manager's sentence.
 *
 * state: 'queued', 'uploading', 'retrying' (at retryAt), 'paused',
 * 'done' or 'failed' (error); sent: bytes the server has, plus those of
 * the chunk in flight.  'change' follows each change. */
import { ApiError, errorFrom } from './api.js';
import { retryDelay } from './backoff.js';
import { requestUpload, transferUrl } from './folders.js';

const CHUNK_BYTES = 8 * 2 ** 20; /* the manager buffers a PATCH whole (max_upload: 64 MiB) */
const TUS_HEADERS = { 'Tus-Resumable': '1.0.0' };
const PAUSED = -1;

/* Worth trying again: no answer, a conflict of offsets, a busy or failing manager. */
const retryable = (e) => e.status === 0 || e.status === 409 || e.status === 429 || e.status >= 500;

function offsetOf(xhr) {
  const n = Number.parseInt(xhr.getResponseHeader('Upload-Offset') ?? '', 10);
  if (!Number.isFinite(n) || n < 0) throw new ApiError('The manager answered no Upload-Offset.', { status: 502 });
  return n;
}

export class TusUpload extends EventTarget {
  state = 'queued';
  sent = 0;
  error = null;
  retryAt = 0;
  #failures = 0;
  #endpoint = null; /* url?token= of the tus routes */
  #lastSent = false; /* a PATCH with the last byte went out */
  #xhr = null;
  #wake = null;

  /* folder: its name; path: the file's path in it; file: a File (or Blob). */
  constructor(folder, path, file) {
    super();
    this.folder = folder;
    this.path = path;
    this.file = file;
    this.size = file.size;
  }

  get finished() {
    return this.state === 'done' || this.state === 'failed';
  }

  /* Runs until the file is in place, it failed, or it is paused. */
  async run() {
    if (this.finished || this.state === 'uploading' || this.state === 'retrying') return;
    this.#set('uploading');
    for (;;) {
      try {
        if (this.#endpoint === null) await this.#create();
        else await this.#resume();
        while (this.sent < this.size) await this.#patch();
        this.#set('done');
        return;
      } catch (e) {
        if (this.state === 'paused') return;
        if (!retryable(e)) {
          this.error = e;
          return this.#set('failed');
        }
        if (e.status !== 409) await this.#wait(e);
        if (this.state === 'paused') return;
        this.#set('uploading');
      }
    }
  }

  /* Stops sending; run() resumes from the server's offset. */
  pause() {
    if (this.finished) return;
    this.#set('paused');
    this.#xhr?.abort();
    this.#wake?.();
  }

  async #create() {
    this.#endpoint = transferUrl(await requestUpload(this.folder, this.path, this.size), window.location.href);
    const xhr = await this.#send('POST', { 'Upload-Length': String(this.size) });
    this.sent = offsetOf(xhr);
  }

  async #resume() {
    try {
      this.sent = offsetOf(await this.#send('HEAD'));
    } catch (e) {
      if (e.status === 404 && this.#lastSent) return (this.sent = this.size);
      /* 403 or 404: the token expired, or the part is gone: a new token */
      if (e.status === 403 || e.status === 404) return this.#create();
      throw e;
    }
  }

  async #patch() {
    const from = this.sent, chunk = this.file.slice(from, from + CHUNK_BYTES);
    this.#lastSent = from + chunk.size >= this.size;
    try {
      const xhr = await this.#send(
        'PATCH',
        { 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(from) },
        chunk,
        (loaded) => this.#progress(from + Math.min(loaded, chunk.size)),
      );
      this.sent = offsetOf(xhr);
      this.#failures = 0;
    } catch (e) {
      this.sent = from;
      throw e;
    }
  }

  /* One tus request; resolves the XMLHttpRequest of a 2xx answer. */
  #send(method, headers = {}, body = null, onProgress = null) {
    return new Promise((resolve, reject) => {
      if (this.state === 'paused') return reject(new ApiError('Paused.', { status: PAUSED }));
      const xhr = new XMLHttpRequest();
      xhr.open(method, this.#endpoint);
      for (const [name, value] of Object.entries({ ...TUS_HEADERS, ...headers })) xhr.setRequestHeader(name, value);
      if (onProgress) xhr.upload.addEventListener('progress', (e) => onProgress(e.loaded));
      xhr.addEventListener('load', () => {
        if (xhr.status < 300) return resolve(xhr);
        const answer = new Response(xhr.responseText || null, {
          status: xhr.status,
          headers: { 'Content-Type': xhr.getResponseHeader('Content-Type') ?? '' },
        });
        errorFrom(answer).then(reject);
      });
      xhr.addEventListener('error', () =>
        reject(new ApiError('The upload was cut off: the network or the manager is down.', { status: 0 })),
      );
      xhr.addEventListener('abort', () => reject(new ApiError('Paused.', { status: PAUSED })));
      this.#xhr = xhr;
      xhr.send(body);
    });
  }

  /* Waits retryDelay() before the next try, or until pause(). */
  #wait(error) {
    const delay = retryDelay(this.#failures++);
    this.error = error;
    this.retryAt = Date.now() + delay;
    this.#set('retrying');
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, delay);
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  #progress(sent) {
    this.sent = sent;
    this.dispatchEvent(new Event('change'));
  }

  #set(state) {
    this.state = state;
    if (state === 'uploading' || state === 'done') this.error = null;
    this.dispatchEvent(new Event('change'));
  }
}
