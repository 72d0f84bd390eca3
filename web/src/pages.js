/* pages.js - the pages of the app shell, in navigation order.  A page is
 * one custom element in its own module, loaded the first time it is shown
 * (esbuild makes each its own chunk, so a heavy page such as a terminal
 * with xterm.js costs nothing until it is opened).
 *
 * To add a page: write src/<id>-page.js defining <<id>-page>, then add a
 * row here; `roles` (if set) limits it to those roles; `nav: false` keeps
 * it out of the navigation (a page opened from another, such as the
 * terminal of a session: '#/terminal/<name>'). */
export const PAGES = [
  { id: 'summary', title: 'Summary', tag: 'summary-page', load: () => import('./summary-page.js') },
  { id: 'sessions', title: 'Sessions', tag: 'sessions-page', load: () => import('./sessions-page.js') },
  { id: 'launch', title: 'Launch', tag: 'launcher-page', load: () => import('./launcher-page.js') },
  { id: 'storage', title: 'Storage', tag: 'storage-page', load: () => import('./storage-page.js') },
  { id: 'terminal', title: 'Terminal', tag: 'terminal-page', nav: false, load: () => import('./terminal-page.js') },
  { id: 'statistics', title: 'Statistics', tag: 'statistics-page', load: () => import('./statistics-page.js') },
  { id: 'admin', title: 'Admin', tag: 'admin-page', roles: ['admin', 'superadmin'], load: () => import('./admin-page.js') },
];

export const DEFAULT_PAGE = 'summary';

/* The pages `user` may open. */
export function pagesFor(user) {
  return PAGES.filter((p) => !p.roles || p.roles.includes(user?.role));
}
