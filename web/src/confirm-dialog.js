/* confirm-dialog.js - <confirm-dialog>: a modal yes/no question.
 * ask({title, message, confirm}) resolves true when the user confirms,
 * false when they cancel or press Escape.  The cancel button has the
 * focus first, so that Enter does not destroy anything by accident. */
import { html } from 'lit';
import { TesseraElement } from './element.js';

class ConfirmDialog extends TesseraElement {
  static properties = {
    question: { state: true },
  };

  #resolve = null;

  constructor() {
    super();
    this.question = { title: '', message: '', confirm: 'OK' };
  }

  async ask(question) {
    this.question = question;
    await this.updateComplete;
    const dialog = this.querySelector('dialog');
    dialog.showModal();
    this.querySelector('.cancel').focus();
    return new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  #answer(yes) {
    const resolve = this.#resolve;
    this.#resolve = null;
    resolve?.(yes);
    const dialog = this.querySelector('dialog');
    if (dialog.open) dialog.close();
  }

  render() {
    const q = this.question;
    return html`<dialog class="dialog" aria-labelledby="confirm-title" @close=${() => this.#answer(false)}>
      <h2 id="confirm-title">${q.title}</h2>
      <p>${q.message}</p>
      <div class="actions">
        <button class="cancel" type="button" @click=${() => this.#answer(false)}>Cancel</button>
        <button class="danger" type="button" @click=${() => this.#answer(true)}>${q.confirm}</button>
      </div>
    </dialog>`;
  }
}

customElements.define('confirm-dialog', ConfirmDialog);
