/* store-controller.js - a lit reactive controller that re-renders its host
 * whenever an EventTarget it reads from (auth, router, a store) dispatches
 * 'change', while the host is connected.  onChange, if given, runs first. */
export class StoreController {
  constructor(host, store, onChange = null) {
    this.host = host;
    this.store = store;
    this.onChange = onChange;
    host.addController(this);
  }

  hostConnected() {
    this.store.addEventListener('change', this.#changed);
  }

  hostDisconnected() {
    this.store.removeEventListener('change', this.#changed);
  }

  #changed = () => {
    this.onChange?.();
    this.host.requestUpdate();
  };
}
