// containerd 2.3's GC back-references (issue #37): a reference carrying containerd.io/gc.bref.* or
// containerd.io/gc.expire is removed by containerd's own GC once its parent is gone, whatever its
// CRI pin says — the protection model counts no such pin, and Holdfast never writes those labels.
import { describe, expect, it } from 'vitest';
import { labelDelta, planPins } from '../../../src/core/pins/plan';
import type { ImageRef } from '../../../src/shared/domain';
import {
  applyImageProtection,
  durableProtection,
  fateBrief,
  gcBound,
  imageProtection,
  protectionKey,
  refOutcome,
} from '../../../src/shared/protection';
import { imageRef } from '../../support/imageRef';

const ID = 'sha256:' + 'a'.repeat(64);
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };
const BREF = { 'containerd.io/gc.bref.image': 'registry.local/app:1', 'containerd.io/gc.expire': '2026-12-12T00:00:00Z' };

const ref = (name: string, over: Partial<ImageRef> = {}): ImageRef => imageRef(name, { imageId: ID, ...over });

describe('gcBound', () => {
  it('reads the parent and the expiry, and nothing else counts', () => {
    expect(gcBound(BREF)).toEqual({ parent: 'registry.local/app:1', expires: '2026-12-12T00:00:00Z' });
    expect(gcBound({ 'containerd.io/gc.expire': 'x' })).toEqual({ parent: null, expires: 'x' });
    expect(gcBound({ 'containerd.io/gc.bref.content': 'sha256:1' })).toEqual({ parent: 'sha256:1', expires: null });
    // gc.ref.* (what keeps content alive) and gc.cond.* are no back-reference of the image itself
    expect(gcBound({ 'containerd.io/gc.ref.content.m.0': 'sha256:1', ...CRI })).toBeNull();
    expect(gcBound(undefined)).toBeNull();
  });
});

describe('the protection model', () => {
  const child = ref('registry.local/app:1-amd64', { labels: { ...CRI, ...BREF }, pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin: k3s never touches it.' });

  it('a pinned reference with GC back-reference labels protects nothing, now or after the next start', () => {
    const [r] = applyImageProtection([child], 'any');
    expect(r).toMatchObject({ afterRestart: 'unpinned' });
    expect(r!.reason).toContain("containerd's own garbage collector removes registry.local/app:1-amd64 once registry.local/app:1 is gone");
    const p = imageProtection([r!], 'any').get(protectionKey(r!))!;
    expect(p).toMatchObject({ now: false, afterRestart: false, deciding: ['registry.local/app:1-amd64'] });
    expect(p.reason).toMatch(/^Its only pin is on registry\.local\/app:1-amd64/);
    expect(refOutcome(r!, p)).toBe('unpinned');
    expect(fateBrief(r!)).toBe('containerd removes it with registry.local/app:1');
    // Even handed a stale 'pinned' fate, the image model does not count it.
    expect(imageProtection([child], 'any').get(ID)!.afterRestart).toBe(false);
    expect(imageProtection([child], 'first-loaded').get(ID)!.now).toBe(false);
    expect(durableProtection([child], 'any').afterRestart).toBe(false);
  });

  it('another reference still protects the image', () => {
    const parent = ref('registry.local/app:1', { labels: CRI, pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin.' });
    const refs = applyImageProtection([parent, child], 'any');
    const p = imageProtection(refs, 'any').get(ID)!;
    expect(p).toMatchObject({ now: true, afterRestart: true, deciding: ['registry.local/app:1'] });
    expect(p.reason).not.toContain('loses its own pin');
    expect(durableProtection(refs, 'any').afterRestart).toBe(true);
  });
});

describe('the pin plan never writes GC labels', () => {
  it('carries them over unchanged when it pins the image', () => {
    const k3s = ref('registry.local/app:1', { labels: K3S, pin: 'k3s' });
    const bound = ref('registry.local/app:1-amd64', { labels: { ...K3S, ...BREF }, pin: 'k3s' });
    const plan = planPins('n1', 'pin', [k3s, bound], { refs: [k3s.name] }, [], { user: 'u', time: 't' });
    expect(plan.changes.map((c) => c.ref)).toEqual([k3s.name, bound.name]);
    for (const c of plan.changes) expect(Object.keys(labelDelta(c)).filter((k) => k.startsWith('containerd.io/gc.'))).toEqual([]);
  });

  it('refuses a change that would write or remove one', () => {
    const change = { ref: 'x:1', imageId: ID, before: { ...CRI }, after: { ...CRI, 'containerd.io/gc.expire': 'soon' } };
    expect(() => labelDelta(change)).toThrow(/never writes the labels containerd's own garbage collector acts on/);
    expect(() => labelDelta({ ...change, before: { ...BREF }, after: {} })).toThrow(/containerd\.io\/gc\.bref\.image/);
  });
});
