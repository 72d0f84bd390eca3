/* image-picker.js - <image-picker>: the environment (image name) and its
 * version (tag, architecture, aliases) from GET /images' groups.
 * .images is that list; .name and .versionId the choice; an 'image-change'
 * event with detail {name, version} (the version object, labels included)
 * follows each choice.  Picking an environment picks its first version. */
import { html } from 'lit';
import { TesseraElement } from './element.js';

function versionLabel(v) {
  const aliases = v.aliases?.length ? ` (${v.aliases.join(', ')})` : '';
  return `${v.tag} · ${v.architecture}${aliases}${v.private ? ' · private' : ''}`;
}

class ImagePicker extends TesseraElement {
  static properties = {
    images: { attribute: false },
    name: {},
    versionId: {},
  };

  constructor() {
    super();
    this.images = [];
    this.name = '';
    this.versionId = '';
  }

  #emit(name, versionId) {
    const group = this.images.find((g) => g.name === name);
    const version = group?.versions.find((v) => v.id === versionId) ?? group?.versions[0] ?? null;
    this.dispatchEvent(new CustomEvent('image-change', { detail: { name, version } }));
  }

  render() {
    const group = this.images.find((g) => g.name === this.name);
    return html`<div class="field-row">
      <div class="field">
        <label for="image-name">Image</label>
        <select id="image-name" required @change=${(e) => this.#emit(e.target.value, null)}>
          ${this.images.map((g) => html`<option value=${g.name} ?selected=${g.name === this.name}>${g.name}</option>`)}
        </select>
      </div>
      <div class="field">
        <label for="image-version">Version</label>
        <select id="image-version" required @change=${(e) => this.#emit(this.name, e.target.value)}>
          ${(group?.versions ?? []).map(
            (v) => html`<option value=${v.id} ?selected=${v.id === this.versionId}>${versionLabel(v)}</option>`,
          )}
        </select>
      </div>
    </div>`;
  }
}

customElements.define('image-picker', ImagePicker);
