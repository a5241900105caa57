// Connection state as the user should see it: the connect outcome, overridden by the live
// watcher while it reconnects ("Reconnecting in 4 s…"), with a ticking countdown.
import { useEffect, useState } from 'react';
import type { NodeConnState, NodeStatus } from '../../shared/domain/connection';
import type { ErrorCode, ErrorInfo } from '../../shared/domain/errors';
import type { LiveView } from '../store';

export const STATE_TEXT: Record<NodeConnState, string> = {
  unknown: 'Not connected',
  connecting: 'Connecting…',
  connected: 'Connected',
  error: 'Connection failed',
};

/** A few words for the sidebar and header: why a node is not connected. */
export function errorShortText(code: ErrorCode | undefined): string {
  switch (code) {
    case 'HOST_KEY_UNKNOWN':
      return 'Host key not trusted yet';
    case 'HOST_KEY_CHANGED':
      return 'Host key changed';
    case 'AUTH_FAILED':
      return 'Authentication failed';
    case 'UNREACHABLE':
      return 'Unreachable';
    case 'TIMEOUT':
      return 'Timed out';
    case 'CONTAINERD_UNAVAILABLE':
      return 'containerd unavailable';
    default:
      return 'Connection failed';
  }
}

/**
 * Why a node is not connected, as its node page says it (ConnectionPanel: the message the core
 * wrote, which names the real cause: "Cannot read the identity file … it does not exist" where the
 * code alone says "Authentication failed"), with what to do for a tooltip.
 */
export function errorCause(error: ErrorInfo): { text: string; title: string } {
  return { text: error.message, title: [error.message, error.hint, `Error code ${error.code}`].filter(Boolean).join('\n') };
}

export function statusText(status: NodeStatus): string {
  return status.state === 'error' ? errorShortText(status.error?.code) : STATE_TEXT[status.state];
}

export type DotState = NodeStatus['state'] | 'reconnecting';

export interface DisplayStatus {
  dot: DotState;
  text: string;
  /** Set while the live connection is down: when the next attempt is due. */
  retryAt?: number;
  attempt?: number;
}

export function displayStatus(status: NodeStatus, live: LiveView | undefined, now: number = Date.now()): DisplayStatus {
  if (live && status.state === 'connected') {
    if (live.state === 'reconnecting') {
      const secs = live.retryAt ? Math.max(0, Math.ceil((live.retryAt - now) / 1000)) : 0;
      return {
        dot: 'reconnecting',
        text: secs > 0 ? `Reconnecting in ${secs} s…` : 'Reconnecting…',
        ...(live.retryAt ? { retryAt: live.retryAt } : {}),
        ...(live.attempt ? { attempt: live.attempt } : {}),
      };
    }
    if (live.state === 'connecting' && live.attempt) return { dot: 'reconnecting', text: 'Reconnecting…', attempt: live.attempt };
  }
  return { dot: status.state, text: statusText(status) };
}

/** Re-render every `ms` while `active` (for countdowns). */
export function useNow(active: boolean, ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!active) return;
    setNow(Date.now());
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [active, ms]);
  return now;
}

export function useDisplayStatus(status: NodeStatus, live: LiveView | undefined): DisplayStatus {
  const ticking = !!live && (live.state === 'reconnecting' || live.state === 'connecting');
  const now = useNow(ticking);
  return displayStatus(status, live, now);
}
