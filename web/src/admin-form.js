/* admin-form.js - the rules of the admin forms, apart from their markup:
 * a row of the manager's as form values, and form values back as the
 * body of a create (POST) or a change (PATCH) of docs/design/admin-api.md.
 * Pure functions of the entity's field list (admin-entities.js).
 *
 * Field kinds and their form values:
 *   text, email, password, size  a string ('' = not given)
 *   int                          a string of digits ('' = not given; null
 *                                when the field is `nullable`)
 *   bool                         true or false
 *   choice                       one of field.choices ('' = not given)
 *   list                         "a, b, c" (a list of strings)
 *   slots, labels                [[key, value], ...] rows (an object)
 *   host-perms                   [[host, [permission, ...]], ...] rows (an
 *                                object of host -> permissions: a folder
 *                                host's allowed_vfolder_hosts)
 *   json                         the JSON text of a value (an object, for
 *                                `shape: 'object'`: scheduler_opts),
 *                                checked before it is sent
 * On create every field is offered and what is left empty is not sent;
 * on a change, fields set only on create (`create: true`) are shown but
 * not sent, and only what differs from the row is sent (a PATCH without
 * fields is refused).  A password left empty on a change keeps the old
 * one; an emptied text is sent as '' (or null where `nullable`). */
import { parseSize, slotNumber } from './slots.js';

/* What a storage host allows, as the manager names it (vf_host_perm_names
 * in src/manager/vfolder/vfolder.c), in that order. */
export const HOST_PERMISSIONS = [
  'create-vfolder',
  'modify-vfolder',
  'delete-vfolder',
  'mount-in-session',
  'upload-file',
  'download-file',
  'invite-others',
  'set-user-specific-permission',
];

/* The fields a form shows: all on create; on a change, not those set once
 * that the manager never shows back (`create` and `writeOnly`: a
 * keypair's owner, a user's first resource policy). */
export function formFields(fields, creating) {
  return fields.filter((f) => creating || !(f.create && f.writeOnly));
}

function pairsOf(object) {
  return Object.entries(object ?? {}).map(([k, v]) => [k, String(v)]);
}

/* The form values of a row (null: an empty create form with the fields' defaults). */
export function formValues(fields, row) {
  const values = {};
  for (const f of fields) {
    const v = row ? row[f.name] : f.default;
    switch (f.kind) {
      case 'bool':
        values[f.name] = Boolean(v);
        break;
      case 'slots':
      case 'labels':
        values[f.name] = pairsOf(v);
        break;
      case 'host-perms':
        values[f.name] = Object.entries(v ?? {}).map(([host, perms]) => [host, [...(perms ?? [])]]);
        break;
      case 'json':
        values[f.name] = v === null || v === undefined ? '' : JSON.stringify(v, null, 2);
        break;
      case 'list':
        values[f.name] = (v ?? []).join(', ');
        break;
      case 'password':
        values[f.name] = '';
        break;
      default:
        values[f.name] = v === null || v === undefined ? '' : String(v);
    }
  }
  return values;
}

class FormError extends Error {}

/* A slot value in one unit for comparing: bytes for memory, else a number. */
function canonicalSlot(name, value) {
  if (value === 'Infinity' || value === Infinity) return 'Infinity';
  const n = name === 'mem' ? parseSize(value) : slotNumber(value);
  return Number.isNaN(n) ? String(value) : String(n);
}

function objectFrom(f, rows) {
  const out = {};
  for (const [rawKey, rawValue] of rows) {
    const key = rawKey.trim(), value = rawValue.trim();
    if (!key && !value) continue;
    if (!key) throw new FormError(`${f.label}: a row has a value but no name.`);
    if (!value) throw new FormError(`${f.label}: '${key}' has no value.`);
    if (key in out) throw new FormError(`${f.label}: '${key}' is there twice.`);
    out[key] = value;
  }
  return out;
}

function hostsFrom(f, rows) {
  const out = {};
  for (const [rawHost, perms] of rows) {
    const host = rawHost.trim();
    if (!host && !perms.length) continue;
    if (!host) throw new FormError(`${f.label}: a row has permissions but no host.`);
    if (host in out) throw new FormError(`${f.label}: '${host}' is there twice.`);
    out[host] = HOST_PERMISSIONS.filter((p) => perms.includes(p));
  }
  return out;
}

function jsonFrom(f, text, creating) {
  const t = text.trim();
  if (!t) return creating ? undefined : f.shape === 'object' ? {} : null;
  let value;
  try {
    value = JSON.parse(t);
  } catch (e) {
    throw new FormError(`${f.label} is not valid JSON: ${e.message}.`);
  }
  if (f.shape === 'object' && (value === null || typeof value !== 'object' || Array.isArray(value)))
    throw new FormError(`${f.label} must be a JSON object: {"name": value, ...}.`);
  return value;
}

/* A JSON value's text with the keys of its objects sorted. */
function canonicalJson(v) {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  return JSON.stringify(v ?? null);
}

/* The JSON value of one field's form value; undefined: not given. */
function jsonValue(f, v, creating) {
  switch (f.kind) {
    case 'bool':
      return v;
    case 'int': {
      const t = v.trim();
      if (!t) return f.nullable ? null : undefined;
      if (!/^[0-9]+$/.test(t)) throw new FormError(`${f.label} must be a whole number.`);
      return Number.parseInt(t, 10);
    }
    case 'list': {
      const items = v.split(',').map((s) => s.trim()).filter(Boolean);
      return items.length || !creating ? items : undefined;
    }
    case 'slots':
    case 'labels':
      return objectFrom(f, v);
    case 'host-perms':
      return hostsFrom(f, v);
    case 'json':
      return jsonFrom(f, v, creating);
    case 'password':
      return v || undefined;
    default: {
      const t = v.trim();
      if (t) return t;
      if (f.nullable) return null;
      return creating ? undefined : '';
    }
  }
}

/* Kinds whose empty object on create is "not given". */
const OBJECT_KINDS = ['slots', 'labels', 'host-perms'];

const sameObject = (a, b, eq) =>
  Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => k in b && eq(k, a[k], b[k]));

/* Does a JSON value say what the row's value says? */
function same(f, value, old) {
  switch (f.kind) {
    case 'slots':
      return sameObject(value, old ?? {}, (k, a, b) => canonicalSlot(k, a) === canonicalSlot(k, b));
    case 'labels':
      return sameObject(value, old ?? {}, (k, a, b) => a === b);
    case 'host-perms':
      return sameObject(value, old ?? {}, (k, a, b) => canonicalJson([...a].sort()) === canonicalJson([...b].sort()));
    case 'json':
      return canonicalJson(value) === canonicalJson(old ?? (f.shape === 'object' ? {} : null));
    case 'list':
      return JSON.stringify(value) === JSON.stringify(old ?? []);
    case 'int':
    case 'bool':
      return value === (old ?? null);
    default:
      return (value ?? '') === (old ?? '');
  }
}

/* The body of a create (row null) or of a change of `row`.  Throws an
 * Error with a sentence for people: a malformed value, a required field
 * left empty, or a change that changes nothing. */
export function formBody(fields, values, row = null) {
  const creating = !row, body = {};
  for (const f of formFields(fields, creating)) {
    if (!creating && f.create) continue;
    const value = jsonValue(f, values[f.name], creating);
    if (creating) {
      const empty = value === undefined || value === null ||
        (OBJECT_KINDS.includes(f.kind) && !Object.keys(value).length);
      if (empty && f.required) throw new FormError(`${f.label} is required.`);
      if (!empty) body[f.name] = value;
    } else if (f.kind === 'password') {
      if (value) body[f.name] = value;
    } else if (!same(f, value, row[f.name])) {
      if (value === undefined) throw new FormError(`${f.label} cannot be left empty.`);
      body[f.name] = value;
    }
  }
  if (!creating && !Object.keys(body).length) throw new FormError('Nothing was changed.');
  return body;
}
