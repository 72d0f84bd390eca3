/* task-dialog.js - <task-dialog>: a background task of the manager (a
 * registry rescan) followed live.  follow(taskId, title, describe) opens
 * the dialog, follows GET /events/background-task?taskId= (server-sent
 * events: bgtask_updated, then bgtask_done, _failed or _cancelled) with a
 * progress bar and the task's message, and at the end reads the task
 * (GET /background-tasks/{id}) and shows describe(result).  Resolves when
 * the dialog is closed; closing it stops following (the task goes on). */
import { html, nothing } from 'lit';
import { api, openEventStream, query } from './api.js';
import { DialogElement } from './dialog-element.js';
import { errorNotice } from './notices.js';

const EVENTS = ['bgtask_updated', 'bgtask_done', 'bgtask_failed', 'bgtask_cancelled'];

class TaskDialog extends DialogElement {
  static properties = {
    title: { state: true },
    state: { state: true },
    outcome: { state: true },
    error: { state: true },
  };

  #source = null;

  constructor() {
    super();
    this.title = '';
    this.state = null;
    this.outcome = this.error = null;
  }

  async follow(taskId, title, describe) {
    this.title = title;
    this.state = { status: 'ongoing', current_progress: 0, total_progress: 0, message: 'Starting…' };
    this.outcome = this.error = null;
    const closed = this.openDialog('.close');
    this.#source = openEventStream(`/events/background-task${query({ taskId })}`, EVENTS, (name, data) => {
      this.state = data;
      if (name !== 'bgtask_updated') this.#ended(taskId, describe);
    });
    this.#source.onerror = () => {
      if (!this.outcome) this.error = 'The progress stream was cut; reconnecting…';
    };
    return closed;
  }

  async #ended(taskId, describe) {
    this.#stop();
    this.error = null;
    try {
      const task = await api('GET', `/background-tasks/${encodeURIComponent(taskId)}`);
      this.outcome = task.status === 'done' ? describe(task.result ?? {}) : `The task ${task.status}: ${task.message}`;
    } catch (e) {
      this.error = e.message;
    }
  }

  #stop() {
    this.#source?.close();
    this.#source = null;
  }

  dialogClosed() {
    this.#stop();
  }

  render() {
    const s = this.state;
    const total = s?.total_progress ?? 0;
    return html`<dialog class="dialog" aria-labelledby="task-title">
      <h2 id="task-title">${this.title}</h2>
      ${s
        ? html`<div class="task-progress">
            <progress
              aria-label="Progress"
              max=${total || 1}
              value=${total ? s.current_progress : nothing}
            ></progress>
            <p role="status" class="task-status" data-status=${s.status}>
              ${this.outcome ?? (s.message || s.status)}
            </p>
          </div>`
        : nothing}
      ${errorNotice(this.error)}
      <div class="actions">
        <button class="close" type="button" @click=${() => this.closeDialog()}>Close</button>
      </div>
    </dialog>`;
  }
}

customElements.define('task-dialog', TaskDialog);
