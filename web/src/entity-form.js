/* entity-form.js - <entity-form>: the modal form that creates a row of an
 * admin collection or changes one (the fields of admin-entities.js, the
 * rules of admin-form.js).  open(entity, row) resolves, when it closes,
 * with the manager's answer once saved, or null when cancelled.  Fields
 * set only on create show, disabled, on a change.  What the manager says
 * only once (a secret key) is shown after a create, until the form is
 * closed.  Objects are edited as name = value rows (pairs-editor.js),
 * storage host permissions as a row per host (host-perms-editor.js, the
 * hosts of GET /folders/_/hosts offered), and other JSON in a textarea
 * checked before it is sent (admin-form.js). */
import { html, nothing } from 'lit';
import { api } from './api.js';
import { rowLabel, rowPath } from './admin-entities.js';
import { formBody, formFields, formValues } from './admin-form.js';
import { DialogElement } from './dialog-element.js';
import { errorNotice } from './notices.js';
import { SLOT_NAMES } from './slots.js';
import './host-perms-editor.js';
import './pairs-editor.js';

const INPUT_TYPES = { email: 'email', password: 'password', int: 'number' };

class EntityForm extends DialogElement {
  static properties = {
    entity: { state: true },
    row: { state: true },
    values: { state: true },
    options: { state: true },
    error: { state: true },
    busy: { state: true },
    once: { state: true },
    hosts: { state: true },
  };

  constructor() {
    super();
    this.entity = this.row = this.once = this.error = null;
    this.values = {};
    this.options = {};
    this.hosts = null;
    this.busy = false;
  }

  async open(entity, row) {
    this.entity = entity;
    this.row = row;
    this.values = formValues(entity.fields, row);
    this.error = this.once = null;
    this.busy = false;
    this.#loadOptions();
    this.#loadHosts();
    return this.openDialog('input:not([disabled]), select:not([disabled])');
  }

  async #loadOptions() {
    for (const f of this.entity.fields.filter((f) => f.choicesFrom)) {
      try {
        const a = await api('GET', f.choicesFrom.path);
        this.options = {
          ...this.options,
          [f.name]: (a.items ?? []).map((i) => [f.choicesFrom.value(i), f.choicesFrom.label(i)]),
        };
      } catch (e) {
        this.error = `${f.label}: ${e.message}`;
      }
    }
  }

  /* The storage hosts the manager has, offered by host permission editors. */
  async #loadHosts() {
    if (this.hosts || !this.entity.fields.some((f) => f.kind === 'host-perms')) return;
    try {
      this.hosts = (await api('GET', '/folders/_/hosts'))?.allowed ?? [];
    } catch {
      this.hosts = []; /* only suggestions: any name may be typed */
    }
  }

  dialogClosed() {
    this.once = null; /* the secret leaves the page with the form */
  }

  #set(name, value) {
    this.values = { ...this.values, [name]: value };
  }

  async #submit(e) {
    e.preventDefault();
    let body;
    try {
      body = formBody(this.entity.fields, this.values, this.row);
    } catch (err) {
      this.error = err.message;
      return;
    }
    this.busy = true;
    this.error = null;
    try {
      const answer = this.row
        ? await api('PATCH', rowPath(this.entity, this.row), body)
        : await api('POST', this.entity.path, body);
      this.result = answer;
      const once = !this.row && this.entity.once?.(answer);
      if (once) this.once = once;
      else this.closeDialog();
    } catch (err) {
      this.error = err.message;
    } finally {
      this.busy = false;
    }
  }

  #choices(f) {
    const list = f.choicesFrom ? this.options[f.name] ?? [] : f.choices.map((c) => [c, c]);
    return html`<option value="">${f.none ?? (this.row ? '—' : f.required ? 'choose…' : 'default')}</option>
      ${list.map(([value, label]) => html`<option value=${value} ?selected=${this.values[f.name] === value}>${label}</option>`)}`;
  }

  #field(f) {
    const id = `entity-field-${f.name}`, disabled = Boolean(this.row && f.create);
    const hint = f.hint ? html`<p class="hint" id="${id}-hint">${f.hint}</p>` : nothing;
    const described = f.hint ? `${id}-hint` : nothing;
    const value = this.values[f.name];
    switch (f.kind) {
      case 'bool':
        return html`<div class="field check">
          <label><input id=${id} type="checkbox" .checked=${value} ?disabled=${disabled}
            @change=${(e) => this.#set(f.name, e.target.checked)} /> ${f.label}</label>
          ${hint}
        </div>`;
      case 'slots':
      case 'labels':
        return html`<fieldset class="field" aria-describedby=${described}>
          <legend>${f.label}</legend>
          <pairs-editor
            label=${f.kind === 'slots' ? 'slot' : 'label'}
            .pairs=${value}
            .suggestions=${f.kind === 'slots' ? SLOT_NAMES : []}
            @pairs-change=${(e) => this.#set(f.name, e.detail)}
          ></pairs-editor>
          ${hint}
        </fieldset>`;
      case 'host-perms':
        return html`<fieldset class="field" aria-describedby=${described}>
          <legend>${f.label}</legend>
          <host-perms-editor
            .rows=${value}
            .hosts=${this.hosts ?? []}
            @rows-change=${(e) => this.#set(f.name, e.detail)}
          ></host-perms-editor>
          ${hint}
        </fieldset>`;
      case 'json':
        return html`<div class="field json">
          <label for=${id}>${f.label}</label>
          <textarea id=${id} class="mono" rows="4" spellcheck="false" placeholder=${f.placeholder ?? nothing}
            aria-describedby=${described} .value=${value} @input=${(e) => this.#set(f.name, e.target.value)}></textarea>
          ${hint}
        </div>`;
      case 'choice':
        return html`<div class="field">
          <label for=${id}>${f.label}</label>
          <select id=${id} ?disabled=${disabled} ?required=${f.required && !this.row}
            aria-describedby=${described} @change=${(e) => this.#set(f.name, e.target.value)}>
            ${this.#choices(f)}
          </select>
          ${hint}
        </div>`;
      default:
        return html`<div class="field">
          <label for=${id}>${f.label}</label>
          <input
            id=${id}
            type=${INPUT_TYPES[f.kind] ?? 'text'}
            min=${f.kind === 'int' ? 0 : nothing}
            autocomplete=${f.kind === 'password' ? 'new-password' : 'off'}
            placeholder=${f.placeholder ?? nothing}
            ?disabled=${disabled}
            ?required=${f.required && !this.row}
            aria-describedby=${described}
            .value=${value}
            @input=${(e) => this.#set(f.name, e.target.value)}
          />
          ${hint}
        </div>`;
    }
  }

  #onceView() {
    return html`<p role="status">
        Created. Copy what follows now: the manager shows it only this once.
      </p>
      <dl class="once">
        ${this.once.map(([label, value]) => html`<dt>${label}</dt><dd><code>${value}</code></dd>`)}
      </dl>
      <div class="actions"><button class="primary" type="button" @click=${() => this.closeDialog()}>Done</button></div>`;
  }

  render() {
    const e = this.entity;
    if (!e) return html`<dialog class="dialog"></dialog>`;
    const title = this.row ? `Edit ${e.noun} ${rowLabel(e, this.row)}` : `Create ${e.noun}`;
    return html`<dialog class="dialog form-dialog" aria-labelledby="entity-form-title">
      <form @submit=${this.#submit} novalidate>
        <h2 id="entity-form-title">${title}</h2>
        ${this.once
          ? this.#onceView()
          : html`<div class="form-grid">${formFields(e.fields, !this.row).map((f) => this.#field(f))}</div>
              ${errorNotice(this.error)}
              <div class="actions">
                <button type="button" @click=${() => this.closeDialog()}>Cancel</button>
                <button class="primary" type="submit" ?disabled=${this.busy}>${this.row ? 'Save' : 'Create'}</button>
              </div>`}
      </form>
    </dialog>`;
  }
}

customElements.define('entity-form', EntityForm);
