// applyPinPlan's rule for an update whose answer never came: it may be in containerd, so it is
// reported as sent (the audit log then knows every durable pin that may exist). The real case —
// containerd stopped right after it wrote the labels — is hit at random by the chaos suite
// (test/integration/chaos.test.ts); this pins the rule down for each kind of failure.
import { describe, expect, it } from 'vitest';
import type { ContainerdClient, ContainerdImage } from '../../../../../src/core/containerd/client';
import { HoldfastError } from '../../../../../src/core/errors';
import { applyPinPlan } from '../../../../../src/core/usecases/pin/apply';
import type { LabelChange, PinPlan } from '../../../../../src/shared/domain/pins';

const K3S = { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' };
const DURABLE = { 'io.cri-containerd.pinned': 'pinned' };
const change = (ref: string): LabelChange => ({ ref, imageId: 'sha256:aa', before: K3S, after: DURABLE });
const plan = (...refs: string[]): PinPlan => ({ node: 'n1', action: 'pin', changes: refs.map(change), unchanged: [] });

/** The two calls applyPinPlan makes; the second reference's update fails with `failure`. */
function containerdFailingOn(ref: string, failure: Error): Pick<ContainerdClient, 'getImage' | 'updateImageLabels'> {
  const labels = new Map<string, Record<string, string>>();
  const record = (name: string): ContainerdImage => ({ name, labels: labels.get(name) ?? K3S, target: { mediaType: '', digest: '', size: 0, annotations: {} }, createdAt: null, updatedAt: null });
  return {
    async updateImageLabels(name: string) {
      if (name === ref) throw failure;
      labels.set(name, DURABLE);
      return record(name);
    },
    async getImage(name: string) {
      return record(name);
    },
  };
}

async function reported(failure: Error): Promise<string[]> {
  const seen: string[] = [];
  await expect(applyPinPlan(containerdFailingOn('b:1', failure), plan('a:1', 'b:1', 'c:1'), { onApplied: (c) => seen.push(c.ref) })).rejects.toBe(failure);
  return seen;
}

describe('applyPinPlan when an update fails', () => {
  it.each([
    ['containerd went away', new HoldfastError('CONTAINERD_UNAVAILABLE', 'containerd is not answering')],
    ['no answer in time', new HoldfastError('TIMEOUT', 'containerd did not answer')],
    ['the stream was reset', new HoldfastError('INTERNAL', 'containerd Images.Update failed: Received RST_STREAM')],
    ['not a HoldfastError at all', new Error('socket closed')],
  ])('%s: the update is reported as sent, nothing after it is tried', async (_what, failure) => {
    expect(await reported(failure)).toEqual(['a:1', 'b:1']);
  });

  it.each([
    ['a conflict', new HoldfastError('CONFLICT', 'conflict')],
    ['an invalid request', new HoldfastError('INVALID_INPUT', 'invalid argument')],
  ])('%s: containerd refused it, so it is not reported', async (_what, failure) => {
    expect(await reported(failure)).toEqual(['a:1']);
  });
});
