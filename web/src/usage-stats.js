/* usage-stats.js - usage reports as series to chart, apart from any DOM.
 * The manager accounts allocation in slot-seconds (src/manager/usage/usage.h:
 * core-seconds, byte-seconds, GPU-seconds as decimal strings); here they
 * become, per day, CPU core-hours, memory GiB-hours, GPU-hours (whole
 * GPUs and fGPU shares together) and the number of sessions.  Beside
 * them, measured use (src/manager/usage/usage_measure.h): the CPU time the
 * containers used, as core-hours, and the GiB they read and wrote.
 *
 * Both readers answer {days: ['YYYY-MM-DD', ...], series: [{name, values:
 * {cpu: [...], cpuUsed: [...], mem: [...], gpu: [...], io: [...],
 * sessions: [...]}}]}, one value per day per metric. */
import { slotNumber } from './slots.js';

const HOUR = 3600;
const GIB = 2 ** 30;

/* What is charted, in order; `total` names the period's sum when the
 * unit alone would not tell it from another metric's. */
export const METRICS = [
  { id: 'cpu', title: 'CPU allocated', unit: 'core-hours', total: 'core-hours allocated' },
  { id: 'cpuUsed', title: 'CPU used', unit: 'core-hours', total: 'core-hours used' },
  { id: 'mem', title: 'Memory', unit: 'GiB-hours' },
  { id: 'gpu', title: 'GPU', unit: 'GPU-hours' },
  { id: 'io', title: 'Disk I/O', unit: 'GiB', total: 'GiB read and written' },
  { id: 'sessions', title: 'Sessions', unit: 'sessions' },
];

/* One day's amounts from slot-seconds, a session count and what was
 * measured: {cpuSeconds (CPU time), ioBytes (read and written)}. */
export function amounts(slotSeconds = {}, sessions = 0, used = {}) {
  const n = (slot) => slotNumber(slotSeconds[slot] ?? 0);
  return {
    cpu: n('cpu') / HOUR,
    cpuUsed: (used.cpuSeconds ?? 0) / HOUR,
    mem: n('mem') / GIB / HOUR,
    gpu: (n('cuda.device') + n('cuda.shares')) / HOUR,
    io: (used.ioBytes ?? 0) / GIB,
    sessions,
  };
}

/* Measured use of a day of GET /resource/stats/user/month (cpu_used in
 * msec, io_*_bytes in bytes, each {value, unit_hint}). */
function usedOfBin(b) {
  return {
    cpuSeconds: (b.cpu_used?.value ?? 0) / 1000,
    ioBytes: (b.io_read_bytes?.value ?? 0) + (b.io_write_bytes?.value ?? 0),
  };
}

/* Measured use of an item or total of GET /admin/usage. */
function usedOfScope(x) {
  return { cpuSeconds: x.cpu_used_seconds ?? 0, ioBytes: (x.io_read_bytes ?? 0) + (x.io_write_bytes ?? 0) };
}

function emptySeries(name, ndays) {
  const values = {};
  for (const m of METRICS) values[m.id] = new Array(ndays).fill(0);
  return { name, values };
}

function add(series, day, a) {
  for (const m of METRICS) series.values[m.id][day] += a[m.id];
}

/* GET /resource/stats/user/month: the caller's last 30 days, one series. */
export function fromUserMonth(bins, name = 'You') {
  const days = bins.map((b) => b.day);
  const series = emptySeries(name, days.length);
  bins.forEach((b, i) => add(series, i, amounts(b.slot_seconds, b.num_sessions?.value ?? 0, usedOfBin(b))));
  return { days, series: [series] };
}

/* Every day from first to last ('YYYY-MM-DD', UTC), both included. */
export function daysBetween(first, last) {
  const days = [];
  for (let t = Date.parse(`${first}T00:00:00Z`); t <= Date.parse(`${last}T00:00:00Z`); t += 86400000)
    days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/* How much a scope used over the period, to rank scopes: GPU-hours weigh
 * as ten core-hours, as in fair-share (src/manager/usage/usage.c). */
function weight(a) {
  return a.cpu + 10 * a.gpu + a.mem / 8;
}

/* GET /admin/usage: one series per scope (a user's email, a project's or
 * domain's name), the `top` that used most, the rest summed as "others". */
export function fromAdminUsage(answer, top = 5) {
  const days = daysBetween(answer.start_date, answer.end_date);
  const dayIndex = new Map(days.map((d, i) => [d, i]));
  const ranked = [...(answer.totals ?? [])].sort(
    (x, y) => weight(amounts(y.slot_seconds, y.sessions)) - weight(amounts(x.slot_seconds, x.sessions)),
  );
  const seriesOf = new Map();
  const series = ranked.slice(0, top).map((t) => {
    const s = emptySeries(t.scope_name ?? t.scope_id, days.length);
    seriesOf.set(t.scope_id, s);
    return s;
  });
  let others = null;
  for (const item of answer.items ?? []) {
    const day = dayIndex.get(item.day);
    if (day === undefined) continue;
    let s = seriesOf.get(item.scope_id);
    if (!s) s = others ??= emptySeries('others', days.length);
    add(s, day, amounts(item.slot_seconds, item.sessions, usedOfScope(item)));
  }
  return { days, series: others ? [...series, others] : series };
}
