/* confirm-dialog.js - <confirm-dialog>: a modal question.
 * ask({title, message, confirm, danger = true}) resolves true when the
 * user confirms, false when they cancel or press Escape; the cancel
 * button has the focus first, so that Enter does not destroy anything by
 * accident.  prompt({title, label, value, confirm, check}) asks for one
 * line of text instead, with the field focused: it resolves the text, or
 * null when cancelled; check(text), if given, returns a sentence that
 * keeps the dialog open (an error) or null. */
import { html } from 'lit';
import { DialogElement } from './dialog-element.js';
import { errorNotice } from './notices.js';

class ConfirmDialog extends DialogElement {
  static properties = {
    question: { state: true },
    error: { state: true },
  };

  constructor() {
    super();
    this.question = { title: '', message: '', confirm: 'OK' };
    this.error = null;
  }

  async ask(question) {
    return (await this.#open({ danger: true, ...question }, '.cancel')) === true;
  }

  async prompt(question) {
    const answer = await this.#open({ danger: false, ...question, field: true }, 'input');
    return typeof answer === 'string' ? answer : null;
  }

  async #open(question, focus) {
    this.question = question;
    this.error = null;
    await this.updateComplete;
    const input = this.querySelector('input');
    if (input) input.value = question.value ?? '';
    return this.openDialog(focus);
  }

  #answer(answer) {
    this.result = answer;
    this.closeDialog();
  }

  #submit(e) {
    e.preventDefault();
    if (!this.question.field) return this.#answer(true);
    const text = this.querySelector('input').value.trim();
    this.error = this.question.check?.(text) ?? null;
    if (!this.error) this.#answer(text);
  }

  render() {
    const q = this.question;
    return html`<dialog class="dialog" aria-labelledby="confirm-title">
      <form @submit=${this.#submit}>
        <h2 id="confirm-title">${q.title}</h2>
        ${q.message ? html`<p>${q.message}</p>` : ''}
        ${q.field
          ? html`<div class="field">
              <label for="confirm-input">${q.label}</label>
              <input id="confirm-input" autocomplete="off" required />
            </div>`
          : ''}
        ${errorNotice(this.error)}
        <div class="actions">
          <button class="cancel" type="button" @click=${() => this.#answer(false)}>Cancel</button>
          <button class=${q.danger ? 'danger' : 'primary'} type="submit">${q.confirm}</button>
        </div>
      </form>
    </dialog>`;
  }
}

customElements.define('confirm-dialog', ConfirmDialog);
