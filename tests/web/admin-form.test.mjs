/* admin-form.test.mjs - web/src/admin-form.js: rows as form values and form
 * values as create and change bodies (slots, storage host permissions,
 * JSON); and that every entity of admin-entities.js uses kinds the list
 * and the form know. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ENTITIES, entityOf, rowPath } from '../../web/src/admin-entities.js';
import { HOST_PERMISSIONS, formBody, formFields, formValues } from '../../web/src/admin-form.js';

const POLICY = entityOf('policies').fields;
const USER = entityOf('users').fields;

test('a create sends what was filled in, slots as an object', () => {
  const v = formValues(POLICY, null);
  v.name = ' gpu-heavy ';
  v.total_resource_slots = [['cpu', '4'], ['mem', '8g'], ['', '']];
  v.max_concurrent_sessions = '3';
  assert.deepEqual(formBody(POLICY, v), {
    name: 'gpu-heavy',
    total_resource_slots: { cpu: '4', mem: '8g' },
    max_concurrent_sessions: 3,
    allow_user_keypairs: true,
  });
});

test('a create says what is missing or malformed', () => {
  const v = formValues(POLICY, null);
  assert.throws(() => formBody(POLICY, v), /Name is required/);
  v.name = 'p';
  v.max_concurrent_sessions = '2.5';
  assert.throws(() => formBody(POLICY, v), /Sessions at once must be a whole number/);
  v.max_concurrent_sessions = '';
  v.total_resource_slots = [['cpu', '1'], ['cpu', '2']];
  assert.throws(() => formBody(POLICY, v), /'cpu' is there twice/);
  v.total_resource_slots = [['', '2']];
  assert.throws(() => formBody(POLICY, v), /a row has a value but no name/);
});

test('bools are sent on create; a user starts with its defaults', () => {
  const v = formValues(USER, null);
  assert.equal(v.role, 'user');
  v.email = 'a@b.test';
  v.password = 'long-enough';
  v.projects = 'default, webproj';
  assert.deepEqual(formBody(USER, v), {
    email: 'a@b.test',
    password: 'long-enough',
    role: 'user',
    status: 'active',
    projects: ['default', 'webproj'],
    need_password_change: false,
  });
});

const ROW = {
  name: 'p',
  total_resource_slots: { cpu: '4', mem: '8589934592' },
  max_concurrent_sessions: 3,
  max_pending_session_count: null,
  max_pending_session_resource_slots: null,
  max_containers_per_session: 1,
  idle_timeout: 0,
  max_session_lifetime: 0,
  max_vfolder_count: 0,
  max_quota_scope_size: '0',
  max_customized_image_count: 0,
  allowed_vfolder_hosts: {},
  max_keypairs_per_user: 10,
  allow_user_keypairs: true,
  max_session_priority: 10,
  max_container_disk: '0',
};

test('a change sends only what differs; the same amount in other units is no change', () => {
  const v = formValues(POLICY, ROW);
  assert.deepEqual(v.total_resource_slots, [['cpu', '4'], ['mem', '8589934592']]);
  v.total_resource_slots = [['cpu', '4.0'], ['mem', '8g']];
  assert.throws(() => formBody(POLICY, v, ROW), /Nothing was changed/);
  v.max_concurrent_sessions = '5';
  v.total_resource_slots = [['cpu', '8'], ['mem', '8g']];
  assert.deepEqual(formBody(POLICY, v, ROW), { max_concurrent_sessions: 5, total_resource_slots: { cpu: '8', mem: '8g' } });
});

test('a change leaves create-only fields and an empty password out; nullable fields empty to null', () => {
  const user = { email: 'a@b.test', role: 'user', status: 'active', domain: 'default', projects: ['default'],
                 full_name: 'A', need_password_change: false, username: 'a', description: '' };
  const v = formValues(USER, user);
  assert.equal(v.password, '');
  assert.ok(!formFields(USER, false).some((f) => f.name === 'resource_policy'));
  v.full_name = 'Alice';
  assert.deepEqual(formBody(USER, v, user), { full_name: 'Alice' });
  v.full_name = '';
  assert.deepEqual(formBody(USER, v, user), { full_name: '' });
  const pv = formValues(POLICY, { ...ROW, max_pending_session_count: 4 });
  pv.max_pending_session_count = '';
  assert.deepEqual(formBody(POLICY, pv, { ...ROW, max_pending_session_count: 4 }), { max_pending_session_count: null });
});

test("a policy's keypair, priority and disk limits: sent on create as filled in, changed alone", () => {
  const v = formValues(POLICY, null);
  assert.equal(v.allow_user_keypairs, true); /* the manager's default */
  Object.assign(v, { name: 'p', max_keypairs_per_user: '2', allow_user_keypairs: false, max_session_priority: '0',
                     max_container_disk: '20g' });
  assert.deepEqual(formBody(POLICY, v), {
    name: 'p', max_keypairs_per_user: 2, allow_user_keypairs: false, max_session_priority: 0, max_container_disk: '20g',
  });
  const c = formValues(POLICY, ROW);
  assert.equal(c.max_container_disk, '0');
  c.max_container_disk = '1g';
  c.allow_user_keypairs = false;
  assert.deepEqual(formBody(POLICY, c, ROW), { allow_user_keypairs: false, max_container_disk: '1g' });
  c.max_session_priority = '';
  assert.throws(() => formBody(POLICY, c, ROW), /Highest session priority cannot be left empty/);
});

test("a user's own resource limit is offered on create and on a change", () => {
  assert.ok(formFields(USER, true).some((f) => f.name === 'total_resource_slots'));
  assert.ok(formFields(USER, false).some((f) => f.name === 'total_resource_slots'));
  const user = { email: 'a@b.test', role: 'user', status: 'active', domain: 'default', projects: ['default'],
                 full_name: 'A', need_password_change: false, username: 'a', description: '', total_resource_slots: {} };
  const v = formValues(USER, user);
  v.total_resource_slots = [['cpu', '2']];
  v.need_password_change = true;
  assert.deepEqual(formBody(USER, v, user), { need_password_change: true, total_resource_slots: { cpu: '2' } });
});

const DOMAIN = entityOf('domains').fields;
const GROUP = entityOf('resource-groups').fields;

test('storage host permissions: rows of host and permissions, sent as an object, compared as sets', () => {
  const row = { name: 'd', description: '', is_active: true, total_resource_slots: {}, allowed_docker_registries: [],
                allowed_vfolder_hosts: { local: ['create-vfolder', 'mount-in-session'] } };
  const v = formValues(DOMAIN, row);
  assert.deepEqual(v.allowed_vfolder_hosts, [['local', ['create-vfolder', 'mount-in-session']]]);
  v.allowed_vfolder_hosts = [['local', ['mount-in-session', 'create-vfolder']]];
  assert.throws(() => formBody(DOMAIN, v, row), /Nothing was changed/);
  v.allowed_vfolder_hosts = [[' local ', ['mount-in-session', 'create-vfolder', 'download-file']], ['', []], ['nfs', []]];
  assert.deepEqual(formBody(DOMAIN, v, row), {
    allowed_vfolder_hosts: { local: ['create-vfolder', 'mount-in-session', 'download-file'], nfs: [] },
  });
  v.allowed_vfolder_hosts = [['', ['upload-file']]];
  assert.throws(() => formBody(DOMAIN, v, row), /Storage hosts: a row has permissions but no host/);
  v.allowed_vfolder_hosts = [['a', []], ['a', ['upload-file']]];
  assert.throws(() => formBody(DOMAIN, v, row), /'a' is there twice/);
  const c = formValues(DOMAIN, null);
  c.name = 'newdom';
  assert.deepEqual(formBody(DOMAIN, c), { name: 'newdom', is_active: true });
  assert.equal(HOST_PERMISSIONS.length, 8);
});

test('scheduler options: JSON checked before it is sent, an object, keys in any order', () => {
  const row = { name: 'g', scheduler: 'fifo', scheduler_opts: { pending_timeout: 60, agent_selection: 'dispersed' },
                is_active: true, is_public: true, description: '', wsproxy_addr: null };
  const v = formValues(GROUP, row);
  assert.deepEqual(JSON.parse(v.scheduler_opts), row.scheduler_opts);
  v.scheduler_opts = '{"agent_selection": "dispersed", "pending_timeout": 60}';
  assert.throws(() => formBody(GROUP, v, row), /Nothing was changed/);
  v.scheduler_opts = '{"agent_selection": "dispersed",}';
  assert.throws(() => formBody(GROUP, v, row), /Scheduler options is not valid JSON/);
  v.scheduler_opts = '[1]';
  assert.throws(() => formBody(GROUP, v, row), /Scheduler options must be a JSON object/);
  v.scheduler_opts = '';
  assert.deepEqual(formBody(GROUP, v, row), { scheduler_opts: {} });
  v.scheduler_opts = '{"pending_timeout": 600}';
  assert.deepEqual(formBody(GROUP, v, row), { scheduler_opts: { pending_timeout: 600 } });
  const c = formValues(GROUP, null);
  c.name = 'g2';
  assert.equal(formBody(GROUP, c).scheduler_opts, undefined);
});

test('the resource group of a preset: empty is null (all groups) on a change', () => {
  const PRESET = entityOf('presets').fields;
  const row = { name: 'small', resource_slots: { cpu: '1', mem: '1073741824' }, shared_memory: null, resource_group: 'default' };
  const v = formValues(PRESET, row);
  v.resource_group = '';
  v.shared_memory = '64m';
  assert.deepEqual(formBody(PRESET, v, row), { resource_group: null, shared_memory: '64m' });
  const c = formValues(PRESET, null);
  c.name = 'p';
  assert.throws(() => formBody(PRESET, c), /Resources is required/);
});

test('every entity uses known kinds and keys, and names rows by path', () => {
  const columnKinds = [undefined, 'text', 'mono', 'bool', 'toggle', 'list', 'slots', 'bytes', 'time', 'labels',
                       'host-perms', 'status', 'slot-bars', 'devices'];
  const fieldKinds = ['text', 'email', 'password', 'size', 'int', 'bool', 'choice', 'list', 'slots', 'labels',
                      'host-perms', 'json'];
  for (const e of ENTITIES) {
    const readOnly = e.create === false && e.update === false && e.remove === false;
    assert.ok(e.path.startsWith('/admin/') && e.key && e.columns.length && (e.fields.length || readOnly), e.id);
    for (const c of e.columns) assert.ok(columnKinds.includes(c.kind), `${e.id}.${c.name}: ${c.kind}`);
    for (const f of e.fields) assert.ok(fieldKinds.includes(f.kind), `${e.id}.${f.name}: ${f.kind}`);
  }
  assert.equal(rowPath(entityOf('users'), { email: 'a+b@c.test' }), '/admin/users/a%2Bb%40c.test');
});
