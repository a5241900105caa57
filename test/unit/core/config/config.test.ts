import { mkdtempSync, promises as fs, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../../../src/core/config/atomic';
import { holdfastHome } from '../../../../src/core/config/home';
import { NodeStore } from '../../../../src/core/config/nodes';
import { HoldfastError } from '../../../../src/core/errors';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'hf-cfg-'));

describe('holdfastHome', () => {
  it('honours HOLDFAST_HOME, then the OS config dir', () => {
    expect(holdfastHome({ HOLDFAST_HOME: '/x/y' }, 'linux')).toBe('/x/y');
    expect(holdfastHome({ HOME: '/home/t' }, 'linux')).toBe('/home/t/.config/holdfast');
    expect(holdfastHome({ HOME: '/home/t', XDG_CONFIG_HOME: '/cfg' }, 'linux')).toBe('/cfg/holdfast');
    expect(holdfastHome({ HOME: '/Users/t' }, 'darwin')).toBe('/Users/t/Library/Application Support/Holdfast');
  });
});

describe('writeFileAtomic', () => {
  it('replaces the file whole and leaves no temp file behind', async () => {
    const dir = tmp();
    const f = path.join(dir, 'sub', 'a.json');
    await writeFileAtomic(f, 'one');
    await writeFileAtomic(f, 'two');
    expect(await fs.readFile(f, 'utf8')).toBe('two');
    expect(await fs.readdir(path.dirname(f))).toEqual(['a.json']);
    expect(statSync(f).mode & 0o777).toBe(0o600);
  });
});

describe('NodeStore', () => {
  it('adds with k3s defaults, lists, updates and removes', async () => {
    const store = new NodeStore(tmp());
    expect(await store.list()).toEqual([]);
    const def = await store.add({ name: 'edge-1', host: '10.0.0.5', knownHosts: '/tmp/kh' });
    expect(def).toMatchObject({
      name: 'edge-1',
      port: 22,
      user: 'root',
      socket: '/run/k3s/containerd/containerd.sock',
      imagesDir: '/var/lib/rancher/k3s/agent/images',
      namespace: 'k8s.io',
      knownHosts: '/tmp/kh',
    });
    await store.update('edge-1', { name: 'edge-1', host: '10.0.0.6', port: 2222 });
    expect((await store.get('edge-1')).port).toBe(2222);
    await store.remove('edge-1');
    expect(await store.list()).toEqual([]);
  });

  it('refuses duplicates and unknown names with clear errors', async () => {
    const store = new NodeStore(tmp());
    await store.add({ name: 'a', host: 'h' });
    await expect(store.add({ name: 'a', host: 'h2' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(store.get('zz')).rejects.toBeInstanceOf(HoldfastError);
    await expect(store.remove('zz')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('rejects invalid input before writing anything', async () => {
    const home = tmp();
    const store = new NodeStore(home);
    await expect(store.add({ name: 'bad name; rm -rf /', host: 'h' })).rejects.toBeTruthy();
    await expect(store.add({ name: 'ok', host: 'h', socket: 'relative/path' })).rejects.toBeTruthy();
    expect(await fs.readdir(home)).toEqual([]);
  });

  it('never rewrites a file it cannot read', async () => {
    const home = tmp();
    await fs.writeFile(path.join(home, 'nodes.json'), '{not json');
    const store = new NodeStore(home);
    await expect(store.add({ name: 'a', host: 'h' })).rejects.toMatchObject({ code: 'INTERNAL' });
    expect(await fs.readFile(path.join(home, 'nodes.json'), 'utf8')).toBe('{not json');
  });

  it('refuses a file naming one node twice, naming the file and the name, and changes nothing', async () => {
    const home = tmp();
    const file = path.join(home, 'nodes.json');
    const text = JSON.stringify({ version: 1, nodes: [{ name: 'edge-1', host: 'a' }, { name: 'edge-2', host: 'b' }, { name: 'edge-1', host: 'c' }] });
    await fs.writeFile(file, text);
    const store = new NodeStore(home);
    // One call at a time: a call started before the last is awaited could reject unhandled.
    const attempts = [() => store.list(), () => store.get('edge-1'), () => store.remove('edge-1'), () => store.update('edge-1', { name: 'edge-1', host: 'd' })];
    for (const attempt of attempts) {
      const err = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HoldfastError);
      expect((err as HoldfastError).message).toContain(file);
      expect((err as HoldfastError).message).toContain('"edge-1"');
      expect((err as HoldfastError).hint).toMatch(/remove or rename one/);
    }
    expect(await fs.readFile(file, 'utf8')).toBe(text);
  });

  it('names the file when nodes.json cannot be read', async () => {
    const home = tmp();
    const file = path.join(home, 'nodes.json');
    await fs.mkdir(file);
    const err = await new NodeStore(home).list().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(HoldfastError);
    expect((err as HoldfastError).message).toBe(`cannot read ${file}: it is a directory`);
    expect((err as HoldfastError).hint).toBeTruthy();
  });
});
