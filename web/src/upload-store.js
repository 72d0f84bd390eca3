/* upload-store.js - the uploads of this page's life, one file at a time
 * (tus-upload.js), kept across navigation so that moving to another
 * directory or page does not stop them.  add() queues files for a
 * directory of a folder; pause(), resume() and remove() act on one;
 * clearFinished() forgets those done or failed.  'change' follows every
 * change of an upload; 'uploaded' (detail: {folder, path}) each file that
 * arrived, so that a listing of its directory can be read again. */
import { joinPath } from './folders.js';
import { TusUpload } from './tus-upload.js';

class UploadStore extends EventTarget {
  uploads = [];
  #running = null;

  /* files: a FileList or array of File, into `dir` of `folder`. */
  add(folder, dir, files) {
    for (const file of files) {
      const upload = new TusUpload(folder, joinPath(dir, file.name), file);
      upload.addEventListener('change', () => this.#changed(upload));
      this.uploads = [...this.uploads, upload];
    }
    this.dispatchEvent(new Event('change'));
    this.#next();
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
    this.dispatchEvent(new Event('change'));
  }

  clearFinished() {
    this.uploads = this.uploads.filter((u) => !u.finished);
    this.dispatchEvent(new Event('change'));
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

  #changed(upload) {
    if (upload.state === 'done')
      this.dispatchEvent(new CustomEvent('uploaded', { detail: { folder: upload.folder, path: upload.path } }));
    this.dispatchEvent(new Event('change'));
  }
}

export const uploadStore = new UploadStore();
