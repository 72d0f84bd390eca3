/* launch.js - the launcher's rules, apart from its markup: session names,
 * the bounds of each resource, what cannot fit and the POST /session
 * bodies of a launch.  Pure functions of the form's state. */
import { formatSlot } from './format.js';
import { SLOT_NAMES, toRequestSlots } from './slots.js';

export const MAX_COUNT = 20;

/* The manager's rule (api_valid_session_name): 4-64 of letters, digits,
 * '_', '-', '.', starting and ending with a letter, digit or '_'. */
const NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{2,62}[A-Za-z0-9_]$/;

export function validName(name) {
  return NAME_RE.test(name);
}

/* A fresh name from the image's last path part: "busybox-k3x9". */
export function generatedName(imageName, random = Math.random) {
  const base = (imageName.split('/').pop() || 'session').replace(/[^A-Za-z0-9_-]/g, '').slice(0, 40) || 'session';
  const suffix = Array.from({ length: 4 }, () => 'abcdefghijkmnpqrstuvwxyz23456789'[Math.floor(random() * 32)]).join('');
  return `${base}-${suffix}`;
}

/* The names of `count` sessions: the name itself, or name-1 ... name-N. */
export function sessionNames(name, count) {
  return count <= 1 ? [name] : Array.from({ length: count }, (_, i) => `${name}-${i + 1}`);
}

/* The range of each slot: at least what the image needs, at most what
 * remains; {cpu: {min, max}, ...}. */
export function slotBounds(minimums, remaining) {
  const bounds = {};
  for (const name of SLOT_NAMES) bounds[name] = { min: minimums[name] ?? 0, max: remaining[name] ?? 0 };
  return bounds;
}

/* Sentences for what cannot be launched as asked, over the slots `bounds`
 * names (all values in the slots' own units): a slot the image needs more
 * of than remains, a request over its bound, a count whose sum exceeds
 * what remains.  blocking: launching is refused; else some sessions would
 * only wait in the queue. */
export function fitProblems(request, count, bounds, remaining) {
  const problems = [];
  for (const [name, { min, max }] of Object.entries(bounds)) {
    if (min > 0 && max < min)
      problems.push({
        blocking: true,
        text: `The image needs at least ${formatSlot(name, min)}, but only ${formatSlot(name, max)} remain for you.`,
      });
    else if (request[name] > max)
      problems.push({
        blocking: true,
        text: `${formatSlot(name, request[name])} is more than the ${formatSlot(name, max)} that remain.`,
      });
    else if (count > 1 && request[name] * count > remaining[name])
      problems.push({
        blocking: false,
        text:
          `${count} sessions need ${formatSlot(name, request[name] * count)} but ${formatSlot(name, remaining[name])} ` +
          'remain: some will wait in the queue until others end.',
      });
  }
  return problems;
}

/* The POST /session bodies of a launch.  form: {names, image, type,
 * command, startsAt (a Date or null), project, resourceGroup, request
 * (slot map), mounts (array)}. */
export function launchBodies(form) {
  return form.names.map((name) => {
    const body = {
      name,
      image: form.image,
      type: form.type,
      group: form.project,
      enqueueOnly: true,
      config: { resources: toRequestSlots(form.request), mounts: form.mounts },
    };
    if (form.resourceGroup) body.config.scaling_group = form.resourceGroup;
    if (form.type === 'batch') {
      body.startupCommand = form.command;
      if (form.startsAt) body.starts_at = form.startsAt.toISOString();
    }
    return body;
  });
}
