import { describe, expect, it } from 'vitest';
import { displayRef, splitRef, splitRepo } from '../../../../src/renderer/model/refs';

const D = (c: string) => `sha256:${c.repeat(64).slice(0, 64)}`;

describe('references split for a narrow cell', () => {
  it('keeps the tag or digest apart, and the image name apart from its registry and path', () => {
    expect(splitRef('docker.io/rancher/mirrored-coredns-coredns:1.12.0')).toEqual(['docker.io/rancher/mirrored-coredns-coredns', ':1.12.0']);
    expect(splitRef('registry.site.lan:5000/acme/agent@sha256:abc')).toEqual(['registry.site.lan:5000/acme/agent', '@sha256:abc']);
    expect(splitRef('registry.site.lan:5000/acme/agent')).toEqual(['registry.site.lan:5000/acme/agent', '']);
    // A tag and a digest both stay whole; CRI's id record has no repository to cut.
    expect(splitRef('docker.io/rancher/mirrored-pause:3.6@sha256:abc')).toEqual(['docker.io/rancher/mirrored-pause', ':3.6@sha256:abc']);
    expect(splitRef(D('8'))).toEqual([D('8'), '']);
    expect(splitRepo('docker.io/rancher/mirrored-coredns-coredns')).toEqual(['docker.io/rancher/', 'mirrored-coredns-coredns']);
    expect(splitRepo('registry.site.lan:5000/acme/agent')).toEqual(['registry.site.lan:5000/acme/', 'agent']);
    expect(splitRepo('busybox')).toEqual(['', 'busybox']);
    expect(splitRepo('sha256:80d331785726')).toEqual(['', 'sha256:80d331785726']);
  });

  it('a digest reference shows 12 hex digits of its digest', () => {
    expect(displayRef(`a/b@${D('a')}`)).toBe('a/b@sha256:aaaaaaaaaaaa…');
    expect(displayRef('a/b:1')).toBe('a/b:1');
  });
});
