/* login-page.js - <login-page>: email and password to POST /server/login.
 * Wrong credentials, a login blocked after repeated failures (429 with
 * Retry-After: the button stays disabled that long) and an unreachable
 * manager each get their own sentence. */
import { html } from 'lit';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { formatDuration } from './format.js';
import { errorNotice } from './notices.js';

function loginError(e) {
  if (e.status === 401) return 'Wrong email or password.';
  if (e.status === 429) {
    const wait = e.retryAfter ? `for ${formatDuration(e.retryAfter * 1000)}` : 'for a while';
    return `Too many failed logins: logging in is blocked ${wait}. Try again later.`;
  }
  return e.message;
}

class LoginPage extends TesseraElement {
  static properties = {
    busy: { state: true },
    blocked: { state: true },
    error: { state: true },
  };

  constructor() {
    super();
    this.busy = this.blocked = false;
    this.error = null;
  }

  firstUpdated() {
    this.querySelector('#login-email')?.focus();
  }

  render() {
    return html`<main class="center-card">
      <form class="card login-form" @submit=${this.#submit}>
        <h1 class="brand-title">Tessera</h1>
        <p class="muted">Log in to launch and follow your compute sessions.</p>
        <div class="field">
          <label for="login-email">Email</label>
          <input id="login-email" name="email" type="email" autocomplete="username" required />
        </div>
        <div class="field">
          <label for="login-password">Password</label>
          <input id="login-password" name="password" type="password" autocomplete="current-password" required />
        </div>
        ${errorNotice(this.error)}
        <button class="primary wide" type="submit" ?disabled=${this.busy || this.blocked}>
          ${this.busy ? 'Logging in…' : 'Log in'}
        </button>
      </form>
    </main>`;
  }

  async #submit(e) {
    e.preventDefault();
    const form = e.currentTarget;
    this.busy = true;
    this.error = null;
    try {
      await auth.login(form.email.value.trim(), form.password.value);
    } catch (err) {
      this.error = loginError(err);
      if (err.status === 429) this.#block(err.retryAfter ?? 60);
      form.password.select();
    } finally {
      this.busy = false;
    }
  }

  #block(seconds) {
    this.blocked = true;
    setTimeout(() => {
      this.blocked = false;
    }, seconds * 1000);
  }
}

customElements.define('login-page', LoginPage);
