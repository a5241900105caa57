// Reference normalisation (shared/imageReference): docker-save RepoTags as containerd stores them,
// and pod spec images as CRI resolves them.
import { describe, expect, it } from 'vitest';
import { isFullReference, normalizeReference } from '../../../src/shared/imageReference.ts';

describe('reference normalisation (as containerd stores docker-save RepoTags)', () => {
  it.each([
    ['app:1.0', 'docker.io/library/app:1.0'],
    ['app', 'docker.io/library/app:latest'],
    ['user/app:1', 'docker.io/user/app:1'],
    ['docker.io/app:2', 'docker.io/library/app:2'],
    ['index.docker.io/library/app:3', 'docker.io/library/app:3'],
    ['registry.local:5000/x/y:2', 'registry.local:5000/x/y:2'],
    ['localhost/app', 'localhost/app:latest'],
    ['localhost:5000/app:dev', 'localhost:5000/app:dev'],
    ['quay.io/org/app', 'quay.io/org/app:latest'],
    ['rancher/mirrored-pause:3.6', 'docker.io/rancher/mirrored-pause:3.6'],
    [`app:1@sha256:${'a'.repeat(64)}`, `docker.io/library/app@sha256:${'a'.repeat(64)}`],
    [`ghcr.io/o/app@sha256:${'b'.repeat(64)}`, `ghcr.io/o/app@sha256:${'b'.repeat(64)}`],
    ['a.b/c__d/e-f.g:T_1.x-y', 'a.b/c__d/e-f.g:T_1.x-y'],
    // An upper-case first component can only be a registry host (distribution/reference rule).
    ['Registry/app', 'Registry/app:latest'],
  ])('%s → %s', (input, want) => {
    expect(normalizeReference(input)).toBe(want);
  });
  it.each(['App:1', 'app:', ':1', 'a'.repeat(64), 'app:1:2', 'a//b', 'org/App', ''])('rejects %j', (bad) => {
    expect(() => normalizeReference(bad)).toThrow();
  });
  it('tells full references from tags', () => {
    expect(isFullReference('docker.io/library/app:1')).toBe(true);
    expect(isFullReference('registry.local:5000/app:1')).toBe(true);
    expect(isFullReference('localhost/app:1')).toBe(true);
    expect(isFullReference('1.0')).toBe(false);
    expect(isFullReference('app:1.0')).toBe(false);
    expect(isFullReference('user/app:1')).toBe(false);
  });
});
