// Which images are versions of one another and which a site keeps for rollback (shared/imageVersions).
import { describe, expect, it } from 'vitest';
import { compareVersions, parseVersion, rollbackKeeps, versionsNewestFirst } from '../../../src/shared/imageVersions';

const img = (key: string, refs: string[], inUse = false, configCreated: string | null = null) => ({ key, refs, inUse, configCreated, createdAt: null });

describe('versions', () => {
  it('orders numerically, a release above its suffixed builds, and reads non-versions as none', () => {
    const order = ['1.10.0', '1.9.3', 'v1.9.3-rc1', '1.9', '1.2.3-build20241101', '1.2.3-build20241008'];
    const shuffled = [...order].reverse();
    expect(shuffled.sort((a, b) => compareVersions(parseVersion(b)!, parseVersion(a)!))).toEqual(order);
    expect(parseVersion('latest')).toBeNull();
    expect(parseVersion('stable-alpine')).toBeNull();
  });

  it('orders by tags only when every image of the repository has a version, else by build time', () => {
    const a = img('a', ['r/app:1.10'], false, '2024-01-01T00:00:00Z');
    const b = img('b', ['r/app:1.9'], false, '2024-06-01T00:00:00Z');
    expect(versionsNewestFirst([a, b], 'r/app').map((i) => i.key)).toEqual(['a', 'b']);
    const c = img('c', ['r/app:latest'], false, '2024-03-01T00:00:00Z');
    expect(versionsNewestFirst([a, b, c], 'r/app').map((i) => i.key)).toEqual(['b', 'c', 'a']);
  });
});

describe('rollbackKeeps', () => {
  const repo = 'registry.lan/acme/agent';
  const v = (t: string, inUse = false) => img(t, [`${repo}:${t}`, `${repo}@sha256:${t.replace(/\D/g, '').padEnd(64, '0')}`], inUse);

  it('keeps the newest N versions of a repository in use, and nothing of repositories no container uses', () => {
    const images = [v('2.4.1', true), v('2.4.0'), v('2.3.2'), v('2.2.0'), img('redis', ['docker.io/library/redis:7.2'])];
    const keeps = rollbackKeeps(images, 2);
    expect([...keeps.keys()]).toEqual(['2.4.0']);
    expect(keeps.get('2.4.0')!.why).toBe('newest');
    expect([...rollbackKeeps(images, 3).keys()].sort()).toEqual(['2.3.2', '2.4.0']);
    expect([...rollbackKeeps(images, 1).keys()]).toEqual([]);
  });

  it('keeps the version below the one in use even when a newer, unused version is present', () => {
    const images = [v('3.0.0'), v('2.4.1', true), v('2.4.0'), v('2.3.2')];
    const keeps = rollbackKeeps(images, 2);
    expect(keeps.get('3.0.0')?.why).toBe('newest');
    expect(keeps.get('2.4.0')).toMatchObject({ why: 'rollback', below: `${repo}:2.4.1` });
    expect(keeps.has('2.3.2')).toBe(false);
  });
});
