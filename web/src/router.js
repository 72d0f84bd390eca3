/* router.js - client-side routes in the URL's hash, so that the manager
 * serves only / and /ui/*: '#/sessions', '#/launch', '#/<page>/<arg>'.
 * router.route is {page, arg}; 'change' follows every hash change. */
class Router extends EventTarget {
  constructor() {
    super();
    window.addEventListener('hashchange', () => this.dispatchEvent(new Event('change')));
  }

  get route() {
    const [page = '', ...rest] = window.location.hash.replace(/^#\/?/, '').split('/');
    return { page: decodeURIComponent(page), arg: rest.length ? decodeURIComponent(rest.join('/')) : null };
  }

  go(page, arg = null) {
    window.location.hash = href(page, arg);
  }
}

/* The link of a page: href('sessions') is '#/sessions'. */
export function href(page, arg = null) {
  return `#/${encodeURIComponent(page)}${arg === null ? '' : `/${encodeURIComponent(arg)}`}`;
}

export const router = new Router();
