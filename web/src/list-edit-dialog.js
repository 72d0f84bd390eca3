/* list-edit-dialog.js - <list-edit-dialog>: the string lists of one row,
 * edited one entry at a time: a project's members, a resource group's
 * domains, projects and keypairs (an entity's `lists`, admin-entities.js).
 * open(entity, row) reads the lists and shows them, each entry with a
 * remove button and each list with an input to add one; every change is
 * sent at once and the manager's answer is what is shown.  Resolves when
 * closed. */
import { html } from 'lit';
import { api } from './api.js';
import { rowLabel, rowPath } from './admin-entities.js';
import { DialogElement } from './dialog-element.js';
import { errorNotice, loadNotice } from './notices.js';

class ListEditDialog extends DialogElement {
  static properties = {
    entity: { state: true },
    row: { state: true },
    lists: { state: true },
    loadError: { state: true },
    error: { state: true },
    busy: { state: true },
  };

  constructor() {
    super();
    this.entity = this.row = this.lists = this.loadError = this.error = null;
    this.busy = false;
  }

  async open(entity, row) {
    this.entity = entity;
    this.row = row;
    this.lists = this.loadError = this.error = null;
    const closed = this.openDialog('.close');
    try {
      this.lists = entity.lists.read(await api('GET', rowPath(entity, row) + entity.lists.readPath));
    } catch (e) {
      this.loadError = e;
    }
    return closed;
  }

  async #change(section, op, value) {
    const spec = this.entity.lists;
    this.busy = true;
    this.error = null;
    try {
      this.lists = spec.read(await api('POST', rowPath(this.entity, this.row) + spec.changePath, spec.body(section, op, value)));
      return true;
    } catch (e) {
      this.error = `${op === 'add' ? 'Adding' : 'Removing'} ${value}: ${e.message}`;
      return false;
    } finally {
      this.busy = false;
    }
  }

  async #add(e, section) {
    e.preventDefault();
    const input = e.currentTarget.elements.entry;
    const value = input.value.trim();
    if (value && (await this.#change(section.id, 'add', value))) input.value = '';
  }

  #section(section) {
    const items = this.lists[section.id] ?? [];
    const id = `list-${section.id}`;
    return html`<section class="list-section" aria-labelledby="${id}-title">
      <h3 id="${id}-title">${section.label}</h3>
      ${items.length
        ? html`<ul class="entries">
            ${items.map(
              (item) => html`<li>
                <span>${item}</span>
                <button type="button" class="small danger" ?disabled=${this.busy}
                  aria-label="Remove ${item} from ${section.label.toLowerCase()}"
                  @click=${() => this.#change(section.id, 'remove', item)}>Remove</button>
              </li>`,
            )}
          </ul>`
        : html`<p class="muted">None.</p>`}
      <form class="add-entry" @submit=${(e) => this.#add(e, section)}>
        <label class="visually-hidden" for="${id}-add">Add to ${section.label.toLowerCase()}</label>
        <input id="${id}-add" name="entry" placeholder=${section.placeholder} />
        <button type="submit" ?disabled=${this.busy}>Add</button>
      </form>
    </section>`;
  }

  render() {
    const e = this.entity;
    const title = e ? `${e.lists.label} of ${e.noun} ${rowLabel(e, this.row)}` : '';
    return html`<dialog class="dialog form-dialog" aria-labelledby="list-edit-title">
      <h2 id="list-edit-title">${title}</h2>
      ${e
        ? loadNotice(this.loadError, this.lists, e.lists.label.toLowerCase()) ?? e.lists.sections.map((s) => this.#section(s))
        : ''}
      ${errorNotice(this.error)}
      <div class="actions">
        <button class="close" type="button" @click=${() => this.closeDialog()}>Close</button>
      </div>
    </dialog>`;
  }
}

customElements.define('list-edit-dialog', ListEditDialog);
