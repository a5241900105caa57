// The words of the .txt sibling-tag trap (issue #37, item 1): one short clause, one long form.
import { describe, expect, it } from 'vitest';
import { buildPinPlan } from '../../../src/core/usecases/pin/plan';
import { fateBrief } from '../../../src/shared/protection';
import { listRepinsWarning, listTakeoverBrief, listTakeoverReason, listTrapBrief, listTrapHeading, listTrapReason } from '../../../src/shared/listTrap';

const t = { list: 'busybox.txt', listed: 'docker.io/library/busybox:latest' };

describe('listTrap', () => {
  it('says what happens and what to do, short and long', () => {
    expect(listTrapBrief(t)).toBe('busybox.txt names docker.io/library/busybox:latest (same image)');
    const long = listTrapReason('registry.local/mirror/busybox:1.36', t);
    expect(long).toContain('becomes k3s-managed, and once busybox.txt is gone, the start after that strips it');
    expect(long).toContain('remove busybox.txt from the images dir before k3s restarts');
    expect(listTrapReason('r:1', t, 'RKE2')).toContain('RKE2-managed');
    expect(listTrapHeading(1)).toBe('1 durable pin k3s takes over at its next start (a .txt list names another tag of its image):');
    expect(listTrapHeading(2)).toMatch(/^2 durable pins .* of their images/);
  });

  it('beside the list: whose pins it takes', () => {
    const takes = [{ ref: 'registry.local/mirror/busybox:1.36', listed: t.listed }];
    expect(listTakeoverBrief(takes)).toBe('takes over the durable pin of registry.local/mirror/busybox:1.36 (same image as docker.io/library/busybox:latest)');
    expect(listTakeoverReason('busybox.txt', takes)).toContain('Remove busybox.txt before the next k3s start to keep that pin durable.');
  });
});

describe('listRepinsWarning', () => {
  it('says before a pin that the list hands the pins back to k3s', () => {
    expect(listRepinsWarning('a.txt', ['x:1'])).toBe(
      'a.txt in the images dir pins x:1 again at every k3s start (k3s pins every tag of an image a .txt list names), so it becomes k3s-managed again at the next start: remove a.txt first to keep the pin durable.',
    );
    expect(listRepinsWarning('a.txt', ['a:1', 'b:1', 'c:1', 'd:1'])).toContain('a:1, b:1, c:1 and 1 more again at every k3s start');
  });
});

describe('the pin plan warns when a .txt list would take the pins back', () => {
  const ID = 'sha256:' + 'a'.repeat(64);
  const base = { digest: ID, mediaType: 'm', imageId: ID, size: 1, platforms: [], createdAt: null, reason: '' };
  const listed = { ...base, name: 'docker.io/library/busybox:latest', labels: { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' }, pin: 'distro' as const, afterRestart: 'pinned' as const, archive: 'busybox.txt' };
  const sibling = { ...base, name: 'registry.local/mirror/busybox:1.36', labels: { 'io.cri-containerd.pinned': 'pinned' }, pin: 'durable' as const, afterRestart: 'pinned' as const, archive: 'busybox.txt', listTrap: t };
  const prov = { user: 'u', time: 't' };

  it('names the list and every reference it re-pins, durable ones included', () => {
    const plan = buildPinPlan('n1', 'pin', [listed, sibling], { refs: [listed.name] }, [], prov);
    expect(plan.warnings).toEqual([listRepinsWarning('busybox.txt', [listed.name, sibling.name])]);
  });

  it('on RKE2, names RKE2 as the one that takes the pins back', () => {
    const plan = buildPinPlan('n1', 'pin', [listed, sibling], { refs: [listed.name] }, [], prov, 'RKE2');
    expect(plan.warnings).toHaveLength(1);
    expect(plan.warnings![0]).toContain('again at every RKE2 start (RKE2 pins every tag of an image a .txt list names), so they become RKE2-managed');
    expect(plan.warnings![0]).not.toContain('k3s');
  });

  it('says nothing for an archive, or when unpinning', () => {
    expect(buildPinPlan('n1', 'pin', [{ ...listed, archive: 'b.tar' }], { refs: [listed.name] }, [], prov).warnings).toBeUndefined();
    expect(buildPinPlan('n1', 'unpin', [listed, sibling], { refs: [sibling.name] }, [], prov).warnings).toBeUndefined();
  });
});

describe('fateBrief of a reference a list takes over', () => {
  it('says so instead of "durable pin"', () => {
    expect(fateBrief({ pin: 'durable', afterRestart: 'pinned', archive: 'busybox.txt', listTrap: t })).toBe('k3s takes it over: busybox.txt names docker.io/library/busybox:latest (same image)');
    expect(fateBrief({ pin: 'durable', afterRestart: 'pinned', archive: null })).toBe('durable pin');
  });
});
