/* password-dialog.js - <password-dialog>: a modal form to change the
 * user's password (POST /auth/update-password): the current one and the
 * new one twice, at least 8 characters (the manager's rule, checked here
 * first so that the message comes at once).  show() opens it. */
import { html } from 'lit';
import { auth } from './auth.js';
import { DialogElement } from './dialog-element.js';
import { errorNotice } from './notices.js';

const MIN_PASSWORD_LENGTH = 8;

class PasswordDialog extends DialogElement {
  static properties = {
    busy: { state: true },
    error: { state: true },
    done: { state: true },
  };

  constructor() {
    super();
    this.busy = this.done = false;
    this.error = null;
  }

  show() {
    this.error = null;
    this.done = false;
    this.querySelector('form')?.reset();
    this.openDialog('#password-old');
  }

  async #submit(e) {
    e.preventDefault();
    const form = e.currentTarget;
    const [old, new1, new2] = [form.old.value, form.new1.value, form.new2.value];
    if (new1.length < MIN_PASSWORD_LENGTH)
      return (this.error = `The new password must be at least ${MIN_PASSWORD_LENGTH} characters.`);
    if (new1 !== new2) return (this.error = 'The two new passwords differ.');
    this.busy = true;
    this.error = null;
    try {
      await auth.changePassword(old, new1, new2);
      this.done = true;
    } catch (err) {
      this.error = err.status === 401 ? 'The current password is wrong.' : err.message;
    } finally {
      this.busy = false;
    }
  }

  render() {
    return html`<dialog class="dialog" aria-labelledby="password-title">
      <form @submit=${this.#submit}>
        <h2 id="password-title">Change password</h2>
        ${this.done
          ? html`<p role="status">Your password was changed.</p>
              <div class="actions"><button class="primary" type="button" @click=${() => this.closeDialog()}>Close</button></div>`
          : html`<div class="field">
                <label for="password-old">Current password</label>
                <input id="password-old" name="old" type="password" autocomplete="current-password" required />
              </div>
              <div class="field">
                <label for="password-new1">New password</label>
                <input id="password-new1" name="new1" type="password" autocomplete="new-password" required />
              </div>
              <div class="field">
                <label for="password-new2">New password again</label>
                <input id="password-new2" name="new2" type="password" autocomplete="new-password" required />
              </div>
              ${errorNotice(this.error)}
              <div class="actions">
                <button type="button" @click=${() => this.closeDialog()}>Cancel</button>
                <button class="primary" type="submit" ?disabled=${this.busy}>Change password</button>
              </div>`}
      </form>
    </dialog>`;
  }
}

customElements.define('password-dialog', PasswordDialog);
