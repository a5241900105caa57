// Image references as containerd stores them (shared/reference): one reading for the fates, the
// version rules, the import's event filter, the CLI and the app. Names from real nodes: k3s's
// bundled images, a private registry with a port, CRI's id record.
import { describe, expect, it } from 'vitest';
import { imageName, isImageIdRecord, parseReference, repositoryOf } from '../../../src/shared/reference';

const ID = `sha256:${'a'.repeat(64)}`;

describe('parseReference', () => {
  it('splits tags, digest references and registry ports; CRI id records name no repository', () => {
    expect(parseReference('docker.io/library/app:1.0')).toEqual({ repository: 'docker.io/library/app', tag: '1.0', digest: null });
    expect(parseReference('registry.lan:5000/team/app')).toEqual({ repository: 'registry.lan:5000/team/app', tag: null, digest: null });
    expect(parseReference(`registry.lan:5000/app@${ID}`)).toEqual({ repository: 'registry.lan:5000/app', tag: null, digest: ID });
    expect(parseReference(`docker.io/rancher/mirrored-pause:3.6@${ID}`)).toEqual({ repository: 'docker.io/rancher/mirrored-pause', tag: '3.6', digest: ID });
    expect(parseReference(ID)).toBeNull();
    expect(parseReference('')).toBeNull();
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
