/* admin-entities.js - the admin collections the admin pages show, as data
 * (docs/design/admin-api.md): for each, its route, which field of a row
 * its {key} path parameter takes, the columns of its list, the fields of
 * its form, its list filters, and what more its rows offer (members,
 * access lists, a rescan).  <entity-list> (entity-list.js) and
 * <entity-form> (entity-form.js) draw any of them; to show another
 * collection, add a row here.
 *
 * An entity: {id, title, noun, path, key, label(row)?, columns, fields,
 *   filters?, create?, update?, remove? (false: not offered; default
 *   true), removeVerb?, once?(answer) -> [[label, value]] shown once after
 *   a create (secret keys), lists?, task?}.
 * A column: {name, label, kind?, empty?, zero? (what a 0 means: shown
 *   for it)}: kinds text (default), mono,
 *   bool, toggle (a switch that PATCHes the field), list, slots, bytes,
 *   time, labels, host-perms (allowed_vfolder_hosts), status (with
 *   classes: value -> status-<class>, an object or a function), slot-bars (used: name, limit: the
 *   `limit` field), devices (an agent's GPUs).
 * A field: {name, label, kind, required?, create? (set on create only),
 *   writeOnly? (never shown back), nullable?, choices?, choicesFrom?,
 *   none? (the label of a choice's empty option), shape? ('object': a
 *   json field must be an object), default?, hint?, placeholder?}; kinds
 *   as admin-form.js says.
 * A filter: {param, label, choices?, choiceLabels?, kind? ('datetime':
 *   a local date and time, sent as ISO 8601), placeholder?}.
 * A collection that is only read (the audit log): create, update and
 *   remove false.
 * lists: string lists edited one entry at a time (a project's members,
 *   a resource group's access): {label, readPath ('' = the row itself),
 *   changePath, sections: [{id, label, placeholder}], read(answer) ->
 *   {sectionId: [strings]}, body(sectionId, 'add'|'remove', value)}.
 * task: a background task a row starts: {label, path, describe(result)}. */

const ROLES = ['superadmin', 'admin', 'user', 'monitor'];
const SLOTS_HINT = 'One slot a row: cpu 4, mem 8g, cuda.shares 0.5, cuda.device 1; "Infinity" for no limit.';
const SECONDS_HINT = 'Seconds; 0 = no limit.';
const active = { name: 'is_active', label: 'Active', kind: 'bool', default: true };
const HOSTS_HINT =
  'What users may do on each storage host; the domain\'s, the project\'s and the keypair resource policy\'s ' +
  'permissions add up (superadmins may do everything).';
const hostPerms = { name: 'allowed_vfolder_hosts', label: 'Storage hosts', kind: 'host-perms', hint: HOSTS_HINT };
const hostPermsColumn = { name: 'allowed_vfolder_hosts', label: 'Storage hosts', kind: 'host-perms' };
/* An audit entry's HTTP status as a badge: done, refused, failed. */
const auditStatus = (code) => (code < 400 ? 'running' : code < 500 ? 'waiting' : 'failed');
const SCHEDULER_OPTS_HINT =
  'A JSON object: agent_selection ("concentrated", "dispersed" or "roundrobin"), num_retries_to_skip, ' +
  'reserve_after_retries, allow_fragmentation (true or false), pending_timeout and fair_share_half_life ' +
  '(seconds). Empty: the defaults.';

export const ENTITIES = [
  {
    id: 'users',
    title: 'Users',
    noun: 'user',
    path: '/admin/users',
    key: 'email',
    columns: [
      { name: 'email', label: 'Email' },
      { name: 'full_name', label: 'Name', empty: '' },
      { name: 'role', label: 'Role' },
      { name: 'status', label: 'Status', kind: 'status', classes: { active: 'running', inactive: 'ended' } },
      { name: 'domain', label: 'Domain' },
      { name: 'projects', label: 'Projects', kind: 'list' },
    ],
    fields: [
      { name: 'email', label: 'Email', kind: 'email', required: true, create: true },
      { name: 'password', label: 'Password', kind: 'password', required: true,
        hint: 'At least 8 characters; left empty on a change, the password stays.' },
      { name: 'username', label: 'User name', kind: 'text', hint: 'Default: the email.' },
      { name: 'full_name', label: 'Full name', kind: 'text' },
      { name: 'role', label: 'Role', kind: 'choice', choices: ROLES, default: 'user' },
      { name: 'status', label: 'Status', kind: 'choice', choices: ['active', 'inactive'], default: 'active' },
      { name: 'domain', label: 'Domain', kind: 'text', create: true, hint: 'Default: yours.' },
      { name: 'projects', label: 'Projects', kind: 'list', create: true,
        hint: 'Names, separated by commas; default: the project "default".' },
      { name: 'resource_policy', label: 'Resource policy of the main keypair', kind: 'text', create: true,
        writeOnly: true, hint: 'Default: "default".' },
      { name: 'need_password_change', label: 'Must change the password at the next login', kind: 'bool',
        hint: 'Until then the web UI offers the user nothing but the password change.' },
      { name: 'description', label: 'Description', kind: 'text' },
      { name: 'total_resource_slots', label: 'Resources in use at once, on all keypairs', kind: 'slots',
        hint: `A limit of this user's own, on top of the keypair resource policy's; none = no limit of its own. ${SLOTS_HINT}` },
    ],
    filters: [
      { param: 'role', label: 'Role', choices: ROLES },
      { param: 'status', label: 'Status', choices: ['active', 'inactive'] },
    ],
    once: (a) => a.keypair && [['Access key', a.keypair.access_key], ['Secret key', a.keypair.secret_key]],
  },
  {
    id: 'keypairs',
    title: 'Keypairs',
    noun: 'keypair',
    path: '/admin/keypairs',
    key: 'access_key',
    columns: [
      { name: 'access_key', label: 'Access key', kind: 'mono' },
      { name: 'email', label: 'User' },
      { name: 'resource_policy', label: 'Policy' },
      { name: 'is_active', label: 'Active', kind: 'toggle' },
      { name: 'is_main', label: 'Main', kind: 'bool' },
      { name: 'rate_limit', label: 'Rate limit', empty: 'none' },
      { name: 'last_used', label: 'Last used', kind: 'time' },
    ],
    fields: [
      { name: 'user', label: 'User (email)', kind: 'email', create: true, writeOnly: true, hint: 'Default: you.' },
      { name: 'access_key', label: 'Access key', kind: 'text', create: true,
        hint: '20 characters, to bring a keypair from elsewhere; default: a new one.' },
      { name: 'secret_key', label: 'Secret key', kind: 'password', create: true, writeOnly: true,
        hint: '40 characters, with the access key; default: a new one, shown once.' },
      { name: 'resource_policy', label: 'Resource policy', kind: 'text', hint: 'Default: "default".' },
      { ...active },
      { name: 'is_main', label: 'Main keypair of the user', kind: 'bool' },
      { name: 'rate_limit', label: 'Rate limit', kind: 'int', hint: 'Requests per minute; 0 = unlimited.' },
    ],
    filters: [{ param: 'user', label: 'User (email)' }],
    once: (a) => a.secret_key && [['Access key', a.access_key], ['Secret key', a.secret_key]],
  },
  {
    id: 'policies',
    title: 'Resource policies',
    noun: 'keypair resource policy',
    path: '/admin/keypair-policies',
    key: 'name',
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'total_resource_slots', label: 'Resources', kind: 'slots', empty: 'unlimited' },
      { name: 'max_concurrent_sessions', label: 'Sessions at once', zero: 'unlimited' },
      { name: 'max_pending_session_count', label: 'Pending sessions', empty: 'unlimited' },
      { name: 'max_session_lifetime', label: 'Lifetime (s)', zero: 'none' },
      { name: 'idle_timeout', label: 'Idle timeout (s)', zero: 'none' },
      { name: 'max_keypairs_per_user', label: 'Keypairs per user', zero: 'unlimited' },
      { name: 'max_session_priority', label: 'Highest priority' },
      { name: 'max_container_disk', label: 'Container disk', kind: 'bytes', zero: "agent's" },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true, create: true },
      { name: 'total_resource_slots', label: 'Resources in use at once', kind: 'slots', hint: SLOTS_HINT },
      { name: 'max_concurrent_sessions', label: 'Sessions at once', kind: 'int', hint: '0 = no limit.' },
      { name: 'max_pending_session_count', label: 'Pending sessions', kind: 'int', nullable: true,
        hint: 'Empty = no limit.' },
      { name: 'max_pending_session_resource_slots', label: 'Resources of pending sessions', kind: 'slots',
        hint: SLOTS_HINT },
      { name: 'max_containers_per_session', label: 'Containers per session', kind: 'int' },
      { name: 'idle_timeout', label: 'Idle timeout', kind: 'int', hint: SECONDS_HINT },
      { name: 'max_session_lifetime', label: 'Session lifetime', kind: 'int', hint: SECONDS_HINT },
      { name: 'max_vfolder_count', label: 'Folders', kind: 'int', hint: '0 = no limit.' },
      { name: 'max_quota_scope_size', label: 'Folder quota', kind: 'size', hint: 'A size like 10g.' },
      { name: 'max_customized_image_count', label: 'Committed images', kind: 'int',
        hint: 'Images saved from sessions; 0 = no limit.' },
      { name: 'max_keypairs_per_user', label: 'Keypairs per user', kind: 'int',
        hint: 'The most keypairs a user of this policy holds, checked when one is made; 0 = no limit; default 10.' },
      { name: 'allow_user_keypairs', label: 'Users may make their own keypairs', kind: 'bool', default: true,
        hint: 'Off: only admins issue keypairs to users of this policy.' },
      { name: 'max_session_priority', label: 'Highest session priority', kind: 'int',
        hint: 'From 0 to 100: the most a user who is not an admin may give a session; sessions get 10 unless ' +
          'they ask, so below 10 users must ask for less; 0 = only priority 0; default 10.' },
      { name: 'max_container_disk', label: 'Container disk', kind: 'size',
        hint: 'A size like 20g (at least 8m): what each container of a session may write outside its folders, ' +
          'and what a session gets that asks for nothing; 0 = no limit: the agent\'s container_disk (16 GiB by ' +
          'default).' },
      hostPerms,
    ],
  },
  {
    id: 'domains',
    title: 'Domains',
    noun: 'domain',
    path: '/admin/domains',
    key: 'name',
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'description', label: 'Description', empty: '' },
      { name: 'is_active', label: 'Active', kind: 'toggle' },
      { name: 'total_resource_slots', label: 'Resources', kind: 'slots', empty: 'unlimited' },
      hostPermsColumn,
      { name: 'allowed_docker_registries', label: 'Registries', kind: 'list', empty: 'all' },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true, create: true },
      { name: 'description', label: 'Description', kind: 'text' },
      { ...active },
      { name: 'total_resource_slots', label: 'Resources in use at once', kind: 'slots', hint: SLOTS_HINT },
      { name: 'allowed_docker_registries', label: 'Registries its images may come from', kind: 'list',
        hint: 'host[:port] names, separated by commas; empty = all.' },
      hostPerms,
    ],
  },
  {
    id: 'projects',
    title: 'Projects',
    noun: 'project',
    path: '/admin/projects',
    key: 'id',
    label: (p) => p.name,
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'domain', label: 'Domain' },
      { name: 'description', label: 'Description', empty: '' },
      { name: 'is_active', label: 'Active', kind: 'toggle' },
      { name: 'total_resource_slots', label: 'Resources', kind: 'slots', empty: 'unlimited' },
      { name: 'members_count', label: 'Members' },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true },
      { name: 'domain', label: 'Domain', kind: 'text', create: true, hint: 'Default: yours.' },
      { name: 'description', label: 'Description', kind: 'text' },
      { ...active },
      { name: 'total_resource_slots', label: 'Resources in use at once', kind: 'slots', hint: SLOTS_HINT },
      { name: 'max_vfolder_count', label: 'Folders', kind: 'int', hint: '0 = no limit.' },
      { name: 'max_quota_scope_size', label: 'Folder quota', kind: 'size', hint: 'A size like 10g.' },
      hostPerms,
    ],
    filters: [{ param: 'domain', label: 'Domain' }],
    lists: {
      label: 'Members',
      readPath: '/members',
      changePath: '/members',
      sections: [{ id: 'members', label: 'Members', placeholder: 'email of a user of the domain' }],
      read: (a) => ({ members: (a.items ?? []).map((m) => m.email) }),
      body: (section, op, value) => ({ [op]: [value] }),
    },
  },
  {
    id: 'resource-groups',
    title: 'Resource groups',
    noun: 'resource group',
    path: '/admin/resource-groups',
    key: 'name',
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'scheduler', label: 'Scheduler' },
      { name: 'is_active', label: 'Active', kind: 'toggle' },
      { name: 'is_public', label: 'Public', kind: 'bool' },
      { name: 'domains', label: 'Domains', kind: 'list' },
      { name: 'projects', label: 'Projects', kind: 'list' },
      { name: 'keypairs', label: 'Keypairs', kind: 'list' },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true, create: true },
      { name: 'description', label: 'Description', kind: 'text' },
      { name: 'scheduler', label: 'Scheduler', kind: 'choice', choices: ['fifo', 'lifo', 'drf', 'fair-share'] },
      { ...active },
      { name: 'is_public', label: 'Public', kind: 'bool' },
      { name: 'wsproxy_addr', label: 'App proxy address', kind: 'text' },
      { name: 'scheduler_opts', label: 'Scheduler options', kind: 'json', shape: 'object',
        placeholder: '{"agent_selection": "dispersed"}', hint: SCHEDULER_OPTS_HINT },
    ],
    lists: {
      label: 'Access',
      readPath: '',
      changePath: '/access',
      sections: [
        { id: 'domains', label: 'Domains', placeholder: 'domain name' },
        { id: 'projects', label: 'Projects', placeholder: 'domain/project' },
        { id: 'keypairs', label: 'Keypairs', placeholder: 'access key' },
      ],
      read: (g) => ({ domains: g.domains ?? [], projects: g.projects ?? [], keypairs: g.keypairs ?? [] }),
      body: (section, op, value) => ({ [op]: { [section]: [value] } }),
    },
  },
  {
    id: 'presets',
    title: 'Resource presets',
    noun: 'resource preset',
    path: '/admin/presets',
    key: 'name',
    columns: [
      { name: 'name', label: 'Name' },
      { name: 'resource_slots', label: 'Resources', kind: 'slots' },
      { name: 'shared_memory', label: 'Shared memory', kind: 'bytes', empty: 'default' },
      { name: 'resource_group', label: 'Resource group', empty: 'all' },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true, create: true },
      { name: 'resource_slots', label: 'Resources', kind: 'slots', required: true,
        hint: 'One slot a row: cpu 2, mem 4g, cuda.shares 0.5; no "Infinity".' },
      { name: 'shared_memory', label: 'Shared memory', kind: 'size', nullable: true,
        hint: 'A size like 64m; empty = the default.' },
      { name: 'resource_group', label: 'Resource group', kind: 'choice', nullable: true, none: 'all',
        choicesFrom: { path: '/admin/resource-groups?limit=1000', value: (g) => g.name, label: (g) => g.name } },
    ],
  },
  {
    id: 'agents',
    title: 'Agents',
    noun: 'agent',
    path: '/admin/agents',
    key: 'id',
    create: false,
    removeVerb: 'Forget',
    columns: [
      { name: 'id', label: 'Agent', kind: 'mono' },
      { name: 'status', label: 'Status', kind: 'status', classes: { ALIVE: 'running', UNREACHABLE: 'waiting', LOST: 'failed' } },
      { name: 'resource_group', label: 'Resource group' },
      { name: 'schedulable', label: 'Schedulable', kind: 'toggle' },
      { name: 'occupied_slots', label: 'Occupied of available', kind: 'slot-bars', limit: 'available_slots' },
      { name: 'devices', label: 'GPUs', kind: 'devices' },
      { name: 'last_heartbeat', label: 'Last heartbeat', kind: 'time' },
    ],
    fields: [
      { name: 'resource_group', label: 'Resource group', kind: 'text' },
      { name: 'schedulable', label: 'Schedulable (new sessions may be placed here)', kind: 'bool' },
    ],
    filters: [
      { param: 'status', label: 'Status', choices: ['ALIVE', 'UNREACHABLE', 'LOST'] },
      { param: 'resource_group', label: 'Resource group' },
    ],
  },
  {
    id: 'images',
    title: 'Images',
    noun: 'image',
    path: '/admin/images',
    key: 'id',
    label: (i) => `${i.name}:${i.tag}`,
    columns: [
      { name: 'name', label: 'Name', kind: 'mono' },
      { name: 'tag', label: 'Tag' },
      { name: 'architecture', label: 'Architecture' },
      { name: 'hidden', label: 'Hidden', kind: 'toggle' },
      { name: 'min_resources', label: 'Minimum', kind: 'slots', empty: '—' },
      { name: 'max_resources', label: 'Maximum', kind: 'slots', empty: 'no limit' },
      { name: 'size_bytes', label: 'Size', kind: 'bytes', zero: 'unknown' },
      { name: 'labels', label: 'Labels', kind: 'labels' },
      { name: 'owner', label: 'Owner', empty: 'public' },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true, create: true,
        placeholder: 'registry.example.com/stable/python' },
      { name: 'tag', label: 'Tag', kind: 'text', required: true, create: true },
      { name: 'architecture', label: 'Architecture', kind: 'text', create: true, hint: 'Default: x86_64.' },
      { name: 'registry', label: 'Registry', kind: 'text' },
      { name: 'digest', label: 'Digest', kind: 'text' },
      { name: 'size_bytes', label: 'Size in bytes', kind: 'int', hint: 'What the image takes; 0 = not known (the first agent that pulls it tells).' },
      { name: 'hidden', label: 'Hidden (not offered to users)', kind: 'bool' },
      { name: 'min_resources', label: 'Minimum resources', kind: 'slots', hint: SLOTS_HINT },
      { name: 'max_resources', label: 'Maximum resources', kind: 'slots', hint: SLOTS_HINT },
      { name: 'labels', label: 'Labels', kind: 'labels' },
    ],
    filters: [
      { param: 'private', label: 'Owner', choices: ['true', 'false'], choiceLabels: ['private', 'public'] },
      { param: 'name', label: 'Name' },
    ],
  },
  {
    id: 'image-aliases',
    title: 'Image aliases',
    noun: 'image alias',
    path: '/admin/image-aliases',
    key: 'alias',
    update: false,
    columns: [
      { name: 'alias', label: 'Alias', kind: 'mono' },
      { name: 'image', label: 'Image', kind: 'mono' },
      { name: 'architecture', label: 'Architecture' },
      { name: 'created_at', label: 'Created', kind: 'time' },
    ],
    fields: [
      { name: 'alias', label: 'Alias', kind: 'text', required: true, create: true },
      { name: 'image_id', label: 'Image', kind: 'choice', required: true, create: true,
        choicesFrom: { path: '/admin/images?limit=1000', value: (i) => i.id,
                       label: (i) => `${i.name}:${i.tag} (${i.architecture})` } },
    ],
  },
  {
    id: 'registries',
    title: 'Container registries',
    noun: 'container registry',
    path: '/admin/container-registries',
    key: 'name',
    columns: [
      { name: 'name', label: 'Name', kind: 'mono' },
      { name: 'url', label: 'URL', kind: 'mono' },
      { name: 'project', label: 'Project', empty: 'all' },
      { name: 'has_password', label: 'Password', kind: 'bool' },
      { name: 'images', label: 'Images' },
      { name: 'last_scan_at', label: 'Last scan', kind: 'time' },
    ],
    fields: [
      { name: 'name', label: 'Name', kind: 'text', required: true, create: true, placeholder: 'registry.example.com:5000',
        hint: 'The host[:port] its image names start with.' },
      { name: 'url', label: 'URL', kind: 'text', required: true, placeholder: 'https://registry.example.com:5000' },
      { name: 'project', label: 'Project', kind: 'text', hint: 'Repository prefix a rescan is limited to; empty = all.' },
      { name: 'username', label: 'User name', kind: 'text' },
      { name: 'password', label: 'Password', kind: 'password', hint: 'Left empty on a change, it stays.' },
    ],
    task: {
      label: 'Rescan',
      path: '/rescan',
      describe: (r) =>
        `${r.images ?? 0} images in ${r.repositories ?? 0} repositories: ${r.added ?? 0} added, ` +
        `${r.updated ?? 0} updated, ${r.unchanged ?? 0} unchanged` +
        (r.error_count
          ? `; ${r.error_count} failed (${(r.errors ?? []).map((e) => `${e.repository}${e.tag ? `:${e.tag}` : ''}: ${e.error}`).join('; ')})`
          : '') +
        (r.missing?.length ? `; gone from the registry: ${r.missing.map((m) => m.image).join(', ')}` : '') +
        '.',
    },
  },
  {
    id: 'audit-log',
    title: 'Audit log',
    noun: 'audit log entry',
    path: '/admin/audit-log',
    key: 'id',
    label: (a) => `${a.action} at ${a.ts}`,
    create: false,
    update: false,
    remove: false,
    columns: [
      { name: 'ts', label: 'Time', kind: 'time' },
      { name: 'user_email', label: 'User', empty: 'unknown' },
      { name: 'action', label: 'Action', kind: 'mono' },
      { name: 'target', label: 'Target', kind: 'mono' },
      { name: 'status', label: 'Status', kind: 'status', classes: auditStatus },
      { name: 'path', label: 'Path', kind: 'mono' },
      { name: 'remote_addr', label: 'Address', kind: 'mono' },
    ],
    fields: [],
    filters: [
      { param: 'user', label: 'User (email)' },
      { param: 'action', label: 'Action', placeholder: 'POST /admin/users' },
      { param: 'since', label: 'Since', kind: 'datetime' },
      { param: 'until', label: 'Until', kind: 'datetime' },
    ],
  },
];

/* The entity of an id, or the first. */
export function entityOf(id) {
  return ENTITIES.find((e) => e.id === id) ?? ENTITIES[0];
}

/* How messages name a row: "alice@example.com", "python:3.11". */
export function rowLabel(entity, row) {
  return entity.label ? entity.label(row) : String(row[entity.key]);
}

/* The path of one row: "/admin/users/alice%40example.com". */
export function rowPath(entity, row) {
  return `${entity.path}/${encodeURIComponent(row[entity.key])}`;
}
