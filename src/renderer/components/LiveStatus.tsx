// Connection state as the user should see it: the connect outcome, overridden by the live
// watcher while it reconnects ("Reconnecting in 4 s…"), with a ticking countdown.
import { useEffect, useState } from 'react';
import type { NodeStatus } from '../../shared/domain';
import type { LiveView } from '../store';
import { statusText } from './Sidebar';

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
