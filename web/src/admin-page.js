/* admin-page.js - <admin-page>: the administration of the cluster, for
 * admins and superadmins (pages.js): one tab per collection of
 * admin-entities.js ('#/admin/<id>'), each drawn by the generic
 * <entity-list>.  What a domain admin may not do there, the manager
 * refuses, and the list says so. */
import { html, nothing } from 'lit';
import { ENTITIES, entityOf } from './admin-entities.js';
import { TesseraElement } from './element.js';
import { href, router } from './router.js';
import './entity-list.js';

class AdminPage extends TesseraElement {
  render() {
    const entity = entityOf(router.route.arg);
    return html`<div class="page-head"><h1>Administration</h1></div>
      <nav class="tabs" aria-label="Administration">
        <ul>
          ${ENTITIES.map(
            (e) => html`<li>
              <a href=${href('admin', e.id)} aria-current=${e === entity ? 'page' : nothing}>${e.title}</a>
            </li>`,
          )}
        </ul>
      </nav>
      <entity-list .entity=${entity}></entity-list>`;
  }
}

customElements.define('admin-page', AdminPage);
