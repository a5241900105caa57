import { describe, expect, it, vi } from 'vitest';
import { forwardEvents } from '../../../src/main/events';
import { EVENT_CHANNEL, type LiveEvent } from '../../../src/shared/contract';

function source() {
  const listeners = new Set<(e: LiveEvent) => void>();
  return {
    listeners,
    subscribe(cb: (e: LiveEvent) => void) {
      listeners.add(cb);
      return () => listeners.delete(cb);
    },
    emit(e: unknown) {
      for (const l of [...listeners]) l(e as LiveEvent);
    },
  };
}

function contents() {
  let destroyed = false;
  const onDestroyed: (() => void)[] = [];
  return {
    send: vi.fn(),
    isDestroyed: () => destroyed,
    once: (_ev: 'destroyed', l: () => void) => onDestroyed.push(l),
    destroy() {
      destroyed = true;
      for (const l of onDestroyed) l();
    },
  };
}

describe('forwardEvents', () => {
  it('sends every well-formed event on the one fixed channel', () => {
    const src = source();
    const wc = contents();
    forwardEvents(src, wc);
    const e: LiveEvent = { type: 'node.changed', payload: { node: 'edge-01', topic: '/images/create', name: 'a:1' } };
    src.emit(e);
    src.emit({ type: 'bogus', payload: {} });
    expect(wc.send).toHaveBeenCalledTimes(1);
    expect(wc.send).toHaveBeenCalledWith(EVENT_CHANNEL, e);
  });

  it('unsubscribes when the window goes away, so watchers can stop', () => {
    const src = source();
    const wc = contents();
    forwardEvents(src, wc);
    expect(src.listeners.size).toBe(1);
    wc.destroy();
    expect(src.listeners.size).toBe(0);
  });

  it('the returned stop unsubscribes too', () => {
    const src = source();
    const stop = forwardEvents(src, contents());
    stop();
    stop();
    expect(src.listeners.size).toBe(0);
  });
});
