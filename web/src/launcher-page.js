/* launcher-page.js - <launcher-page>: launch one or several sessions.
 *
 * Reads GET /images (environment and version pickers), GET /folders
 * (folders to mount) and check-presets (what remains: the sliders' upper
 * bounds; the image's ai.backend.resource.min.* labels are the lower ones;
 * presets; the resource group).  A GPU slider appears when the resource
 * group has GPUs: fGPU in steps of the quantum, or whole GPUs.  Interactive
 * or batch (a command and an optional start time), and a count.  What
 * cannot fit is said before launching (launch.js); what the manager
 * refuses is said after, per session.  Sessions are enqueued
 * (enqueueOnly), and a launch that went through opens the session list,
 * where they start live. */
import { html, nothing } from 'lit';
import { api } from './api.js';
import { TesseraElement } from './element.js';
import { formatSlot } from './format.js';
import { MAX_COUNT, fitProblems, generatedName, launchBodies, sessionNames, slotBounds, validName } from './launch.js';
import { errorNotice, loadNotice } from './notices.js';
import { DEFAULT_PROJECT, loadResourceLimits } from './resources.js';
import { router } from './router.js';
import { sessionStore } from './session-store.js';
import { FGPU_QUANTUM, ceilTo, floorTo, imageMinimums } from './slots.js';
import './folder-picker.js';
import './image-picker.js';
import './slot-slider.js';

const GIB = 2 ** 30;

/* How each slider shows its slot: in which unit, moving in which step;
 * a required slot asks for one step at least. */
const SLIDERS = {
  cpu: { label: 'CPU', unit: 'cores', scale: 1, step: 0.1, preferred: 1, required: true },
  mem: { label: 'Memory', unit: 'GiB', scale: GIB, step: 0.125, preferred: GIB, required: true },
  'cuda.shares': { label: 'GPU', unit: 'fGPU', scale: 1, step: FGPU_QUANTUM, preferred: 0, required: false },
  'cuda.device': { label: 'GPU', unit: 'GPUs', scale: 1, step: 1, preferred: 0, required: false },
};

class LauncherPage extends TesseraElement {
  static properties = {
    images: { state: true },
    folders: { state: true },
    limits: { state: true },
    loadError: { state: true },
    image: { state: true },
    request: { state: true },
    preset: { state: true },
    resourceGroup: { state: true },
    projects: { state: true },
    project: { state: true },
    mounts: { state: true },
    type: { state: true },
    count: { state: true },
    busy: { state: true },
    failures: { state: true },
    formError: { state: true },
  };

  constructor() {
    super();
    this.images = this.folders = this.limits = null;
    this.loadError = this.formError = null;
    this.image = { name: '', version: null };
    this.request = { cpu: 0, mem: 0, 'cuda.shares': 0, 'cuda.device': 0 };
    this.preset = '';
    this.resourceGroup = null;
    this.projects = [];
    this.project = DEFAULT_PROJECT;
    this.mounts = new Set();
    this.type = 'interactive';
    this.count = 1;
    this.busy = false;
    this.failures = [];
  }

  connectedCallback() {
    super.connectedCallback();
    this.#load();
  }

  async #load() {
    try {
      const [images, folders, projects] = await Promise.all([
        api('GET', '/images'),
        api('GET', '/folders'),
        api('GET', '/projects'),
      ]);
      this.projects = (projects?.projects ?? []).map((p) => p.name);
      if (!this.projects.includes(this.project) && this.projects.length) this.project = this.projects[0];
      const limits = await loadResourceLimits({ project: this.project, resourceGroup: this.resourceGroup });
      this.images = images?.images ?? [];
      this.folders = Array.isArray(folders) ? folders : [];
      this.#setLimits(limits);
      const first = this.images[0];
      if (first) this.#chooseImage(first.name, first.versions[0]);
      this.loadError = null;
    } catch (e) {
      this.loadError = e.message;
    }
  }

  async #changeResourceGroup(name) {
    this.resourceGroup = name;
    try {
      this.#setLimits(await loadResourceLimits({ project: this.project, resourceGroup: name }));
    } catch (e) {
      this.formError = e.message;
    }
  }

  /* Another project: its resource groups and limits. */
  async #changeProject(name) {
    this.project = name;
    this.resourceGroup = null;
    try {
      this.#setLimits(await loadResourceLimits({ project: name }));
    } catch (e) {
      this.formError = e.message;
    }
  }

  #setLimits(limits) {
    this.limits = limits;
    this.resourceGroup = limits.resourceGroup.name;
    this.#fitRequest();
  }

  /* The GPU slot the resource group offers: fractions, whole GPUs or none. */
  get #gpuSlot() {
    const capacity = this.limits?.resourceGroup.capacity ?? {};
    if (capacity['cuda.shares'] > 0) return 'cuda.shares';
    if (capacity['cuda.device'] > 0) return 'cuda.device';
    return null;
  }

  get #shownSlots() {
    return ['cpu', 'mem', this.#gpuSlot].filter(Boolean);
  }

  /* The bounds of each shown slot, in the slot's own unit (bytes for
   * memory) and on the slider's steps: {cpu: {min, max}, ...}. */
  get #bounds() {
    const raw = slotBounds(imageMinimums(this.image.version?.labels), this.limits?.remaining ?? {});
    const bounds = {};
    for (const name of this.#shownSlots) {
      const { scale, step, required } = SLIDERS[name];
      const min = Math.max(ceilTo(raw[name].min / scale, step), required ? step : 0);
      bounds[name] = { min: min * scale, max: floorTo(raw[name].max / scale, step) * scale };
    }
    return bounds;
  }

  /* Keep the request inside the bounds (a new image or new limits). */
  #fitRequest() {
    const bounds = this.#bounds;
    const request = {};
    for (const name of Object.keys(SLIDERS)) {
      if (!bounds[name]) {
        request[name] = 0;
        continue;
      }
      const { min, max } = bounds[name];
      request[name] = Math.max(min, Math.min(max, this.request[name] || SLIDERS[name].preferred));
    }
    this.request = request;
  }

  #chooseImage(name, version) {
    this.image = { name, version };
    this.#fitRequest();
  }

  #setSlot(name, value) {
    this.request = { ...this.request, [name]: value * SLIDERS[name].scale };
    this.preset = '';
  }

  #choosePreset(name) {
    this.preset = name;
    const preset = this.limits.presets.find((p) => p.name === name);
    if (!preset) return;
    const request = { ...this.request };
    for (const slot of this.#shownSlots) request[slot] = preset.slots[slot] ?? 0;
    this.request = request;
  }

  #problems() {
    return this.limits ? fitProblems(this.request, this.count, this.#bounds, this.limits.remaining) : [];
  }

  async #submit(e) {
    e.preventDefault();
    const form = e.currentTarget;
    this.formError = null;
    this.failures = [];
    if (!this.image.version) return (this.formError = 'Choose an image first.');
    const base = form.sessionName.value.trim() || generatedName(this.image.name);
    const names = sessionNames(base, this.count);
    if (!names.every(validName))
      return (this.formError =
        "A session name has 4 to 64 letters, digits, '_', '-' or '.', and starts and ends with a letter, digit or '_'.");
    const startsAt = this.type === 'batch' && form.startsAt.value ? new Date(form.startsAt.value) : null;
    if (startsAt && startsAt.getTime() < Date.now()) return (this.formError = 'The start time has passed.');
    const bodies = launchBodies({
      names,
      image: `${this.image.name}:${this.image.version.tag}`,
      type: this.type,
      command: this.type === 'batch' ? form.command.value : null,
      startsAt,
      project: this.project,
      resourceGroup: this.resourceGroup,
      request: this.request,
      mounts: [...this.mounts],
    });
    this.busy = true;
    const failures = [];
    for (const body of bodies) {
      try {
        await sessionStore.create(body);
      } catch (err) {
        failures.push({ name: body.name, message: err.message });
        if (err.status !== 409) break; /* the next ones would fail the same way */
      }
    }
    this.busy = false;
    if (!failures.length) return router.go('sessions');
    this.failures = failures;
  }

  #resourcesSection() {
    const l = this.limits, bounds = this.#bounds;
    return html`<section class="card" aria-labelledby="launch-resources">
      <h2 id="launch-resources">Resources</h2>
      <div class="field-row">
        <div class="field">
          <label for="launch-preset">Preset</label>
          <select id="launch-preset" @change=${(e) => this.#choosePreset(e.target.value)}>
            <option value="" ?selected=${!this.preset}>Custom</option>
            ${l.presets.map(
              (p) => html`<option value=${p.name} ?selected=${p.name === this.preset} ?disabled=${!p.allocatable}>
                ${p.name}${p.allocatable ? '' : ' (does not fit now)'}
              </option>`,
            )}
          </select>
        </div>
        <div class="field">
          <label for="launch-project">Project</label>
          <select id="launch-project" @change=${(e) => this.#changeProject(e.target.value)}>
            ${this.projects.map((p) => html`<option value=${p} ?selected=${p === this.project}>${p}</option>`)}
          </select>
        </div>
        <div class="field">
          <label for="launch-rg">Resource group</label>
          <select id="launch-rg" @change=${(e) => this.#changeResourceGroup(e.target.value)}>
            ${l.resourceGroups.length
              ? l.resourceGroups.map((g) => html`<option value=${g} ?selected=${g === this.resourceGroup}>${g}</option>`)
              : html`<option value="">none open to you</option>`}
          </select>
        </div>
      </div>
      ${this.#shownSlots.map((name) => {
        const s = SLIDERS[name], { min, max } = bounds[name];
        return html`<slot-slider
          label=${s.label}
          unit=${s.unit}
          .min=${min / s.scale}
          .max=${max / s.scale}
          .step=${s.step}
          .value=${this.request[name] / s.scale}
          hint=${max < min || max <= 0
            ? `None remains for you (the image needs at least ${formatSlot(name, min)}).`
            : `${formatSlot(name, min)} to ${formatSlot(name, max)}`}
          @slot-change=${(e) => this.#setSlot(name, e.detail.value)}
        ></slot-slider>`;
      })}
      ${this.#gpuSlot ? '' : html`<p class="muted small">This resource group has no GPUs.</p>`}
    </section>`;
  }

  #sessionSection() {
    return html`<section class="card" aria-labelledby="launch-session">
      <h2 id="launch-session">Session</h2>
      <fieldset class="radios">
        <legend>Type</legend>
        ${['interactive', 'batch'].map(
          (t) => html`<label>
            <input type="radio" name="type" value=${t} .checked=${this.type === t} @change=${() => (this.type = t)} />
            ${t === 'interactive' ? 'Interactive: runs until you delete it' : 'Batch: runs a command, then ends'}
          </label>`,
        )}
      </fieldset>
      ${this.type === 'batch'
        ? html`<div class="field">
              <label for="launch-command">Command</label>
              <textarea id="launch-command" name="command" rows="3" required placeholder="python train.py"></textarea>
            </div>
            <div class="field">
              <label for="launch-starts-at">Start at <span class="muted">(optional)</span></label>
              <input id="launch-starts-at" name="startsAt" type="datetime-local" />
            </div>`
        : nothing}
      <div class="field-row">
        <div class="field">
          <label for="launch-name">Name <span class="muted">(optional)</span></label>
          <input
            id="launch-name"
            name="sessionName"
            autocomplete="off"
            placeholder="generated when empty"
          />
        </div>
        <div class="field">
          <label for="launch-count">Sessions</label>
          <input
            id="launch-count"
            name="count"
            type="number"
            min="1"
            max=${MAX_COUNT}
            .value=${String(this.count)}
            @change=${(e) => (this.count = Math.max(1, Math.min(MAX_COUNT, Number.parseInt(e.target.value, 10) || 1)))}
          />
        </div>
      </div>
    </section>`;
  }

  render() {
    const notice = loadNotice(this.loadError, this.limits, 'images, folders and limits');
    if (notice) return html`<h1>Launch a session</h1>${notice}`;
    const problems = this.#problems();
    const blocked = problems.some((p) => p.blocking) || !this.image.version;
    return html`<h1>Launch a session</h1>
      <form class="launcher" @submit=${this.#submit}>
        <section class="card" aria-labelledby="launch-environment">
          <h2 id="launch-environment">Environment</h2>
          ${this.images.length
            ? html`<image-picker
                .images=${this.images}
                .name=${this.image.name}
                .versionId=${this.image.version?.id ?? ''}
                @image-change=${(e) => this.#chooseImage(e.detail.name, e.detail.version)}
              ></image-picker>`
            : errorNotice('No image is available to you: ask an administrator.')}
        </section>
        ${this.#resourcesSection()}
        <section class="card">
          <folder-picker
            .folders=${this.folders}
            .selected=${this.mounts}
            @mounts-change=${(e) => (this.mounts = e.detail.selected)}
          ></folder-picker>
        </section>
        ${this.#sessionSection()}
        <div class="launch-bar">
          <ul class="problems" aria-live="polite">
            ${problems.map((p) => html`<li class=${p.blocking ? 'error' : 'warning'}>${p.text}</li>`)}
          </ul>
          ${errorNotice(this.formError)}
          ${this.failures.length
            ? html`<div class="error" role="alert">
                <p>The manager refused to launch:</p>
                <ul>
                  ${this.failures.map((f) => html`<li><strong>${f.name}</strong>: ${f.message}</li>`)}
                </ul>
              </div>`
            : ''}
          <button class="primary" type="submit" ?disabled=${blocked || this.busy}>
            ${this.busy ? 'Launching…' : this.count > 1 ? `Launch ${this.count} sessions` : 'Launch'}
          </button>
        </div>
      </form>`;
  }
}

customElements.define('launcher-page', LauncherPage);
