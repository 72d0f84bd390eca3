/* apps.js - the apps a session's image serves (Jupyter...), opened through
 * the manager's app proxy (docs/app-proxy.md).
 *
 * parseServicePorts(label) reads an `ai.backend.service-ports` label
 * ("jupyter:http:8888,tb:http:6006") into [{name, protocol, ports}];
 * webApps(labels) keeps the apps a browser can open (http, preopen).
 * loadImageApps() maps "name:tag" of every image the caller may use (GET
 * /images) to its web apps.  openApp(session, app) starts the app
 * (POST /session/{name}/start-service) and sends a new tab to the link it
 * answers: the tab is opened before the request, in the click, so that
 * the browser does not block it as a popup.  An admin opens an app of
 * another owner's session with that owner's access key (owner_access_key,
 * as Backend.AI's clients send it). */
import { api } from './api.js';

const SERVICE_PORTS = 'ai.backend.service-ports';
const WEB_PROTOCOLS = ['http', 'preopen'];

/* The label's items: commas outside brackets split them. */
function items(label) {
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i <= label.length; i++) {
    const c = label[i];
    if (c === '[') depth++;
    else if (c === ']') depth--;
    else if ((c === ',' && depth === 0) || i === label.length) {
      out.push(label.slice(start, i).trim());
      start = i + 1;
    }
  }
  return out.filter(Boolean);
}

/* As the manager reads it (src/common/service_ports.h): NAME:PROTOCOL:PORT
 * or NAME:PROTOCOL:[PORT,...], ports 1025-65535; a broken item is left out. */
export function parseServicePorts(label) {
  const apps = [];
  for (const item of items(label ?? '')) {
    const [name, protocol, ports, ...rest] = item.split(':');
    if (!name || !protocol || !ports || rest.length) continue;
    const numbers = ports.replace(/^\[|\]$/g, '').split(',').map((p) => Number(p.trim()));
    if (numbers.every((n) => Number.isInteger(n) && n > 1024 && n < 65536)) apps.push({ name, protocol, ports: numbers });
  }
  return apps;
}

export function webApps(labels) {
  return parseServicePorts(labels?.[SERVICE_PORTS]).filter((a) => WEB_PROTOCOLS.includes(a.protocol));
}

export async function loadImageApps() {
  const answer = await api('GET', '/images');
  const apps = new Map();
  for (const image of answer?.images ?? [])
    for (const v of image.versions ?? []) apps.set(`${image.name}:${v.tag}`, webApps(v.labels));
  return apps;
}

export async function openApp(session, app, owner = null) {
  const tab = window.open('', '_blank');
  try {
    const body = owner ? { app, owner_access_key: owner } : { app };
    const answer = await api('POST', `/session/${encodeURIComponent(session)}/start-service`, body);
    if (!tab) return window.location.assign(answer.url);
    tab.opener = null;
    tab.location.href = answer.url;
  } catch (err) {
    tab?.close();
    throw err;
  }
}
