/* app-shell.js - <app-shell>: what every page of a logged-in user sits in:
 * the top bar (brand, navigation, user menu) and the page the hash names
 * (pages.js), loaded on first use.  An unknown hash goes to the default
 * page.  After a navigation the focus moves to the page, for keyboard and
 * screen reader users. */
import { html, nothing } from 'lit';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { errorNotice, loadingNotice } from './notices.js';
import { DEFAULT_PAGE, pagesFor } from './pages.js';
import { href, router } from './router.js';
import { StoreController } from './store-controller.js';
import './user-menu.js';

class AppShell extends TesseraElement {
  static properties = {
    page: { state: true },
    pageNode: { state: true },
    loadError: { state: true },
  };

  #navigated = false;

  constructor() {
    super();
    this.page = null;
    this.pageNode = null;
    this.loadError = null;
    new StoreController(this, router, () => this.#show(true));
  }

  connectedCallback() {
    super.connectedCallback();
    this.#show(false);
  }

  async #show(navigated) {
    const pages = pagesFor(auth.user);
    const page = pages.find((p) => p.id === router.route.page);
    if (!page) {
      window.history.replaceState(null, '', href(DEFAULT_PAGE));
      return this.#show(navigated);
    }
    this.page = page;
    this.loadError = null;
    document.title = `${page.title} · Tessera`;
    try {
      await page.load();
    } catch {
      this.loadError = 'This page could not be loaded (was the manager upgraded?). Reload the page.';
      return;
    }
    if (this.page !== page) return;
    this.pageNode = document.createElement(page.tag);
    this.#navigated = navigated;
  }

  updated() {
    if (this.#navigated) {
      this.#navigated = false;
      this.querySelector('#main')?.focus();
    }
  }

  #skipToMain(e) {
    e.preventDefault();
    this.querySelector('#main')?.focus();
  }

  render() {
    const current = this.page?.id;
    return html`<a class="skip-link" href="#main" @click=${this.#skipToMain}>Skip to content</a>
      <header class="topbar">
        <a class="brand" href=${href(DEFAULT_PAGE)}>Tessera</a>
        <nav class="main-nav" aria-label="Main">
          <ul>
            ${pagesFor(auth.user).filter((p) => p.nav !== false).map(
              (p) => html`<li>
                <a href=${href(p.id)} aria-current=${p.id === current ? 'page' : nothing}>${p.title}</a>
              </li>`,
            )}
          </ul>
        </nav>
        <user-menu></user-menu>
      </header>
      <main id="main" class="page" tabindex="-1">
        ${this.loadError
          ? errorNotice(this.loadError)
          : this.pageNode ?? loadingNotice('the page')}
      </main>`;
  }
}

customElements.define('app-shell', AppShell);
