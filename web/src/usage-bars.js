/* usage-bars.js - <usage-bars>: one scope's resources (a keypair, a
 * project, a resource group) as labelled bars, used against limit per
 * slot.  .used and .limit are slot maps (slots.js); an unlimited slot shows
 * what is used and "no limit".  GPU slots show only where there is a limit
 * or some use, so that a cluster without GPUs shows none. */
import { html } from 'lit';
import { TesseraElement } from './element.js';
import { SLOT_LABELS, formatSlot } from './format.js';
import { SLOT_NAMES } from './slots.js';

function shown(name, used, limit) {
  if (name === 'cpu' || name === 'mem') return true;
  return used > 0 || (Number.isFinite(limit) && limit > 0);
}

class UsageBars extends TesseraElement {
  static properties = {
    heading: {},
    note: {},
    used: { attribute: false },
    limit: { attribute: false },
  };

  constructor() {
    super();
    this.heading = '';
    this.note = '';
    this.used = {};
    this.limit = {};
  }

  #bar(name) {
    const used = this.used[name] ?? 0, limit = this.limit[name] ?? Infinity;
    const unlimited = !Number.isFinite(limit);
    const fraction = unlimited ? 0 : limit > 0 ? Math.min(1, used / limit) : 1;
    const text = unlimited
      ? `${formatSlot(name, used)} used, no limit`
      : `${formatSlot(name, used)} of ${formatSlot(name, limit)}`;
    const level = fraction >= 0.9 ? 'full' : fraction >= 0.7 ? 'high' : 'ok';
    return html`<div class="usage-row">
      <span class="usage-label">${SLOT_LABELS[name]}</span>
      <span class="usage-text">${text}</span>
      <div
        class="bar ${unlimited ? 'unlimited' : level}"
        role="meter"
        aria-label="${SLOT_LABELS[name]} used"
        aria-valuemin="0"
        aria-valuemax=${unlimited ? used || 1 : limit}
        aria-valuenow=${used}
        aria-valuetext=${text}
      >
        <div class="bar-fill" style="width: ${(fraction * 100).toFixed(1)}%"></div>
      </div>
    </div>`;
  }

  render() {
    const names = SLOT_NAMES.filter((n) => shown(n, this.used[n] ?? 0, this.limit[n] ?? Infinity));
    return html`<section class="card usage" aria-label=${this.heading}>
      <h3>${this.heading}</h3>
      ${this.note ? html`<p class="muted small">${this.note}</p>` : ''} ${names.map((n) => this.#bar(n))}
    </section>`;
  }
}

customElements.define('usage-bars', UsageBars);
