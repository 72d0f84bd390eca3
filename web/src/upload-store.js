/* upload-store.js - the uploads of this page's life, one file at a time
 * (tus-upload.js), kept across navigation so that moving to another
 * directory or page does not stop them.  add() queues files for a
 * directory of a folder; pause(), resume() and remove() act on one;
 * clearFinished() forgets those done or failed.  'change' follows every
 * change of an upload; 'uploaded' (detail: {folder, path}) each file that
 * arrived, so that a listing of its directory can be read again.
 *
 * A page can only read a file the user chose in it: after a reload the
 * uploads left unfinished are `interrupted` ({user, folder, path, size,
 * sent}, kept in localStorage), until the user chooses the same file
 * again (resumeInterrupted: the server still has what it received, so
 * the upload goes on from there) or forgets it. */
import { auth } from './auth.js';
import { joinPath, parentPath } from './folders.js';
import { TusUpload } from './tus-upload.js';

const SAVED_KEY = 'tessera.unfinished-uploads';

function loadSaved() {
  try {
    const saved = JSON.parse(localStorage.getItem(SAVED_KEY) ?? '[]');
    return Array.isArray(saved) ? saved : [];
  } catch {
    return [];
  }
}

class UploadStore extends EventTarget {
  uploads = [];
  #interrupted = loadSaved();
  #running = null;

  /* The current user's uploads interrupted by a page reload. */
  get interrupted() {
    return this.#interrupted.filter((i) => i.user === auth.user?.accessKey);
  }

  /* files: a FileList or array of File, into `dir` of `folder`. */
  add(folder, dir, files) {
    for (const file of files) {
      const upload = new TusUpload(folder, joinPath(dir, file.name), file);
      upload.addEventListener('change', () => this.#changed(upload));
      this.uploads = [...this.uploads, upload];
    }
    this.#changed(null);
    this.#next();
  }

  /* Throws an Error when `file` cannot be the one that was being sent. */
  resumeInterrupted(entry, file) {
    if (file.name !== entry.path.split('/').pop() || file.size !== entry.size)
      throw new Error(`${file.name} is not the file that was being uploaded to ${entry.folder}/${entry.path}.`);
    this.forget(entry);
    this.add(entry.folder, parentPath(entry.path), [file]);
  }

  /* The user gives up on it (what the server received stays there). */
  forget(entry) {
    this.#interrupted = this.#interrupted.filter((i) => i !== entry);
    this.#changed(null);
  }

  pause(upload) {
    upload.pause();
  }

  resume(upload) {
    if (upload.state !== 'paused') return;
    upload.state = 'queued';
    this.#changed(upload);
    this.#next();
  }

  /* Stops it and drops it from the list; what the server has of it stays
   * there, so that adding the file again resumes it. */
  remove(upload) {
    upload.pause();
    this.uploads = this.uploads.filter((u) => u !== upload);
    this.#changed(null);
  }

  clearFinished() {
    this.uploads = this.uploads.filter((u) => !u.finished);
    this.#changed(null);
  }

  async #next() {
    if (this.#running) return;
    const upload = this.uploads.find((u) => u.state === 'queued');
    if (!upload) return;
    this.#running = upload;
    await upload.run();
    this.#running = null;
    this.#next();
  }

  /* What a reload would leave unfinished: the interrupted and the unfinished. */
  #save() {
    const user = auth.user?.accessKey;
    const unfinished = this.uploads
      .filter((u) => !u.finished)
      .map(({ folder, path, size, sent }) => ({ user, folder, path, size, sent }));
    try {
      localStorage.setItem(SAVED_KEY, JSON.stringify([...this.#interrupted, ...unfinished]));
    } catch {
      /* private mode or full: uploads work, a reload forgets them */
    }
  }

  #changed(upload) {
    if (upload?.state === 'done')
      this.dispatchEvent(new CustomEvent('uploaded', { detail: { folder: upload.folder, path: upload.path } }));
    this.#save();
    this.dispatchEvent(new Event('change'));
  }
}

export const uploadStore = new UploadStore();
