/* resources.js - what the caller may use, from POST /resource/check-presets
 * (src/manager/scheduler/api_resource.c): limits, use and what remains for the
 * keypair, the project and the resource group, and the resource presets
 * with whether each fits now.  Slot values become numbers (slots.js). */
import { api, query } from './api.js';
import { minSlots, slotMap } from './slots.js';

/* The project a launcher starts with (GET /projects lists the others). */
export const DEFAULT_PROJECT = 'default';

/* loadResourceLimits({project, resourceGroup}) -> {
 *   keypair: {limit, used, remaining}, project: {limit, used, remaining},
 *   resourceGroup: {name, used, remaining, capacity} (name null: none),
 *   resourceGroups: [names], remaining: the least of the three,
 *   presets: [{name, slots, sharedMemory, allocatable}] }.  Throws ApiError. */
export async function loadResourceLimits({ project = DEFAULT_PROJECT, resourceGroup = null } = {}) {
  const body = { group: project };
  if (resourceGroup) body.scaling_group = resourceGroup;
  const [a, open] = await Promise.all([
    api('POST', '/resource/check-presets', body),
    api('GET', `/scaling-groups${query({ group: project })}`),
  ]);
  const [rgName, rg] = Object.entries(a.scaling_groups ?? {})[0] ?? [null, null];
  const rgUsed = slotMap(rg?.using), rgRemaining = slotMap(rg?.remaining ?? a.scaling_group_remaining);
  const capacity = {};
  for (const name of Object.keys(rgUsed)) capacity[name] = rgUsed[name] + rgRemaining[name];
  const keypair = {
    limit: slotMap(a.keypair_limits, Infinity),
    used: slotMap(a.keypair_using),
    remaining: slotMap(a.keypair_remaining, Infinity),
  };
  const projectScope = {
    limit: slotMap(a.group_limits, Infinity),
    used: slotMap(a.group_using),
    remaining: slotMap(a.group_remaining, Infinity),
  };
  return {
    keypair,
    project: projectScope,
    resourceGroup: { name: rgName, used: rgUsed, remaining: rgRemaining, capacity },
    resourceGroups: (open?.scaling_groups ?? []).map((g) => g.name),
    remaining: minSlots(keypair.remaining, projectScope.remaining, rgRemaining),
    presets: (a.presets ?? []).map((p) => ({
      name: p.name,
      slots: slotMap(p.resource_slots),
      sharedMemory: p.shared_memory,
      allocatable: p.allocatable !== false,
    })),
  };
}
