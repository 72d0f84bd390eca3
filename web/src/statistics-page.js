/* statistics-page.js - <statistics-page>: usage over time as charts with
 * tables (usage-chart.js): CPU core-hours allocated and used (measured),
 * memory GiB-hours, GPU-hours, GiB of disk I/O and sessions per day.  Everyone sees their own last 30 days (GET
 * /resource/stats/user/month); admins, superadmins and monitors may widen
 * the scope to every user, project or domain they oversee over chosen
 * dates (GET /admin/usage?start_date=&end_date=&group_by=), a series for
 * each of the five that used most and one for the others. */
import { html, nothing } from 'lit';
import { api, query } from './api.js';
import { auth } from './auth.js';
import { TesseraElement } from './element.js';
import { formatAmount } from './format.js';
import { loadNotice } from './notices.js';
import { METRICS, fromAdminUsage, fromUserMonth } from './usage-stats.js';
import './usage-chart.js';

const WIDE_ROLES = ['superadmin', 'admin', 'monitor'];
const SCOPES = [
  ['mine', 'My usage (last 30 days)'],
  ['user', 'Per user'],
  ['project', 'Per project'],
  ['domain', 'Per domain'],
];
const DAY_MS = 86400000;

const isoDay = (t) => new Date(t).toISOString().slice(0, 10);

class StatisticsPage extends TesseraElement {
  static properties = {
    scope: { state: true },
    start: { state: true },
    end: { state: true },
    stats: { state: true },
    error: { state: true },
  };

  constructor() {
    super();
    this.scope = 'mine';
    this.end = isoDay(Date.now());
    this.start = isoDay(Date.now() - 29 * DAY_MS);
    this.stats = this.error = null;
  }

  connectedCallback() {
    super.connectedCallback();
    this.#load();
  }

  async #load() {
    this.stats = this.error = null;
    try {
      this.stats =
        this.scope === 'mine'
          ? fromUserMonth(await api('GET', '/resource/stats/user/month'), auth.user?.email ?? 'You')
          : fromAdminUsage(
              await api('GET', `/admin/usage${query({ start_date: this.start, end_date: this.end, group_by: this.scope })}`),
            );
    } catch (e) {
      this.error = e;
    }
  }

  #choose(e) {
    e.preventDefault();
    const form = e.currentTarget;
    this.scope = form.scope.value;
    if (form.start) [this.start, this.end] = [form.start.value, form.end.value];
    this.#load();
  }

  #controls() {
    if (!WIDE_ROLES.includes(auth.user?.role)) return nothing;
    return html`<form class="filters" aria-label="What to show" @submit=${this.#choose}>
      <div class="field">
        <label for="stats-scope">Scope</label>
        <select id="stats-scope" name="scope" @change=${(e) => (this.scope = e.target.value)}>
          ${SCOPES.map(([v, label]) => html`<option value=${v} ?selected=${v === this.scope}>${label}</option>`)}
        </select>
      </div>
      ${this.scope === 'mine'
        ? nothing
        : html`<div class="field">
              <label for="stats-start">From</label>
              <input id="stats-start" name="start" type="date" .value=${this.start} required />
            </div>
            <div class="field">
              <label for="stats-end">To</label>
              <input id="stats-end" name="end" type="date" .value=${this.end} required />
            </div>`}
      <button type="submit">Show</button>
    </form>`;
  }

  #totals() {
    const { series } = this.stats;
    return html`<p class="counts" aria-label="Totals over the period">
      ${METRICS.map((m) => {
        const sum = series.reduce((n, s) => n + s.values[m.id].reduce((a, b) => a + b, 0), 0);
        return html`<span><strong>${formatAmount(sum)}</strong> ${m.total ?? m.unit}</span>`;
      })}
    </p>`;
  }

  render() {
    const notice = loadNotice(this.error, this.stats, 'usage');
    return html`<div class="page-head"><h1>Statistics</h1></div>
      ${this.#controls()}
      ${notice ??
      html`${this.#totals()}
        <div class="chart-grid">
          ${METRICS.map(
            (m) => html`<usage-chart .metric=${m} .days=${this.stats.days} .series=${this.stats.series}></usage-chart>`,
          )}
        </div>`}`;
  }
}

customElements.define('statistics-page', StatisticsPage);
