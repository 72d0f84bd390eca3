/* password-dialog.js - <password-dialog>: a modal form to change the
 * user's password (POST /auth/update-password): the current one and the
 * new one twice, at least 8 characters (the manager's rule, checked here
 * first so that the message comes at once) and not the current one.
 * show() opens it.
 *
 * <password-dialog forced>: the password an administrator asked the user
 * to change (auth.user.needPasswordChange; tessera-app.js shows nothing
 * else meanwhile).  It opens by itself and cannot be dismissed: no
 * Cancel, Escape does nothing, and a dialog the browser closes anyway
 * opens again; its way out is Log out.  Once the password is changed,
 * auth's change lets the app go on. */
import { html, nothing } from 'lit';
import { auth } from './auth.js';
import { DialogElement } from './dialog-element.js';
import { errorNotice } from './notices.js';

const MIN_PASSWORD_LENGTH = 8;

class PasswordDialog extends DialogElement {
  static properties = {
    forced: { type: Boolean },
    busy: { state: true },
    error: { state: true },
    done: { state: true },
  };

  constructor() {
    super();
    this.forced = this.busy = this.done = false;
    this.error = null;
  }

  firstUpdated() {
    if (!this.forced) return;
    document.title = 'Choose a new password · Tessera';
    this.show();
  }

  show() {
    this.error = null;
    this.done = false;
    this.querySelector('form')?.reset();
    this.openDialog('#password-old');
  }

  /* Escape closes the dialog through a cancel event: not the forced one. */
  #cancel(e) {
    if (this.forced) e.preventDefault();
  }

  /* Chromium closes a dialog on a second Escape even when its cancel is
   * prevented: the forced one opens again, with what was typed. */
  dialogClosed() {
    if (!this.forced || !this.isConnected || !auth.user?.needPasswordChange) return;
    queueMicrotask(() => {
      const dialog = this.querySelector('dialog');
      if (!this.isConnected || !dialog || dialog.open) return;
      dialog.showModal();
      this.querySelector('#password-old')?.focus();
    });
  }

  async #submit(e) {
    e.preventDefault();
    const form = e.currentTarget;
    const [old, new1, new2] = [form.old.value, form.new1.value, form.new2.value];
    if (new1.length < MIN_PASSWORD_LENGTH)
      return (this.error = `The new password must be at least ${MIN_PASSWORD_LENGTH} characters.`);
    if (new1 !== new2) return (this.error = 'The two new passwords differ.');
    if (new1 === old) return (this.error = 'The new password must differ from the current one.');
    this.busy = true;
    this.error = null;
    try {
      await auth.changePassword(old, new1, new2);
      if (!this.forced) this.done = true; /* forced: the app goes on, without this dialog */
    } catch (err) {
      this.error = err.status === 401 ? 'The current password is wrong.' : err.message;
    } finally {
      this.busy = false;
    }
  }

  async #logout() {
    try {
      await auth.logout();
    } catch {
      /* logged out here anyway (auth.logout) */
    }
  }

  #fields() {
    return html`<div class="field">
        <label for="password-old">Current password</label>
        <input id="password-old" name="old" type="password" autocomplete="current-password" required />
      </div>
      <div class="field">
        <label for="password-new1">New password</label>
        <input id="password-new1" name="new1" type="password" autocomplete="new-password" required
          aria-describedby="password-rule" />
        <p class="hint" id="password-rule">At least ${MIN_PASSWORD_LENGTH} characters.</p>
      </div>
      <div class="field">
        <label for="password-new2">New password again</label>
        <input id="password-new2" name="new2" type="password" autocomplete="new-password" required />
      </div>
      ${errorNotice(this.error)}`;
  }

  render() {
    const forced = this.forced;
    return html`<dialog class="dialog" aria-labelledby="password-title" aria-describedby=${forced ? 'password-why' : nothing}
      @cancel=${this.#cancel}>
      <form @submit=${this.#submit}>
        <h2 id="password-title">${forced ? 'Choose a new password' : 'Change password'}</h2>
        ${forced
          ? html`<p id="password-why">
                An administrator asks you to change the password of ${auth.user?.email ?? 'this account'}
                before anything else.
              </p>
              ${this.#fields()}
              <div class="actions">
                <button type="button" @click=${this.#logout}>Log out</button>
                <button class="primary" type="submit" ?disabled=${this.busy}>Change password</button>
              </div>`
          : this.done
            ? html`<p role="status">Your password was changed.</p>
                <div class="actions"><button class="primary" type="button" @click=${() => this.closeDialog()}>Close</button></div>`
            : html`${this.#fields()}
                <div class="actions">
                  <button type="button" @click=${() => this.closeDialog()}>Cancel</button>
                  <button class="primary" type="submit" ?disabled=${this.busy}>Change password</button>
                </div>`}
      </form>
    </dialog>`;
  }
}

customElements.define('password-dialog', PasswordDialog);
