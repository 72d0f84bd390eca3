/* usage-stats.test.mjs - web/src/usage-stats.js: slot-seconds as hours
 * per day, for the caller's month and for an admin's report by scope. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { amounts, daysBetween, fromAdminUsage, fromUserMonth } from '../../web/src/usage-stats.js';

test('slot-seconds become core-hours, GiB-hours and GPU-hours; measured use core-hours and GiB', () => {
  assert.deepEqual(amounts({ cpu: '7200', mem: String(4 * 2 ** 30 * 3600), 'cuda.shares': '1800', 'cuda.device': '3600' }, 2,
                           { cpuSeconds: 1800, ioBytes: 3 * 2 ** 30 }),
                   { cpu: 2, cpuUsed: 0.5, mem: 4, gpu: 1.5, io: 3, sessions: 2 });
  assert.deepEqual(amounts(undefined, 0), { cpu: 0, cpuUsed: 0, mem: 0, gpu: 0, io: 0, sessions: 0 });
});

test('the month of the caller is one series over its days', () => {
  const bins = [
    { day: '2025-01-01', num_sessions: { value: 0 }, slot_seconds: {} },
    { day: '2025-01-02', num_sessions: { value: 1 }, slot_seconds: { cpu: '36' },
      cpu_used: { value: 18000, unit_hint: 'msec' }, io_read_bytes: { value: 2 ** 29 }, io_write_bytes: { value: 2 ** 29 } },
  ];
  const s = fromUserMonth(bins, 'me@x.test');
  assert.deepEqual(s.days, ['2025-01-01', '2025-01-02']);
  assert.equal(s.series.length, 1);
  assert.equal(s.series[0].name, 'me@x.test');
  assert.deepEqual(s.series[0].values.cpu, [0, 0.01]);
  assert.deepEqual(s.series[0].values.sessions, [0, 1]);
  assert.deepEqual(s.series[0].values.cpuUsed, [0, 0.005]);
  assert.deepEqual(s.series[0].values.io, [0, 1]);
});

test('days between two dates, both included, across a month', () => {
  assert.deepEqual(daysBetween('2024-02-28', '2024-03-01'), ['2024-02-28', '2024-02-29', '2024-03-01']);
});

test('an admin report: the scopes that used most, the rest as others', () => {
  const scope = (id, cpu) => ({ scope_id: id, scope_name: `${id}@x`, sessions: 1, slot_seconds: { cpu: String(cpu) } });
  const answer = {
    start_date: '2025-01-01',
    end_date: '2025-01-02',
    totals: [scope('a', 3600), scope('b', 7200), scope('c', 360)],
    items: [
      { ...scope('a', 3600), day: '2025-01-01' },
      { ...scope('b', 7200), day: '2025-01-02', cpu_used_seconds: 3600, io_read_bytes: 2 ** 30, io_write_bytes: 0 },
      { ...scope('c', 360), day: '2025-01-02' },
    ],
  };
  const s = fromAdminUsage(answer, 2);
  assert.deepEqual(s.series.map((x) => x.name), ['b@x', 'a@x', 'others']);
  assert.deepEqual(s.series[0].values.cpu, [0, 2]);
  assert.deepEqual(s.series[1].values.cpu, [1, 0]);
  assert.deepEqual(s.series[2].values.cpu, [0, 0.1]);
  assert.deepEqual(s.series[2].values.sessions, [0, 1]);
  assert.deepEqual(s.series[0].values.cpuUsed, [0, 1]);
  assert.deepEqual(s.series[0].values.io, [0, 1]);
  assert.deepEqual(s.series[1].values.cpuUsed, [0, 0]);
});
