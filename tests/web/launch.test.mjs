/* launch.test.mjs - web/src/launch.js and session-status.js: names, what
 * cannot fit, request bodies, why a session is where it is. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitProblems, generatedName, launchBodies, sessionNames, validName } from '../../web/src/launch.js';
import { statusKind, statusReason } from '../../web/src/session-status.js';

test("session names follow the manager's rule", () => {
  assert.ok(validName('webui-1'));
  assert.ok(validName('a.b_c'));
  assert.ok(!validName('web'));
  assert.ok(!validName('-web1'));
  assert.ok(!validName('web1.'));
  assert.ok(!validName('x'.repeat(65)));
  assert.ok(validName(generatedName('cr.example.com/ml/pytorch', () => 0.5)));
  assert.match(generatedName('busybox', () => 0), /^busybox-aaaa$/);
});

test('several sessions are numbered', () => {
  assert.deepEqual(sessionNames('train', 1), ['train']);
  assert.deepEqual(sessionNames('train', 3), ['train-1', 'train-2', 'train-3']);
});

test('what cannot fit: blocking when one session cannot, a warning when the count cannot', () => {
  const remaining = { cpu: 4, mem: 8 * 2 ** 30 };
  const ok = { cpu: { min: 0.1, max: 4 }, mem: { min: 2 ** 27, max: 8 * 2 ** 30 } };
  assert.deepEqual(fitProblems({ cpu: 2, mem: 2 ** 30 }, 2, ok, remaining), []);
  const warn = fitProblems({ cpu: 2, mem: 2 ** 30 }, 3, ok, remaining);
  assert.equal(warn.length, 1);
  assert.equal(warn[0].blocking, false);
  assert.match(warn[0].text, /3 sessions need 6 cores but 4 cores remain/);
  const tooBig = fitProblems({ cpu: 1, mem: 2 ** 30 }, 1, { ...ok, cpu: { min: 2, max: 1 } }, remaining);
  assert.equal(tooBig[0].blocking, true);
  assert.match(tooBig[0].text, /needs at least 2 cores, but only 1 core remain/);
});

test('launch bodies: enqueued, exact resources, batch fields only for batch', () => {
  const form = {
    names: ['a-run-1', 'a-run-2'],
    image: 'busybox:latest',
    type: 'batch',
    command: 'echo hi',
    startsAt: new Date('2030-01-02T03:04:05Z'),
    project: 'default',
    resourceGroup: 'default',
    request: { cpu: 1, mem: 268435456, 'cuda.shares': 0, 'cuda.device': 0 },
    mounts: ['data'],
  };
  const [first, second] = launchBodies(form);
  assert.equal(second.name, 'a-run-2');
  assert.deepEqual(first, {
    name: 'a-run-1',
    image: 'busybox:latest',
    type: 'batch',
    group: 'default',
    enqueueOnly: true,
    config: { resources: { cpu: '1', mem: '268435456' }, mounts: ['data'], scaling_group: 'default' },
    startupCommand: 'echo hi',
    starts_at: '2030-01-02T03:04:05.000Z',
  });
  const [interactive] = launchBodies({ ...form, type: 'interactive', resourceGroup: null });
  assert.equal(interactive.startupCommand, undefined);
  assert.equal(interactive.starts_at, undefined);
  assert.equal(interactive.config.scaling_group, undefined);
});

test('why a session is where it is', () => {
  const scheduler = { scheduler: { msg: 'no agent has room for cpu 2' } };
  assert.equal(statusReason({ status: 'PENDING', statusData: scheduler }), 'no agent has room for cpu 2');
  assert.equal(statusReason({ status: 'PENDING', statusData: {} }), 'waiting for the scheduler');
  assert.equal(statusReason({ status: 'TERMINATED', statusInfo: 'user-requested', result: 'UNDEFINED' }), 'user-requested');
  assert.equal(statusReason({ status: 'TERMINATED', statusInfo: 'task-finished', result: 'SUCCESS' }), 'success, task-finished');
  assert.equal(statusReason({ status: 'RUNNING', statusInfo: 'x' }), '');
  const mark = { agentUnreachable: { agent: 'node-1', since: '2026-11-28T06:40:02.123Z', statusInfo: null } };
  assert.equal(statusReason({ status: 'RUNNING', statusInfo: 'agent-unreachable', statusData: mark }),
    'agent node-1 unreachable since 2026-11-28 06:40:02Z; the session waits for it');
  assert.equal(statusReason({ status: 'ERROR', statusInfo: 'agent-lost', statusData: mark }), 'agent-lost');
  assert.equal(statusKind('PREPARING'), 'starting');
  assert.equal(statusKind('ERROR'), 'failed');
});
