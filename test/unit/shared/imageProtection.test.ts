// The one image-level protection model (shared/protection.ts): what kubelet sees per image id,
// by the containerd rule of the node, with the references that decide it.
import { describe, expect, it } from 'vitest';
import { durableProtection, imageProtection, losingImages, protectionChange, type ImageProtectionRef } from '../../../src/shared/protection';

const ID = 'sha256:' + 'a'.repeat(64);
const ID2 = 'sha256:' + 'c'.repeat(64);
const CRI = { 'io.cri-containerd.pinned': 'pinned' };
const K3S = { ...CRI, 'io.cattle.k3s.pinned': 'pinned' };

const ref = (name: string, over: Partial<ImageProtectionRef> = {}): ImageProtectionRef => ({
  name,
  digest: 'sha256:' + 'd'.repeat(64),
  imageId: ID,
  labels: {},
  pin: 'none',
  afterRestart: 'unpinned',
  reason: 'Not pinned',
  ...over,
});
const durable = (name: string, over: Partial<ImageProtectionRef> = {}) => ref(name, { labels: CRI, pin: 'durable', afterRestart: 'pinned', reason: 'Durable pin', ...over });
const k3sLosing = (name: string, over: Partial<ImageProtectionRef> = {}) =>
  ref(name, { labels: K3S, pin: 'distro', afterRestart: 'unpinned', reason: 'k3s strips this pin at start', ...over });

// The state issue #16 found after the import race: the tag durable, the digest reference k3s added
// after its labels still k3s-pinned (it loses its own pin at the next start).
const raced = [durable('registry.local/app:3'), k3sLosing(`registry.local/app@sha256:${'d'.repeat(64)}`), durable(ID)];

describe('imageProtection', () => {
  it('on containerd ≥ 1.7.10 / 2.x keeps an image any of whose references keeps its pin, naming them', () => {
    const p = imageProtection(raced, 'any').get(ID)!;
    expect(p).toMatchObject({ now: true, afterRestart: true, refs: raced.map((r) => r.name) });
    expect(p.deciding).toEqual(['registry.local/app:3', ID]);
    expect(p.reason).toMatch(/through registry\.local\/app:3 and sha256:a+\. registry\.local\/app:3: Durable pin/);
    expect(p.reason).toMatch(/registry\.local\/app@sha256:d+ loses its own pin then, which does not matter/);
    expect(protectionChange(p)).toBe('kept');
    expect(losingImages(raced, 'any')).toEqual([]);
  });

  it('on 1.7.3–1.7.9 keeps an image only if every reference carries the pin (the first-loaded one is unknown)', () => {
    const p = imageProtection(raced, 'first-loaded').get(ID)!;
    expect(p).toMatchObject({ now: true, afterRestart: false, deciding: [`registry.local/app@sha256:${'d'.repeat(64)}`] });
    expect(p.reason).toMatch(/whichever reference CRI loaded first/);
    expect(losingImages(raced, 'first-loaded').map((x) => x.key)).toEqual([ID]);
    // CRI's unlabelled sha256:<id> record makes a freshly imported image uncertain too
    const fresh = [ref('app:1', { labels: K3S, pin: 'distro', afterRestart: 'pinned' }), ref(ID)];
    expect(imageProtection(fresh, 'first-loaded').get(ID)).toMatchObject({ now: false, afterRestart: false, deciding: [ID] });
    const all = [durable('app:1'), durable(ID)];
    expect(imageProtection(all, 'first-loaded').get(ID)).toMatchObject({ now: true, afterRestart: true });
  });

  it('before containerd 1.7.3 protects nothing, whatever the labels say', () => {
    const p = imageProtection(raced, 'none').get(ID)!;
    expect(p).toMatchObject({ now: false, afterRestart: false, deciding: [] });
    expect(p.reason).toMatch(/no CRI image pinning/);
    expect(protectionChange(p)).toBe('none');
  });

  it('reads an unknown containerd as ≥ 1.7.10', () => {
    expect(imageProtection(raced, 'unknown').get(ID)).toMatchObject({ now: true, afterRestart: true });
  });

  it('says an image loses its pin when no reference keeps one, and quotes why', () => {
    const refs = [k3sLosing('app:1'), k3sLosing(`app@sha256:${'d'.repeat(64)}`), ref(ID)];
    const [p] = losingImages(refs, 'any');
    expect(p).toMatchObject({ key: ID, now: true, afterRestart: false, deciding: ['app:1', `app@sha256:${'d'.repeat(64)}`] });
    expect(p!.reason).toMatch(/No reference keeps its pin at the next k3s start, so kubelet may then delete the image\. app:1: k3s strips this pin at start/);
  });

  it('counts the CRI label, not the k3s label, as pinned now; an archive re-pinning an unpinned image is a gain', () => {
    const onlyK3s = [ref('app:1', { labels: { 'io.cattle.k3s.pinned': 'pinned' }, pin: 'distro', afterRestart: 'pinned' })];
    expect(protectionChange(imageProtection(onlyK3s, 'any').get(ID)!)).toBe('gain');
  });

  it('groups by image id, a record with an unknown id by its digest', () => {
    const refs = [durable('a:1'), ref('b:1', { imageId: ID2 }), ref('c:1', { imageId: null, digest: 'sha256:' + 'e'.repeat(64) })];
    expect([...imageProtection(refs, 'any').keys()]).toEqual([ID, ID2, 'sha256:' + 'e'.repeat(64)]);
  });
});

describe('durableProtection (what is left once no archive re-pins the image)', () => {
  it('counts only durable pins: the raced image is safe on 2.x, not on 1.7.3–1.7.9, never on 1.6', () => {
    expect(durableProtection(raced, 'any')).toMatchObject({ afterRestart: true, deciding: ['registry.local/app:3', ID] });
    expect(durableProtection(raced, 'first-loaded')).toMatchObject({ afterRestart: false, deciding: [`registry.local/app@sha256:${'d'.repeat(64)}`] });
    expect(durableProtection(raced, 'none').afterRestart).toBe(false);
  });

  it('does not count k3s pins an archive would re-apply', () => {
    const p = durableProtection([ref('app:1', { labels: K3S, pin: 'distro', afterRestart: 'pinned' })], 'any');
    expect(p.afterRestart).toBe(false);
    expect(p.reason).toMatch(/pinned by k3s only/);
  });
});
