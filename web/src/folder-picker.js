/* folder-picker.js - <folder-picker>: the virtual folders a session may
 * mount (GET /folders), as checkboxes.  Folders whose names start with a
 * dot are mounted into every session anyway, so they are listed as such
 * and not offered.  .folders is the list, .selected a Set of names; an
 * 'mounts-change' event with detail {selected} follows each tick. */
import { html } from 'lit';
import { TesseraElement } from './element.js';

class FolderPicker extends TesseraElement {
  static properties = {
    folders: { attribute: false },
    selected: { attribute: false },
  };

  constructor() {
    super();
    this.folders = [];
    this.selected = new Set();
  }

  #toggle(name, on) {
    const selected = new Set(this.selected);
    if (on) selected.add(name);
    else selected.delete(name);
    this.selected = selected;
    this.dispatchEvent(new CustomEvent('mounts-change', { detail: { selected } }));
  }

  render() {
    const mountable = this.folders.filter((f) => !f.name.startsWith('.'));
    const automatic = this.folders.filter((f) => f.name.startsWith('.'));
    return html`<fieldset class="folder-picker">
      <legend>Folders to mount</legend>
      ${mountable.length
        ? html`<ul class="checklist">
            ${mountable.map(
              (f) => html`<li>
                <label>
                  <input
                    type="checkbox"
                    name="mounts"
                    value=${f.name}
                    .checked=${this.selected.has(f.name)}
                    @change=${(e) => this.#toggle(f.name, e.target.checked)}
                  />
                  ${f.name} <span class="muted small">${f.permission} · ${f.usage_mode} · /home/work/${f.name}</span>
                </label>
              </li>`,
            )}
          </ul>`
        : html`<p class="muted">You have no folders to mount.</p>`}
      ${automatic.length
        ? html`<p class="muted small">Mounted in every session: ${automatic.map((f) => f.name).join(', ')}</p>`
        : ''}
    </fieldset>`;
  }
}

customElements.define('folder-picker', FolderPicker);
