/* terminal-route.js - the terminal page's argument, #/terminal/<arg>: the
 * session's name, or for an admin in a session of another owner
 * "<name>/<owner's access key>" (a session name has no '/').  Its own
 * module, so that the session lists that link the terminal load none of
 * the terminal's code (no DOM: tested by node --test). */

export function terminalArg(session, owner = null) {
  return owner ? `${session}/${owner}` : session;
}

/* The argument read back: {session, owner}, owner null for the caller's own. */
export function parseTerminalArg(arg) {
  const [session = '', owner = ''] = (arg ?? '').split('/');
  return { session, owner: owner || null };
}
