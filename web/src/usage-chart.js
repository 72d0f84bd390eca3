/* usage-chart.js - <usage-chart>: one metric of usage-stats.js over days
 * as a uPlot line chart (a line per series, with a legend when there are
 * several) and, beside it, the same numbers as a table, newest day
 * first, for those who do not see the chart.  .metric is a row of METRICS, .days the days, .series
 * the series.  The chart follows the width of its box.  uplot is imported
 * here only, so it stays in the statistics page's chunk. */
import { html } from 'lit';
import uPlot from 'uplot';
import { TesseraElement } from './element.js';
import { formatAmount } from './format.js';

const COLORS = ['#2457c5', '#1e7a3c', '#b42318', '#8a5a00', '#6b3fa0', '#5b6575'];
const HEIGHT = 220;

const utcSeconds = (day) => Date.parse(`${day}T00:00:00Z`) / 1000;

class UsageChart extends TesseraElement {
  static properties = {
    metric: { attribute: false },
    days: { attribute: false },
    series: { attribute: false },
  };

  #plot = null;
  #resizer = null;

  constructor() {
    super();
    this.metric = null;
    this.days = [];
    this.series = [];
  }

  connectedCallback() {
    super.connectedCallback();
    this.#resizer = new ResizeObserver(() => {
      const box = this.querySelector('.chart');
      if (this.#plot && box) this.#plot.setSize({ width: box.clientWidth, height: HEIGHT });
    });
    this.#resizer.observe(this);
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    this.#resizer?.disconnect();
    this.#plot?.destroy();
    this.#plot = null;
  }

  updated() {
    this.#plot?.destroy();
    const box = this.querySelector('.chart');
    const several = this.series.length > 1;
    const data = [this.days.map(utcSeconds), ...this.series.map((s) => s.values[this.metric.id])];
    this.#plot = new uPlot(
      {
        width: box.clientWidth || 300,
        height: HEIGHT,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: several },
        cursor: { y: false },
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [{}, { size: 70, values: (u, splits) => splits.map(formatAmount) }],
        series: [
          {},
          ...this.series.map((s, i) => ({
            label: s.name,
            stroke: COLORS[i % COLORS.length],
            fill: several ? undefined : `${COLORS[0]}22`,
            width: 2,
            points: { show: true, size: 5 },
            value: (u, v) => (v === null ? '—' : formatAmount(v)),
          })),
        ],
      },
      data,
      box,
    );
  }

  render() {
    const { id, title, unit } = this.metric;
    return html`<figure class="card chart-card" aria-labelledby="chart-${id}-title">
      <figcaption id="chart-${id}-title"><h3>${title} <span class="muted small">${unit} per day</span></h3></figcaption>
      <div class="chart-body">
        <div class="chart" role="img" aria-label="${title}: ${unit} per day as a chart; the table has the same numbers"></div>
        <div class="chart-table" tabindex="0" role="region" aria-label="${title}: ${unit} per day as a table">
          <table class="num-table">
            <thead>
              <tr>
                <th scope="col">Day</th>
                ${this.series.map((s) => html`<th scope="col">${s.name}</th>`)}
              </tr>
            </thead>
            <tbody>
              ${this.days.map((_, k) => {
                const i = this.days.length - 1 - k;
                return html`<tr data-day=${this.days[i]}>
                  <th scope="row">${this.days[i]}</th>
                  ${this.series.map((s) => html`<td>${formatAmount(s.values[id][i])}</td>`)}
                </tr>`;
              })}
            </tbody>
          </table>
        </div>
      </div>
    </figure>`;
  }
}

customElements.define('usage-chart', UsageChart);
