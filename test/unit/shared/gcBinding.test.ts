// containerd 2.3's GC back-references (issue #37): a reference carrying containerd.io/gc.bref.* or
// containerd.io/gc.expire is removed by containerd's own GC once its parent is gone, whatever its
// CRI pin says — the protection model counts no such pin, and Holdfast never writes those labels.
import { describe, expect, it } from 'vitest';
import { GrpcContainerdClient } from '../../../src/core/containerd/client';
import { labelDelta, buildPinPlan } from '../../../src/core/usecases/pin/plan';
import type { ImageRef } from '../../../src/shared/domain/images';
import {
  applyImageProtection,
  durableProtection,
  fateBrief,
  gcBound,
  gcLabelWriteRefusal,
  imageProtection,
  isGcControlLabel,
  protectionKey,
  refOutcome,
} from '../../../src/shared/protection';
import { imageRef } from '../../support/imageRef';

const ID = 'sha256:' + 'a'.repeat(64);
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };
const BREF = { 'containerd.io/gc.bref.image': 'registry.local/app:1', 'containerd.io/gc.expire': '2026-12-12T00:00:00Z' };

async function* nothing(): AsyncIterable<Buffer> {}

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
    const k3s = ref('registry.local/app:1', { labels: K3S, pin: 'distro' });
    const bound = ref('registry.local/app:1-amd64', { labels: { ...K3S, ...BREF }, pin: 'distro' });
    const plan = buildPinPlan('n1', 'pin', [k3s, bound], { refs: [k3s.name] }, [], { user: 'u', time: 't' });
    expect(plan.changes.map((c) => c.ref)).toEqual([k3s.name, bound.name]);
    for (const c of plan.changes) expect(Object.keys(labelDelta(c)).filter((k) => k.startsWith('containerd.io/gc.'))).toEqual([]);
  });

  it('refuses a change that would write or remove one', () => {
    const change = { ref: 'x:1', imageId: ID, before: { ...CRI }, after: { ...CRI, 'containerd.io/gc.expire': 'soon' } };
    expect(() => labelDelta(change)).toThrow(/never writes the labels containerd's own garbage collector acts on/);
    expect(() => labelDelta({ ...change, before: { ...BREF }, after: {} })).toThrow(/containerd\.io\/gc\.bref\.image/);
    // containerd 2.3's conditional references too
    expect(() => labelDelta({ ...change, after: { ...CRI, 'containerd.io/gc.cond.snapshot.overlayfs': 'sha256:1' } })).toThrow(/containerd\.io\/gc\.cond\.snapshot\.overlayfs on x:1/);
  });
});

describe('the one write guard (pin plans and the containerd client alike)', () => {
  it('names every gc.bref / gc.cond / gc.expire key, and nothing else', () => {
    for (const k of ['containerd.io/gc.bref.image', 'containerd.io/gc.bref.snapshot.overlayfs', 'containerd.io/gc.cond.snapshot.overlayfs', 'containerd.io/gc.cond.value-usedat', 'containerd.io/gc.expire']) {
      expect(isGcControlLabel(k), k).toBe(true);
    }
    // What Holdfast does write: pins, provenance, the GC references that keep content alive.
    for (const k of ['io.cri-containerd.pinned', 'io.cattle.k3s.pinned', 'containerd.io/gc.ref.content.config', 'containerd.io/gc.ref.snapshot.overlayfs', 'containerd.io/distribution.source.docker.io', 'containerd.io/gc.expired']) {
      expect(isGcControlLabel(k), k).toBe(false);
    }
    expect(gcLabelWriteRefusal('x:1', ['io.cri-containerd.pinned', 'containerd.io/gc.ref.content.l.0'])).toBeNull();
    expect(gcLabelWriteRefusal('x:1', ['io.cri-containerd.pinned', 'containerd.io/gc.cond.value-usedat', 'containerd.io/gc.expire'])).toBe(
      "refusing to change containerd.io/gc.cond.value-usedat, containerd.io/gc.expire on x:1: Holdfast never writes the labels containerd's own garbage collector acts on",
    );
  });

  it('refuses before anything is sent: every image, blob and snapshot write of the containerd client', async () => {
    // No containerd behind the target: a write that got past the guard would fail on the socket instead.
    const cd = new GrpcContainerdClient({ target: 'unix:/nonexistent/holdfast-guard.sock', namespace: 'k8s.io' });
    const target = { mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: 'sha256:' + 'b'.repeat(64), size: 1, annotations: {} };
    const refused = /refusing to change containerd\.io\/gc\.\S+ on .*: Holdfast never writes/;
    try {
      await expect(cd.createImage({ name: 'x:1', labels: { 'containerd.io/gc.bref.image': 'y:1' }, target })).rejects.toThrow(refused);
      await expect(cd.updateImage('x:1', target, { 'containerd.io/gc.expire': null })).rejects.toThrow(refused);
      await expect(cd.updateImageLabels('x:1', { 'containerd.io/gc.cond.value-usedat': '1' })).rejects.toThrow(refused);
      await expect(cd.updateContentLabels(target.digest, { 'containerd.io/gc.bref.content': target.digest }, 'l')).rejects.toThrow(refused);
      await expect(cd.writeBlob({ ref: 'r', digest: target.digest, size: 1, labels: { 'containerd.io/gc.expire': 'soon' }, read: nothing }, 'l')).rejects.toThrow(refused);
      await expect(cd.prepareSnapshot('overlayfs', 'k', '', 'l', { 'containerd.io/gc.cond.snapshot.overlayfs': 'x' })).rejects.toThrow(refused);
      await expect(cd.commitSnapshot('overlayfs', 'n', 'k', 'l', { 'containerd.io/gc.bref.snapshot.overlayfs': 'x' })).rejects.toThrow(refused);
    } finally {
      cd.close();
    }
  });
});
