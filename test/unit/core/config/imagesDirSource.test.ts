// Whether a node's images dir was given or detected, and how a connection's detection updates a
// detected one but never a given one (core/config/nodes.ts).
import { mkdtempSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adoptImagesDir, completeNode, NodeStore } from '../../../../src/core/config/nodes';
import type { ImagesDirDetection } from '../../../../src/shared/domain/nodes';

const home = () => mkdtempSync(path.join(os.tmpdir(), 'hf-imgdir-'));
const K3S_DEFAULT = '/var/lib/rancher/k3s/agent/images';

const rke2Default: ImagesDirDetection = { imagesDir: '/var/lib/rancher/rke2/agent/images', dataDir: '/var/lib/rancher/rke2', from: 'default', file: null, notes: [] };
const fromConfig: ImagesDirDetection = {
  imagesDir: '/data/k3s/agent/images',
  dataDir: '/data/k3s',
  from: 'config',
  file: '/etc/rancher/k3s/config.yaml',
  notes: [],
};
const uncertain: ImagesDirDetection = { ...rke2Default, notes: ['/etc/rancher/rke2/config.yaml could not be read by the SSH user, so a data-dir it may set is not known.'] };

describe('completeNode: where the images dir came from', () => {
  it('no images dir: the k3s default, source unset (to be detected)', () => {
    const def = completeNode({ name: 'a', host: 'h' });
    expect(def.imagesDir).toBe(K3S_DEFAULT);
    expect(def.imagesDirSource).toBeUndefined();
  });

  it('keeps a recorded source; an entry from before sources were recorded is explicit unless it is the k3s default', () => {
    expect(completeNode({ name: 'a', host: 'h', imagesDir: K3S_DEFAULT, imagesDirSource: 'explicit' }).imagesDirSource).toBe('explicit');
    expect(completeNode({ name: 'a', host: 'h', imagesDir: '/x/agent/images', imagesDirSource: 'detected' }).imagesDirSource).toBe('detected');
    expect(completeNode({ name: 'a', host: 'h', imagesDir: '/custom/images' }).imagesDirSource).toBe('explicit');
    expect(completeNode({ name: 'a', host: 'h', imagesDir: K3S_DEFAULT }).imagesDirSource).toBeUndefined();
  });
});

describe('adoptImagesDir', () => {
  const base = completeNode({ name: 'a', host: 'h' });

  it('takes what the node says when nothing was given or detected', () => {
    expect(adoptImagesDir(base, rke2Default)).toMatchObject({ imagesDir: rke2Default.imagesDir, imagesDirSource: 'detected' });
    // Even k3s's own default gets recorded as detected, so it is known to be the node's answer.
    expect(adoptImagesDir(base, { ...rke2Default, imagesDir: K3S_DEFAULT })).toMatchObject({ imagesDir: K3S_DEFAULT, imagesDirSource: 'detected' });
    expect(adoptImagesDir(base, uncertain)).toMatchObject({ imagesDirSource: 'detected' });
  });

  it('follows a detected one when the node moved it, never an explicit one', () => {
    const detected = { ...base, imagesDir: rke2Default.imagesDir, imagesDirSource: 'detected' as const };
    expect(adoptImagesDir(detected, rke2Default)).toBeNull();
    expect(adoptImagesDir(detected, fromConfig)).toMatchObject({ imagesDir: fromConfig.imagesDir, imagesDirSource: 'detected' });
    const explicit = { ...base, imagesDir: '/mine', imagesDirSource: 'explicit' as const };
    expect(adoptImagesDir(explicit, fromConfig)).toBeNull();
  });

  it('an uncertain answer (a default because a file could not be read) never replaces a detection', () => {
    const detected = { ...base, imagesDir: fromConfig.imagesDir, imagesDirSource: 'detected' as const };
    expect(adoptImagesDir(detected, uncertain)).toBeNull();
  });

  it('no detection (the probe failed): nothing changes', () => {
    expect(adoptImagesDir(base, undefined)).toBeNull();
  });
});

describe('NodeStore', () => {
  it('records a detection in nodes.json, once', async () => {
    const store = new NodeStore(home());
    await store.add({ name: 'edge', host: 'h', knownHosts: '/tmp/kh' });
    expect(await store.adoptImagesDir('edge', fromConfig)).toMatchObject({ imagesDir: fromConfig.imagesDir });
    expect(await store.adoptImagesDir('edge', fromConfig)).toBeNull();
    const onDisk = JSON.parse(await fs.readFile(store.file, 'utf8')) as { nodes: Record<string, unknown>[] };
    expect(onDisk.nodes[0]).toMatchObject({ imagesDir: '/data/k3s/agent/images', imagesDirSource: 'detected' });
    expect((await store.get('edge')).imagesDirSource).toBe('detected');
  });

  it('an edit that leaves the images dir as it was keeps it detected; changing it makes it explicit', async () => {
    const store = new NodeStore(home());
    await store.add({ name: 'edge', host: 'h', knownHosts: '/tmp/kh' });
    await store.adoptImagesDir('edge', fromConfig);
    // The app's form sends every field back, without the source.
    const { imagesDirSource: _s, ...formInput } = await store.get('edge');
    await store.update('edge', { ...formInput, port: 2222 });
    expect(await store.get('edge')).toMatchObject({ port: 2222, imagesDir: fromConfig.imagesDir, imagesDirSource: 'detected' });
    await store.update('edge', { ...formInput, imagesDir: '/srv/images' });
    expect((await store.get('edge')).imagesDirSource).toBe('explicit');
  });
});
