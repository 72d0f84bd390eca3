/* confirm-dialog.js - <confirm-dialog>: a modal yes/no question.
 * ask({title, message, confirm}) resolves true when the user confirms,
 * false when they cancel or press Escape.  The cancel button has the
 * focus first, so that Enter does not destroy anything by accident. */
import { html } from 'lit';
import { DialogElement } from './dialog-element.js';

class ConfirmDialog extends DialogElement {
  static properties = {
    question: { state: true },
  };

  constructor() {
    super();
    this.question = { title: '', message: '', confirm: 'OK' };
  }

  async ask(question) {
    this.question = question;
    return (await this.openDialog('.cancel')) === true;
  }

  #answer(yes) {
    this.result = yes;
    this.closeDialog();
  }

  render() {
    const q = this.question;
    return html`<dialog class="dialog" aria-labelledby="confirm-title">
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
