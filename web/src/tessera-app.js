/* tessera-app.js - <tessera-app>, the root element: finds the login a page
 * reload left behind (GET /server/session), then shows the login page, the
 * app shell, or, while the user must change a password an administrator
 * set (auth.user.needPasswordChange), only the form that changes it
 * (<password-dialog forced>: no page, since the manager refuses them all
 * until then); and starts or stops the live session list with the login. */
import { html } from 'lit';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { errorNotice, loadingNotice } from './notices.js';
import { sessionStore } from './session-store.js';
import { StoreController } from './store-controller.js';
import './app-shell.js';
import './login-page.js';
import './password-dialog.js';

class TesseraApp extends TesseraElement {
  static properties = {
    checking: { state: true },
    error: { state: true },
  };

  constructor() {
    super();
    this.checking = true;
    this.error = null;
    new StoreController(this, auth, () => this.#followLogin());
  }

  connectedCallback() {
    super.connectedCallback();
    this.#restore();
  }

  async #restore() {
    this.checking = true;
    this.error = null;
    try {
      await auth.restore();
    } catch (e) {
      this.error = e.message;
    }
    this.checking = false;
  }

  #followLogin() {
    if (auth.user && !auth.user.needPasswordChange) sessionStore.start(auth.user.accessKey);
    else sessionStore.stop();
  }

  render() {
    if (this.checking) return loadingNotice('Tessera');
    if (this.error)
      return html`<main class="center-card">
        <div class="card">
          <h1>Tessera</h1>
          ${errorNotice(this.error)}
          <button class="primary" type="button" @click=${() => this.#restore()}>Try again</button>
        </div>
      </main>`;
    if (!auth.user) return html`<login-page></login-page>`;
    if (auth.user.needPasswordChange)
      return html`<main class="center-card"><password-dialog forced></password-dialog></main>`;
    return html`<app-shell></app-shell>`;
  }
}

customElements.define('tessera-app', TesseraApp);
