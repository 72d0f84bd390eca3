/* session-status.js - what the UI knows about session statuses: which are
 * still alive, the events the manager sends on each change, and the
 * sentence that says why a session is where it is. */

export const TERMINAL_STATUSES = ['TERMINATED', 'CANCELLED', 'ERROR'];

/* The statuses of a session that is still alive (src/manager/sessions/session.c). */
export const ACTIVE_STATUSES = ['PENDING', 'SCHEDULED', 'PREPARING', 'PULLING', 'CREATING', 'RUNNING', 'TERMINATING'];

/* The event names of GET /events/session (src/manager/sessions/session.c). */
export const SESSION_EVENTS = [
  'session_enqueued',
  'session_waiting', // Tessera's: the reason a PENDING session waits changed
  'session_scheduled',
  'session_preparing',
  'session_pulling',
  'session_creating',
  'session_started',
  'session_terminating',
  'session_terminated',
  'session_cancelled',
  'session_failure',
  'session_agent_unreachable', // Tessera's: its agent stopped answering; the session waits for it
  'session_agent_reachable', // Tessera's: the agent answers again
];

export function isTerminal(status) {
  return TERMINAL_STATUSES.includes(status);
}

/* A CSS modifier for a status: waiting, starting, running, ending, ended, failed. */
export function statusKind(status) {
  switch (status) {
    case 'PENDING':
      return 'waiting';
    case 'SCHEDULED':
    case 'PREPARING':
    case 'PULLING':
    case 'CREATING':
      return 'starting';
    case 'RUNNING':
      return 'running';
    case 'TERMINATING':
      return 'ending';
    case 'ERROR':
      return 'failed';
    default:
      return 'ended';
  }
}

/* Why a session is in its status, for people, or '' when there is nothing
 * to say: a live session's unreachable agent (statusData.agentUnreachable),
 * a PENDING session's scheduler message (statusData.scheduler.msg, else
 * statusInfo), a finished one's reason and batch result. */
export function statusReason(session) {
  const { status, statusInfo, statusData, result } = session;
  const lost = statusData?.agentUnreachable;
  if (lost && !isTerminal(status)) {
    const since = String(lost.since ?? '').replace('T', ' ').replace(/\.\d+/, '');
    return `agent ${lost.agent} unreachable since ${since}; the session waits for it`;
  }
  if (status === 'PENDING') return statusData?.scheduler?.msg || statusInfo || 'waiting for the scheduler';
  if (isTerminal(status)) {
    const parts = [];
    if (result && result !== 'UNDEFINED') parts.push(result.toLowerCase());
    if (statusInfo) parts.push(statusInfo);
    return parts.join(', ');
  }
  return status === 'RUNNING' ? '' : statusInfo || '';
}
