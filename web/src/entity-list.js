/* entity-list.js - <entity-list>: one admin collection (.entity, a row of
 * admin-entities.js) as a table, cards on a phone: a page of rows as the
 * manager pages them (?limit=&offset=, with the total), its filters, and
 * per row: edit and delete (asks first), switches that change one field at
 * once, and what more the entity offers (members or access lists, a
 * rescan followed live).  Create and edit open <entity-form>.  What the
 * manager refuses (a 403 for a role, a 409 for something in use) is shown
 * with the manager's own sentence; nothing is hidden by guessing roles.
 * A collection that offers nothing per row (the audit log) has no actions
 * column; a filter of kind 'datetime' is chosen in local time and sent as
 * ISO 8601 UTC. */
import { html, nothing } from 'lit';
import { api, query } from './api.js';
import { cell } from './admin-cells.js';
import { rowLabel, rowPath } from './admin-entities.js';
import { TesseraElement } from './element.js';
import { doneNotice, errorNotice, loadNotice } from './notices.js';
import './confirm-dialog.js';
import './entity-form.js';
import './list-edit-dialog.js';
import './task-dialog.js';

const PAGE_SIZE = 50;

const capitalized = (s) => s[0].toUpperCase() + s.slice(1);

class EntityList extends TesseraElement {
  static properties = {
    entity: { attribute: false },
    page: { state: true },
    loadError: { state: true },
    error: { state: true },
    done: { state: true },
    busy: { state: true },
  };

  #offset = 0;
  #filters = {};

  constructor() {
    super();
    this.entity = null;
    this.page = null;
    this.loadError = this.error = this.done = null;
    this.busy = new Set();
  }

  connectedCallback() {
    super.connectedCallback();
    this.#load();
  }

  async #load() {
    try {
      this.page = await api('GET', this.entity.path + query({ ...this.#filters, limit: PAGE_SIZE, offset: this.#offset }));
      this.loadError = null;
    } catch (e) {
      this.loadError = e;
    }
  }

  #say(done, error = null) {
    this.done = done;
    this.error = error;
  }

  /* Run `work` for `row`, with its buttons disabled; report what failed as `what`. */
  async #withRow(row, what, work) {
    const key = row[this.entity.key];
    this.busy = new Set([...this.busy, key]);
    this.#say(null);
    try {
      await work();
    } catch (e) {
      this.#say(null, `${what}: ${e.message}`);
    } finally {
      this.busy = new Set([...this.busy].filter((k) => k !== key));
    }
  }

  /* The form: a create (row null) or a change of row. */
  async #form(row) {
    this.#say(null);
    const answer = await this.querySelector('entity-form').open(this.entity, row);
    if (!answer) return;
    const e = this.entity;
    this.#say(`${capitalized(e.noun)} ${rowLabel(e, answer)} was ${row ? 'changed' : 'created'}.`);
    await this.#load();
  }

  async #remove(row) {
    const e = this.entity, name = rowLabel(e, row), verb = e.removeVerb ?? 'Delete';
    const yes = await this.querySelector('confirm-dialog').ask({
      title: `${verb} ${e.noun} ${name}?`,
      message: 'This cannot be undone.',
      confirm: verb,
    });
    if (!yes) return;
    await this.#withRow(row, `${verb} ${name}`, async () => {
      await api('DELETE', rowPath(e, row));
      this.#say(`${capitalized(e.noun)} ${name} is gone.`);
      await this.#load();
    });
  }

  async #toggle(col, row) {
    const name = rowLabel(this.entity, row);
    await this.#withRow(row, `Changing ${col.label.toLowerCase()} of ${name}`, async () => {
      await api('PATCH', rowPath(this.entity, row), { [col.name]: !row[col.name] });
      this.#say(`Set ${col.label.toLowerCase()} of ${name} to ${row[col.name] ? 'no' : 'yes'}.`);
    });
    await this.#load();
  }

  async #lists(row) {
    this.#say(null);
    await this.querySelector('list-edit-dialog').open(this.entity, row);
    await this.#load();
  }

  async #task(row) {
    const { task } = this.entity, name = rowLabel(this.entity, row);
    await this.#withRow(row, `${task.label} of ${name}`, async () => {
      const { task_id: id } = await api('POST', rowPath(this.entity, row) + task.path);
      await this.querySelector('task-dialog').follow(id, `${task.label} of ${name}`, task.describe);
      await this.#load();
    });
  }

  #filter(e) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const kinds = Object.fromEntries((this.entity.filters ?? []).map((f) => [f.param, f.kind]));
    const value = (param, v) => (kinds[param] === 'datetime' ? new Date(v).toISOString() : v);
    this.#filters = Object.fromEntries(
      [...form.entries()].filter(([, v]) => v !== '').map(([param, v]) => [param, value(param, v)]),
    );
    this.#offset = 0;
    this.#load();
  }

  #turn(pages) {
    this.#offset = Math.max(0, this.#offset + pages * PAGE_SIZE);
    this.#load();
  }

  #filterForm() {
    const filters = this.entity.filters ?? [];
    if (!filters.length) return nothing;
    return html`<form class="filters" role="search" aria-label="Filter ${this.entity.title.toLowerCase()}" @submit=${this.#filter}>
      ${filters.map(
        (f) => html`<div class="field">
          <label for="filter-${f.param}">${f.label}</label>
          ${f.choices
            ? html`<select id="filter-${f.param}" name=${f.param}>
                <option value="">any</option>
                ${f.choices.map((c, i) => html`<option value=${c}>${f.choiceLabels?.[i] ?? c}</option>`)}
              </select>`
            : html`<input id="filter-${f.param}" name=${f.param} type=${f.kind === 'datetime' ? 'datetime-local' : 'search'}
                placeholder=${f.placeholder ?? nothing} />`}
        </div>`,
      )}
      <button type="submit">Filter</button>
    </form>`;
  }

  /* Does a row offer anything (edit, lists, a task, delete)? */
  get #hasActions() {
    const e = this.entity;
    return e.update !== false || e.remove !== false || Boolean(e.lists || e.task);
  }

  #actions(row) {
    if (!this.#hasActions) return nothing;
    const e = this.entity, name = rowLabel(e, row), busy = this.busy.has(row[e.key]);
    return html`<td data-label="Actions" class="actions-cell">
      <div class="row-actions">
        ${e.update === false
          ? nothing
          : html`<button type="button" class="small" ?disabled=${busy} aria-label="Edit ${e.noun} ${name}"
              @click=${() => this.#form(row)}>Edit</button>`}
        ${e.lists
          ? html`<button type="button" class="small" ?disabled=${busy} aria-label="${e.lists.label} of ${name}"
              @click=${() => this.#lists(row)}>${e.lists.label}</button>`
          : nothing}
        ${e.task
          ? html`<button type="button" class="small" ?disabled=${busy} aria-label="${e.task.label} ${name}"
              @click=${() => this.#task(row)}>${e.task.label}</button>`
          : nothing}
        ${e.remove === false
          ? nothing
          : html`<button type="button" class="small danger" ?disabled=${busy}
              aria-label="${e.removeVerb ?? 'Delete'} ${e.noun} ${name}" @click=${() => this.#remove(row)}>
              ${e.removeVerb ?? 'Delete'}
            </button>`}
      </div>
    </td>`;
  }

  #row(row) {
    const e = this.entity, name = rowLabel(e, row);
    const opts = { toggle: (col, r) => this.#toggle(col, r), busy: this.busy.has(row[e.key]), name };
    const content = (col) => html`<div class=${col.kind === 'mono' ? 'mono' : ''}>${cell(col, row, opts)}</div>`;
    const [first, ...rest] = e.columns;
    return html`<tr data-key=${row[e.key]} data-name=${name}>
      <th scope="row" data-label=${first.label}>${content(first)}</th>
      ${rest.map((col) => html`<td data-label=${col.label} class="cell-${col.kind ?? 'text'}">${content(col)}</td>`)}
      ${this.#actions(row)}
    </tr>`;
  }

  #table() {
    const notice = loadNotice(this.loadError, this.page, this.entity.title.toLowerCase());
    if (notice) return notice;
    const { items = [], total = items.length, offset = 0 } = this.page;
    if (!items.length) return html`<p class="muted">No ${this.entity.title.toLowerCase()}.</p>`;
    return html`<table class="data-table entity-table">
        <caption class="visually-hidden">${this.entity.title}</caption>
        <thead>
          <tr>
            ${this.entity.columns.map((c) => html`<th scope="col">${c.label}</th>`)}
            ${this.#hasActions ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : nothing}
          </tr>
        </thead>
        <tbody>
          ${items.map((r) => this.#row(r))}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages of ${this.entity.title.toLowerCase()}">
        <span role="status">${offset + 1}–${offset + items.length} of ${total}</span>
        <button type="button" ?disabled=${offset === 0} @click=${() => this.#turn(-1)}>Previous</button>
        <button type="button" ?disabled=${offset + items.length >= total} @click=${() => this.#turn(1)}>Next</button>
      </nav>`;
  }

  render() {
    const e = this.entity;
    return html`<div class="page-head">
        <h2>${e.title}</h2>
        ${e.create === false
          ? nothing
          : html`<button type="button" class="primary" @click=${() => this.#form(null)}>Create ${e.noun}</button>`}
      </div>
      ${this.#filterForm()} ${doneNotice(this.done)} ${errorNotice(this.error)} ${this.#table()}
      <entity-form></entity-form>
      <list-edit-dialog></list-edit-dialog>
      <task-dialog></task-dialog>
      <confirm-dialog></confirm-dialog>`;
  }
}

customElements.define('entity-list', EntityList);
