import { describe, expect, it } from 'vitest';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { PinState } from '../../../src/shared/domain/pins';
import type { FleetNodeResult } from '../../../src/shared/fleet';
import { computeDrift, foldRefs, isDrift, refKind } from '../../../src/shared/drift';
import { computeDrift as reportDrift } from '../../../src/core/usecases/fleet';
import { buildMatrix } from '../../../src/renderer/fleetMatrix';

const D = (c: string) => 'sha256:' + c.repeat(64);
const ref = (name: string, pin: PinState, image: string, p: Partial<ImageRef> = {}): ImageRef => ({
  name,
  digest: D(image),
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId: D(String.fromCharCode(image.charCodeAt(0) + 1)),
  size: 1,
  platforms: [],
  createdAt: null,
  labels: pin === 'durable' ? { 'io.cri-containerd.pinned': 'pinned' } : pin === 'distro' ? { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' } : {},
  pin,
  afterRestart: pin === 'none' ? 'unpinned' : 'pinned',
  reason: '',
  archive: null,
  ...p,
});
const ok = (node: string, images: ImageRef[]): FleetNodeResult => ({ node, reachable: true, error: null, versions: null, images, archives: [], disk: null });

describe('drift: one definition for the fleet report and the app matrix (issue #14)', () => {
  // n1 has the tag and its digest reference; n2 only the tag; n3 the tag plus CRI's id record.
  const nodes: FleetNodeResult[] = [
    ok('n1', [ref('app:1', 'durable', 'a'), ref(`app@${D('a')}`, 'none', 'a'), ref('only1:1', 'none', 'c')]),
    ok('n2', [ref('app:1', 'durable', 'a'), ref('only1:1', 'durable', 'c')]),
    ok('n3', [ref('app:1', 'durable', 'a'), ref(D('b'), 'none', 'a', { imageId: D('b') }), ref('only1:1', 'none', 'c')]),
  ];

  it('a digest reference of the same image is not drift: report and matrix agree', () => {
    const report = reportDrift(nodes);
    expect(report.map((d) => d.name)).toEqual(['only1:1']);
    const matrix = buildMatrix(['n1', 'n2', 'n3'], Object.fromEntries(nodes.map((n) => [n.node, n])));
    expect(matrix.rows.filter((r) => r.drift).map((r) => r.name)).toEqual(report.map((d) => d.name));
  });

  it('matrix drift equals report drift on a mixed fleet, including lone digests and partial answers', () => {
    const mixed: FleetNodeResult[] = [
      ok('a', [ref('x:1', 'distro', 'a'), ref(`x@${D('a')}`, 'none', 'a'), ref(`y@${D('d')}`, 'none', 'd'), ref('z:1', 'none', 'e')]),
      ok('b', [ref('x:1', 'none', 'a'), ref(`y@${D('d')}`, 'none', 'd'), ref(D('f'), 'none', 'f', { imageId: D('f') }), ref('z:1', 'durable', 'e')]),
      ok('c', [ref(`x@${D('a')}`, 'durable', 'a'), ref(`y@${D('d')}`, 'none', 'd'), ref('z:1', 'none', 'e')]),
    ];
    const results = Object.fromEntries(mixed.map((n) => [n.node, n]));
    const matrix = buildMatrix(['a', 'b', 'c', 'pending'], results);
    expect(matrix.rows.filter((r) => r.drift).map((r) => r.name).sort()).toEqual(computeDrift(mixed).map((d) => d.name).sort());
    expect(computeDrift(mixed).map((d) => d.name)).toEqual(['x:1', `x@${D('a')}`, 'z:1']);
  });

  it('the pieces', () => {
    expect(refKind('a:1')).toBe('tag');
    expect(refKind(`a@${D('a')}`)).toBe('digest');
    expect(refKind(D('a'))).toBe('id');
    // The digest suffix as the regex /@sha256:[0-9a-f]+$/i reads it, on the edge cases.
    const digestRule = /@sha256:[0-9a-f]+$/i;
    const hex = 'a'.repeat(64);
    for (const name of [
      `a@sha256:${hex}`, `a@SHA256:${hex.toUpperCase()}`, `a@sha256:`, `a@sha256:12g`, `a@sha256:12\n`, `a@sha256:1@sha256:ff`,
      `a@sha256:ff@b`, `a@sha512:${hex}`, `a@sha256`, `@sha256:0`, `a:1`, 'a@b:1', `a@sha256:\u0011\u0012`, `a@sha256:0 `,
    ]) {
      expect(refKind(name), JSON.stringify(name)).toBe(digestRule.test(name) ? 'digest' : 'tag');
    }
    expect([...foldRefs([ref('a:1', 'none', 'a'), ref(`a@${D('a')}`, 'none', 'a')]).keys()]).toEqual(['a:1']);
    expect(isDrift([true, true])).toBe(false);
    expect(isDrift([true, false])).toBe(true);
    expect(isDrift([true, 'missing'])).toBe(true);
    expect(isDrift([])).toBe(false);
  });
});
