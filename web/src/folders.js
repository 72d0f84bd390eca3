/* folders.js - the manager's virtual folders as calls through api.js
 * (routes: src/manager/vfolder/api_vfolder*.c, docs/design/vfolders.md and
 * docs/vfolder-transfers.md), and paths inside a folder.  No DOM. */
import { api, query } from './api.js';

const at = (name, tail = '') => `/folders/${encodeURIComponent(name)}${tail}`;

export const PERMISSIONS = [
  { value: 'ro', label: 'Read only' },
  { value: 'rw', label: 'Read and write' },
  { value: 'wd', label: 'Read, write and delete' },
];
/* 'rw' -> 'read and write' */
export function permissionLabel(perm) {
  return PERMISSIONS.find((p) => p.value === perm)?.label.toLowerCase() ?? perm;
}
export const USAGE_MODES = ['general', 'model', 'data'];
export const TRASH = 'delete-pending';

/* status: 'ready' (default) or TRASH. */
export const listFolders = (status = null) => api('GET', `/folders${query({ status })}`);
export const storageHosts = () => api('GET', '/folders/_/hosts');
/* body: {name, host, usage_mode, permission, group?} */
export const createFolder = (body) => api('POST', '/folders', body);
export const folderInfo = (name) => api('GET', at(name));
export const trashFolder = (name) => api('DELETE', at(name));
/* Trashed folders by id: two of them may have the same name. */
export const restoreFolder = (id) => api('POST', '/folders/restore-from-trash-bin', { vfolder_id: id });
export const purgeFolder = (id) => api('POST', '/folders/purge', { vfolder_id: id });

export async function listFiles(name, path) {
  return (await api('GET', at(name, `/files${query({ path })}`)))?.items ?? [];
}
export const makeDirectory = (name, path) => api('POST', at(name, '/mkdir'), { path });
export const renameFile = (name, path, newName) =>
  api('POST', at(name, '/rename-file'), { target_path: path, new_name: newName });
export const deleteFiles = (name, paths) => api('POST', at(name, '/delete-files'), { files: paths, recursive: true });

/* {token, url}: the tus endpoint (tus-upload.js) or the file, for ?token=. */
export const requestUpload = (name, path, size) => api('POST', at(name, '/request-upload'), { path, size });
export const requestDownload = (name, path) => api('POST', at(name, '/request-download'), { path });

/* The URL of such an answer on the page's own origin (`base`: its
 * location): the manager names itself by the Host it was asked at. */
export function transferUrl({ token, url }, base) {
  return `${new URL(url, base).pathname}?token=${encodeURIComponent(token)}`;
}

/* A user folder's owner invites users; a project folder's owner sets
 * members' permissions (share); unshare takes either away. */
export const inviteUsers = (name, emails, perm) => api('POST', at(name, '/invite'), { perm, emails });
export const shareFolder = (name, emails, permission) => api('POST', at(name, '/share'), { permission, emails });
export const unshareFolder = (name, emails) => api('POST', at(name, '/unshare'), { emails });
export const leaveFolder = (name) => api('POST', at(name, '/leave'));

export async function listInvitations() {
  return (await api('GET', '/folders/invitations/list'))?.invitations ?? [];
}
/* 'a@x.org, b@x.org c@x.org' -> ['a@x.org', 'b@x.org', 'c@x.org'] */
export function parseEmails(text) {
  return [...new Set(text.split(/[\s,;]+/).filter(Boolean))];
}
export const acceptInvitation = (id) => api('POST', '/folders/invitations/accept', { inv_id: id });
export const rejectInvitation = (id) => api('POST', '/folders/invitations/delete', { inv_id: id });

/* The manager's rule for folder names (vf_valid_name): 1 to 64 letters,
 * digits, '.', '_' or '-' from a letter or digit, after an optional dot
 * (a folder mounted in every session); a few names are taken. */
const RESERVED_NAMES = ['.ssh', '.jupyter', '.terminfo', '.tmux.conf', 'invitations', 'purge', 'restore-from-trash-bin', 'delete-from-trash-bin'];
export function validFolderName(name) {
  return /^\.?[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name) && !RESERVED_NAMES.includes(name);
}

/* ---- paths inside a folder: '' is its top, 'a/b' a file in a ---- */

export function joinPath(dir, name) {
  return dir ? `${dir}/${name}` : name;
}

export function parentPath(path) {
  return path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
}

/* 'a/b/c' -> [{name: 'a', path: 'a'}, {name: 'b', path: 'a/b'}, {name: 'c', path: 'a/b/c'}] */
export function pathSteps(path) {
  const names = path.split('/').filter(Boolean);
  return names.map((name, i) => ({ name, path: names.slice(0, i + 1).join('/') }));
}

/* The route argument of a folder's page, 'folder/dir/sub', and back. */
export function browseArg(folder, path = '') {
  return joinPath(folder, path);
}

export function parseBrowseArg(arg) {
  const [folder = '', ...rest] = (arg ?? '').split('/');
  return { folder, path: rest.filter(Boolean).join('/') };
}

/* Names the manager takes for files (docs/vfolder-transfers.md, Paths). */
export function validFileName(name) {
  return name.length > 0 && new TextEncoder().encode(name).length <= 255 && name !== '.' && name !== '..' && !/[/\x00-\x1f]/.test(name);
}
