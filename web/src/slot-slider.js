/* slot-slider.js - <slot-slider>: one resource as a range slider and a
 * number box that follow each other, bounded by min and max and moving in
 * steps.  Values are in the slider's unit (cores, GiB, fGPU, GPUs); .value
 * is the current one; a 'slot-change' event with detail {value} follows
 * each edit (a name of its own: the inputs' 'change' bubbles out too).  A
 * max below min disables it and says so in the hint. */
import { html, nothing } from 'lit';
import { TesseraElement } from './element.js';
import { floorTo } from './slots.js';

let nextId = 0;

class SlotSlider extends TesseraElement {
  static properties = {
    label: {},
    unit: {},
    min: { type: Number },
    max: { type: Number },
    step: { type: Number },
    value: { type: Number },
    hint: {},
  };

  #id = `slot-slider-${++nextId}`;

  constructor() {
    super();
    this.label = '';
    this.unit = '';
    this.min = 0;
    this.max = 1;
    this.step = 1;
    this.value = 0;
    this.hint = '';
  }

  #set(raw) {
    let v = Number.parseFloat(raw);
    if (!Number.isFinite(v)) v = this.min;
    v = Math.min(this.max, Math.max(this.min, floorTo(v, this.step)));
    this.value = v;
    this.dispatchEvent(new CustomEvent('slot-change', { detail: { value: v } }));
  }

  /* The slider follows every move (input); the number box a finished
   * edit (change), so that typing is not clamped halfway. */
  #input(type, { id, label }) {
    const set = (e) => this.#set(e.target.value);
    return html`<input
      id=${id ?? nothing}
      type=${type}
      aria-label=${label ?? nothing}
      aria-describedby="${this.#id}-hint"
      min=${this.min}
      max=${Math.max(this.min, this.max)}
      step=${this.step}
      .value=${String(this.value)}
      ?disabled=${this.max < this.min || this.max <= 0}
      @input=${type === 'range' ? set : nothing}
      @change=${type === 'number' ? set : nothing}
    />`;
  }

  render() {
    return html`<div class="slot-slider">
      <label for=${this.#id}>${this.label}</label>
      <div class="slot-slider-inputs">
        ${this.#input('range', { label: `${this.label} (slider)` })} ${this.#input('number', { id: this.#id })}
        <span class="unit">${this.unit}</span>
      </div>
      <p id="${this.#id}-hint" class="hint">${this.hint}</p>
    </div>`;
  }
}

customElements.define('slot-slider', SlotSlider);
