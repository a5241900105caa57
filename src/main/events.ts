// Main → renderer live events: every LiveEvent goes out on the ONE fixed channel EVENT_CHANNEL
// (the preload validates and hands it to `onEvent` listeners). No electron runtime import:
// tests pass fakes. The subscription lives as long as the window, so the node watchers stop
// when the last window closes.
import { EVENT_CHANNEL, isLiveEvent, type LiveEvent } from '../shared/contract';

export interface EventSourceLike {
  subscribe(cb: (e: LiveEvent) => void): () => void;
}

/** The subset of WebContents used to push events. */
export interface EventTargetLike {
  send(channel: string, ...args: unknown[]): void;
  isDestroyed(): boolean;
  once(event: 'destroyed', listener: () => void): unknown;
}

/** Forward live events to one window's web contents until it is destroyed; returns the stop function. */
export function forwardEvents(source: EventSourceLike, target: EventTargetLike): () => void {
  let stopped = false;
  const unsubscribe = source.subscribe((e) => {
    if (stopped) return;
    if (target.isDestroyed()) {
      stop();
      return;
    }
    if (isLiveEvent(e)) target.send(EVENT_CHANNEL, e);
  });
  const stop = () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
  };
  target.once('destroyed', stop);
  return stop;
}
