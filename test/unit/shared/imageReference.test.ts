// Image references (shared/imageReference). Normalisation: docker-save RepoTags as containerd
// stores them, and pod spec images as CRI resolves them. References as containerd stores them:
// one reading for the fates, the version rules, the import's event filter, the CLI and the app.
// Names from real nodes: k3s's bundled images, a private registry with a port, CRI's id record.
import { describe, expect, it } from 'vitest';
import { imageName, isFullReference, isImageIdRecord, normalizeReference, repositoryOf, splitReference } from '../../../src/shared/imageReference.ts';

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

const ID = `sha256:${'a'.repeat(64)}`;

describe('splitReference', () => {
  it('splits tags, digest references and registry ports; CRI id records name no repository', () => {
    expect(splitReference('docker.io/library/app:1.0')).toEqual({ repository: 'docker.io/library/app', tag: '1.0', digest: null });
    expect(splitReference('registry.lan:5000/team/app')).toEqual({ repository: 'registry.lan:5000/team/app', tag: null, digest: null });
    expect(splitReference(`registry.lan:5000/app@${ID}`)).toEqual({ repository: 'registry.lan:5000/app', tag: null, digest: ID });
    expect(splitReference(`docker.io/rancher/mirrored-pause:3.6@${ID}`)).toEqual({ repository: 'docker.io/rancher/mirrored-pause', tag: '3.6', digest: ID });
    expect(splitReference(ID)).toBeNull();
    expect(splitReference('')).toBeNull();
  });
});

describe('repositoryOf', () => {
  it('strips tags and digests but not registry ports; an id record stands for itself', () => {
    expect(repositoryOf('docker.io/library/app:1.0')).toBe('docker.io/library/app');
    expect(repositoryOf(`docker.io/library/app@${ID}`)).toBe('docker.io/library/app');
    expect(repositoryOf('registry.local:5000/x/y')).toBe('registry.local:5000/x/y');
    expect(repositoryOf('registry.local:5000/x/y:2')).toBe('registry.local:5000/x/y');
    // Not `sha256`: an id record must never match a repository of that name.
    expect(repositoryOf(ID)).toBe(ID);
  });
});

describe('isImageIdRecord', () => {
  it('is CRI\'s sha256:<64 hex> record only', () => {
    expect(isImageIdRecord(ID)).toBe(true);
    expect(isImageIdRecord('sha256:abc')).toBe(false);
    expect(isImageIdRecord(`docker.io/library/app@${ID}`)).toBe(false);
    expect(isImageIdRecord('docker.io/library/app:1.0')).toBe(false);
  });
});

describe('imageName', () => {
  it('names an image by a tag, else a digest reference, else its id record, else its key', () => {
    const digestRef = `docker.io/rancher/mirrored-coredns-coredns@${ID}`;
    // A digest reference of another repository can sort before the tag: the tag still wins.
    expect(imageName([`docker.io/a/b@${ID}`, ID, 'docker.io/z/app:1'], 'k')).toBe('docker.io/z/app:1');
    expect(imageName([ID, digestRef], 'k')).toBe(digestRef);
    expect(imageName([ID], 'k')).toBe(ID);
    expect(imageName([], 'sha256:key')).toBe('sha256:key');
  });
});
