/* pairs-editor.js - <pairs-editor>: an object edited as name = value rows
 * (slot limits "cpu = 4", image labels), with a button to add a row and
 * one to remove each.  .pairs is [[name, value], ...]; every edit sends a
 * 'pairs-change' event with the new rows in detail.  .suggestions (names)
 * are offered in a datalist.  Inputs are labelled "<label> name N" and
 * "<label> value N". */
import { html, nothing } from 'lit';
import { TesseraElement } from './element.js';

let lists = 0;

class PairsEditor extends TesseraElement {
  static properties = {
    pairs: { attribute: false },
    label: {},
    suggestions: { attribute: false },
  };

  #listId = `pairs-list-${++lists}`;

  constructor() {
    super();
    this.pairs = [];
    this.label = '';
    this.suggestions = [];
  }

  #emit(pairs) {
    this.pairs = pairs;
    this.dispatchEvent(new CustomEvent('pairs-change', { detail: pairs, bubbles: true }));
  }

  #set(i, j, value) {
    this.#emit(this.pairs.map((p, k) => (k === i ? (j === 0 ? [value, p[1]] : [p[0], value]) : p)));
  }

  async #add() {
    this.#emit([...this.pairs, ['', '']]);
    await this.updateComplete;
    this.querySelector(`input[data-row="${this.pairs.length - 1}"]`)?.focus();
  }

  render() {
    return html`${this.suggestions.length
        ? html`<datalist id=${this.#listId}>${this.suggestions.map((s) => html`<option value=${s}></option>`)}</datalist>`
        : nothing}
      ${this.pairs.map(
        ([k, v], i) => html`<div class="pair">
          <input
            data-row=${i}
            aria-label="${this.label} name ${i + 1}"
            list=${this.suggestions.length ? this.#listId : nothing}
            .value=${k}
            @input=${(e) => this.#set(i, 0, e.target.value)}
          />
          <span aria-hidden="true">=</span>
          <input aria-label="${this.label} value ${i + 1}" .value=${v} @input=${(e) => this.#set(i, 1, e.target.value)} />
          <button
            type="button"
            class="small"
            aria-label="Remove ${this.label} row ${i + 1}"
            @click=${() => this.#emit(this.pairs.filter((_, k) => k !== i))}
          >
            Remove
          </button>
        </div>`,
      )}
      <button type="button" class="small" @click=${() => this.#add()}>Add a row</button>`;
  }
}

customElements.define('pairs-editor', PairsEditor);
