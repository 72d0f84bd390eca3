/* share-dialog.js - <share-dialog>: who else uses a folder, for its
 * owner.  A user's folder: invite users by email with a permission
 * (POST /folders/{name}/invite; they accept on their storage page); a
 * project's folder: set members' own permission (share).  Both: take
 * users' access away (unshare); a user's folder lists who uses it (GET
 * /folders/_/shared) with a button each.  show(folder) opens it for a
 * folder of GET /folders. */
import { html } from 'lit';
import { api, query } from './api.js';
import { TesseraElement } from './element.js';
import { PERMISSIONS, inviteUsers, parseEmails, shareFolder, unshareFolder } from './folders.js';
import { doneNotice, errorNotice } from './notices.js';

class ShareDialog extends TesseraElement {
  static properties = {
    folder: { state: true },
    busy: { state: true },
    error: { state: true },
    done: { state: true },
    sharedWith: { state: true },
  };

  constructor() {
    super();
    this.folder = null;
    this.busy = false;
    this.error = this.done = null;
    this.sharedWith = [];
  }

  async show(folder) {
    this.folder = folder;
    this.error = this.done = null;
    this.sharedWith = [];
    this.#loadShared();
    await this.updateComplete;
    for (const form of this.querySelectorAll('form')) form.reset();
    this.querySelector('dialog').showModal();
  }

  get #project() {
    return this.folder?.ownership_type === 'project';
  }

  async #run(e, action) {
    e.preventDefault();
    const form = e.currentTarget;
    const emails = parseEmails(form.emails.value);
    if (!emails.length) return (this.error = 'Give one email at least.');
    this.busy = true;
    this.error = this.done = null;
    try {
      this.done = await action(emails, form.permission?.value);
      form.reset();
    } catch (err) {
      this.error = err.message;
    } finally {
      this.busy = false;
    }
  }

  /* Who uses the user's folder now ([{email, perm}]). */
  async #loadShared() {
    if (!this.folder || this.#project) return;
    try {
      const a = await api('GET', `/folders/_/shared${query({ vfolder_id: this.folder.id })}`);
      this.sharedWith = (a?.shared ?? []).map((s) => ({ email: s.shared_to.email, perm: s.perm }));
    } catch (err) {
      this.error = err.message;
    }
  }

  async #revokeOne(email) {
    this.busy = true;
    this.error = this.done = null;
    try {
      this.done = await this.#revoke([email]);
    } catch (err) {
      this.error = err.message;
    } finally {
      this.busy = false;
    }
  }

  async #grant(emails, perm) {
    const name = this.folder.name;
    if (this.#project) {
      await shareFolder(name, emails, perm);
      return `${emails.join(', ')} now ${emails.length === 1 ? 'has' : 'have'} ${perm} on ${name}.`;
    }
    await inviteUsers(name, emails, perm);
    return `Invited ${emails.join(', ')}: they accept on their storage page.`;
  }

  async #revoke(emails) {
    await unshareFolder(this.folder.name, emails);
    this.#loadShared();
    return this.#project
      ? `${emails.join(', ')} now ${emails.length === 1 ? 'has' : 'have'} the project's permission on ${this.folder.name}.`
      : `${emails.join(', ')} no longer ${emails.length === 1 ? 'uses' : 'use'} ${this.folder.name}.`;
  }

  #close() {
    this.querySelector('dialog').close();
  }

  render() {
    const project = this.#project;
    return html`<dialog class="dialog" aria-labelledby="share-title">
      <h2 id="share-title">Share ${this.folder?.name ?? ''}</h2>
      <form @submit=${(e) => this.#run(e, (emails, perm) => this.#grant(emails, perm))}>
        <h3>${project ? "Set members' permission" : 'Invite users'}</h3>
        <div class="field">
          <label for="share-emails">Emails</label>
          <input id="share-emails" name="emails" type="text" inputmode="email" autocomplete="off"
            placeholder="someone@example.org, …" required />
        </div>
        <div class="field">
          <label for="share-permission">Permission</label>
          <select id="share-permission" name="permission">
            ${PERMISSIONS.map((p) => html`<option value=${p.value} ?selected=${p.value === 'rw'}>${p.label}</option>`)}
          </select>
        </div>
        <div class="actions">
          <button class="primary" type="submit" ?disabled=${this.busy}>${project ? 'Set permission' : 'Invite'}</button>
        </div>
      </form>
      ${project || !this.sharedWith.length
        ? ''
        : html`<h3>Used by</h3>
            <ul class="plain-list">
              ${this.sharedWith.map(
                (s) => html`<li>
                  ${s.email} (${s.perm})
                  <button class="button small danger" type="button" ?disabled=${this.busy}
                    @click=${() => this.#revokeOne(s.email)} aria-label="Take ${s.email}'s access away">
                    Take away
                  </button>
                </li>`,
              )}
            </ul>`}
      <form @submit=${(e) => this.#run(e, (emails) => this.#revoke(emails))}>
        <h3>${project ? "Back to the project's permission" : 'Take access away'}</h3>
        <div class="field">
          <label for="unshare-emails">Emails to take away</label>
          <input id="unshare-emails" name="emails" type="text" inputmode="email" autocomplete="off" required />
        </div>
        <div class="actions">
          <button class="danger" type="submit" ?disabled=${this.busy}>${project ? 'Reset' : 'Take access away'}</button>
        </div>
      </form>
      ${errorNotice(this.error)}
      ${doneNotice(this.done)}
      <div class="actions">
        <button type="button" @click=${this.#close}>Close</button>
      </div>
    </dialog>`;
  }
}

customElements.define('share-dialog', ShareDialog);
