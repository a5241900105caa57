// The safe cleanup's planner (shared/prunePlan): what it removes and, for everything else, why not.
import { describe, expect, it } from 'vitest';
import { cliProse } from '../../../src/cli/remedyText';
import { planPrune } from '../../../src/shared/prunePlan';
import { proseText } from '../../../src/shared/remedy';
import { id, kubeletUse, store } from '../../support/diskStore';

const repo = 'registry.lan/acme/agent';
const v = (t: string, extra: Parameters<typeof store>[0][number] extends infer S ? Partial<S> : never = {}) => ({
  key: `v${t}`,
  refs: [`${repo}:${t}`, `${repo}@sha256:${t.replace(/\D/g, '').padEnd(64, '0')}`, id(t.replace(/\D/g, ''))],
  blobs: [['base', 1000], [`l${t}`, 10 * Number(t.replace(/\D/g, ''))]] as [string, number][],
  lastChangedAt: `2024-0${t.replace(/\D/g, '').length}-01T00:00:00Z`,
  ...extra,
});

function node() {
  return store([
    v('4.1', { usedBy: [kubeletUse('c1', `${repo}:4.1`)] }),
    v('4.0'),
    v('3.2'),
    v('2.0'),
    { key: 'redis', refs: ['docker.io/library/redis:7.2'], blobs: [['r', 500]] },
    { key: 'pinned', refs: ['docker.io/library/old:1'], blobs: [['o', 70]], pin: 'durable' },
    { key: 'k3s', refs: ['docker.io/rancher/pause:3.6'], blobs: [['p', 7]], pin: 'distro', archive: 'airgap.tar.zst' },
    { key: 'arch', refs: ['docker.io/library/busybox:1.36'], blobs: [['b', 2]], archive: 'tools/busybox.tar' },
    { key: 'lost', refs: ['registry.lan/acme/metrics:0.9'], blobs: [['m', 3]], lostPin: true },
    { key: 'debug', refs: ['docker.io/library/tool:1'], blobs: [['t', 1]], usedBy: [{ id: 'dbg', image: 'docker.io/library/tool:1', kubelet: false }] },
    { key: 'dangling', refs: ['a/b:1'], blobs: [], imageId: null },
  ]);
}

describe('planPrune', () => {
  it('removes only unused, unpinned images outside the rollback window, with every reference, tags first', () => {
    const { images, index } = node();
    const plan = planPrune('edge1', images, index, { keepVersions: 2 });
    expect(plan.remove.map((r) => r.key).sort()).toEqual(['redis', 'v2.0', 'v3.2']);
    const v3 = plan.remove.find((r) => r.key === 'v3.2')!;
    expect(v3.refs).toEqual([`${repo}:3.2`, `${repo}@sha256:${'32'.padEnd(64, '0')}`, id('32')]);
  });

  it('keeps everything else with a reason, and never an in-use, pinned, archive-brought or lost-pin image', () => {
    const { images, index } = node();
    const plan = planPrune('edge1', images, index, { keepVersions: 2 });
    const why = Object.fromEntries(plan.kept.map((k) => [k.key, k.reason]));
    expect(why).toEqual({
      'v4.1': 'in-use',
      'v4.0': 'rollback',
      debug: 'in-use',
      pinned: 'pinned',
      k3s: 'pinned',
      arch: 'archive',
      lost: 'pinned',
      dangling: 'unresolved',
    });
    expect(cliProse(plan.kept.find((k) => k.key === 'pinned')!.text)).toContain('holdfast unpin edge1 docker.io/library/old:1');
    expect(cliProse(plan.kept.find((k) => k.key === 'lost')!.text)).toContain('holdfast pin edge1');
  });

  it('says each kept pin with its remedies as data: the terminal words them as commands, the app needs none', () => {
    const { images, index } = node();
    const kept = planPrune('edge1', images, index, { keepVersions: 2 }).kept;
    const pinned = kept.find((k) => k.key === 'pinned')!.text;
    expect(cliProse(pinned)).toBe('Pinned durably; prune never unpins. If this version is obsolete, release its pin first: holdfast unpin edge1 docker.io/library/old:1');
    expect(proseText(pinned)).toBe('Pinned durably; prune never unpins. If this version is obsolete, release its pin first');
    const lost = kept.find((k) => k.key === 'lost')!;
    const ref = lost.refs[0]!;
    expect(cliProse(lost.text)).toBe(
      `Holdfast made its pin durable and that pin is gone (removed behind Holdfast's back): pin it again (holdfast pin edge1 ${ref}), or release it for good (holdfast unpin edge1 ${ref}) before pruning it.`,
    );
    expect(proseText(lost.text)).not.toContain('holdfast');
  });

  it('keeps more versions as asked, and counts shared blobs once in what it frees', () => {
    const { images, index } = node();
    const three = planPrune('edge1', images, index, { keepVersions: 3 });
    expect(three.remove.map((r) => r.key).sort()).toEqual(['redis', 'v2.0']);
    // v3.2 and v2.0 share the base layer with the kept versions: only their own layers go.
    const two = planPrune('edge1', images, index, { keepVersions: 2 });
    expect(two.freedBytes).toBe(500 + 320 + 200);
  });

  it('plans the same thing every time (the dry run is the real run’s list)', () => {
    const { images, index } = node();
    expect(planPrune('edge1', images, index, { keepVersions: 2 })).toEqual(planPrune('edge1', structuredClone(images), structuredClone(index), { keepVersions: 2 }));
  });
});
