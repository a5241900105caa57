import { describe, expect, it } from 'vitest';
import { fleetPinVerdict } from '../../../../src/renderer/model/fleetPins';

describe('fleet banner verdict', () => {
  const loaded = (atRisk: number) => ({ connection: 'connected', images: { state: 'ready', loadedAt: 1 }, atRisk });
  it('never claims an all-clear while a connected node\'s images are not in', () => {
    expect(fleetPinVerdict([loaded(0), { connection: 'connected', images: { state: 'loading' }, atRisk: 0 }])).toEqual({ kind: 'loading', nodes: 1 });
    expect(fleetPinVerdict([loaded(0), { connection: 'connected', images: { state: 'error' }, atRisk: 0 }])).toEqual({ kind: 'unknown', nodes: 1 });
    expect(fleetPinVerdict([loaded(0), { connection: 'error', images: { state: 'idle' }, atRisk: 0 }])).toEqual({ kind: 'all-clear' });
    expect(fleetPinVerdict([{ connection: 'connecting', images: { state: 'idle' }, atRisk: 0 }])).toEqual({ kind: 'nothing' });
  });

  it('reports images at risk as soon as one node has them, and how many nodes are still loading', () => {
    expect(fleetPinVerdict([loaded(2), loaded(1), { connection: 'connected', images: { state: 'loading' }, atRisk: 0 }])).toEqual({ kind: 'at-risk', images: 3, nodes: 2, pending: 1 });
  });
});
