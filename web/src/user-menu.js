/* user-menu.js - <user-menu>: a disclosure button with the user's email
 * that opens their actions: change password (password-dialog) and log
 * out.  Escape, a click elsewhere or focus leaving it closes it. */
import { html } from 'lit';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { errorNotice } from './notices.js';
import './password-dialog.js';

class UserMenu extends TesseraElement {
  static properties = {
    open: { state: true },
    error: { state: true },
  };

  constructor() {
    super();
    this.open = false;
    this.error = null;
  }

  connectedCallback() {
    super.connectedCallback();
    document.addEventListener('click', this.#clickElsewhere);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    document.removeEventListener('click', this.#clickElsewhere);
  }

  #clickElsewhere = (e) => {
    if (this.open && !this.contains(e.target)) this.open = false;
  };

  #keydown(e) {
    if (e.key === 'Escape' && this.open) {
      this.open = false;
      this.querySelector('.menu-button')?.focus();
    }
  }

  #focusout(e) {
    if (this.open && e.relatedTarget && !this.contains(e.relatedTarget)) this.open = false;
  }

  async #logout() {
    this.open = false;
    try {
      await auth.logout();
    } catch (e) {
      this.error = e.message;
    }
  }

  #changePassword() {
    this.open = false;
    this.querySelector('password-dialog').show();
  }

  render() {
    const user = auth.user;
    if (!user) return '';
    return html`<div class="menu" @keydown=${this.#keydown} @focusout=${this.#focusout}>
        <button
          class="menu-button"
          type="button"
          aria-expanded=${this.open ? 'true' : 'false'}
          aria-controls="user-menu-list"
          @click=${() => (this.open = !this.open)}
        >
          <span class="avatar" aria-hidden="true">${user.email.slice(0, 1).toUpperCase()}</span>
          <span class="menu-email">${user.email}</span>
        </button>
        <div id="user-menu-list" class="menu-list" ?hidden=${!this.open}>
          <p class="menu-who">${user.email}<br /><span class="muted">${user.role} · ${user.domain}</span></p>
          <button type="button" class="menu-item" @click=${this.#changePassword}>Change password</button>
          <button type="button" class="menu-item" @click=${this.#logout}>Log out</button>
        </div>
      </div>
      ${errorNotice(this.error)}
      <password-dialog></password-dialog>`;
  }
}

customElements.define('user-menu', UserMenu);
