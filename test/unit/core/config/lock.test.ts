// One writer at a time for the files in $HOLDFAST_HOME (issue #11, item 3): nodes.json changes
// made at once by separate stores (the CLI and the app each have their own) all land or fail
// clearly, and the audit log's appends take the same lock.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../../../src/core/audit/log';
import { withFileLock } from '../../../../src/core/config/lock';
import { NodeStore } from '../../../../src/core/config/nodes';
import { HoldfastError } from '../../../../src/core/errors';

const home = () => mkdtempSync(path.join(os.tmpdir(), 'hf-lock-'));
const node = (name: string) => ({ name, host: `${name}.example`, knownHosts: '/tmp/kh' });

describe('NodeStore under concurrency', () => {
  it('10 adds of distinct names at once, each through its own store: all 10 land', async () => {
    const h = home();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => new NodeStore(h).add(node(`n${i}`))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    expect((await new NodeStore(h).list()).map((n) => n.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `n${i}`).sort());
  });

  it('5 adds of the same name at once: exactly one succeeds, the others get CONFLICT', async () => {
    const h = home();
    const results = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => new NodeStore(h).add({ ...node('same'), port: 2200 + i })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(ok).toHaveLength(1);
    expect(failed.map((r) => (r.reason as HoldfastError).code)).toEqual(['CONFLICT', 'CONFLICT', 'CONFLICT', 'CONFLICT']);
    const stored = await new NodeStore(h).list();
    expect(stored).toHaveLength(1);
    // The one stored is the one that was told it succeeded.
    expect(stored[0]!.port).toBe((ok[0] as PromiseFulfilledResult<{ port: number }>).value.port);
  });

  it('adds, edits and removes of different nodes interleaved: none undoes another', async () => {
    const h = home();
    await new NodeStore(h).addMany(['a', 'b', 'c', 'd'].map(node));
    await Promise.all([
      new NodeStore(h).update('a', { ...node('a'), group: 'site-1' }),
      new NodeStore(h).remove('b'),
      new NodeStore(h).add(node('e')),
      new NodeStore(h).update('c', { ...node('c'), port: 2222 }),
      new NodeStore(h).addMany([node('f'), node('g')]),
    ]);
    const byName = new Map((await new NodeStore(h).list()).map((n) => [n.name, n]));
    expect([...byName.keys()].sort()).toEqual(['a', 'c', 'd', 'e', 'f', 'g']);
    expect(byName.get('a')!.group).toBe('site-1');
    expect(byName.get('c')!.port).toBe(2222);
  });

  it('an edit based on a copy someone changed meanwhile is refused (CONFLICT), saving nothing', async () => {
    const h = home();
    const s = new NodeStore(h);
    await s.add(node('a'));
    const before = await s.get('a');
    await new NodeStore(h).update('a', { ...node('a'), group: 'theirs' });
    const err = await s.update('a', { ...before, port: 2022 }, { expect: before }).catch((e: unknown) => e as HoldfastError);
    expect((err as HoldfastError).code).toBe('CONFLICT');
    expect(await s.get('a')).toMatchObject({ group: 'theirs', port: 22 });
  });
});

describe('withFileLock', () => {
  it('takes over a lock left by a process that died (not refreshed for 10 s)', async () => {
    const h = home();
    const file = path.join(h, 'nodes.json');
    mkdirSync(`${file}.lock`);
    const old = new Date(Date.now() - 60_000);
    utimesSync(`${file}.lock`, old, old);
    await expect(withFileLock(file, async () => 'ran')).resolves.toBe('ran');
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('gives up on a lock another process holds with CONFLICT naming the lock, running nothing', async () => {
    const h = home();
    const file = path.join(h, 'nodes.json');
    mkdirSync(`${file}.lock`); // fresh: a live holder
    let ran = false;
    const err = await withFileLock(file, async () => void (ran = true), { waitMs: 300 }).catch((e: unknown) => e as HoldfastError);
    expect(ran).toBe(false);
    expect((err as HoldfastError).code).toBe('CONFLICT');
    expect((err as HoldfastError).hint).toContain(`${file}.lock`);
    expect(existsSync(`${file}.lock`)).toBe(true);
  });
});

describe('AuditLog.append', () => {
  it('waits while another writer holds the log: nothing is appended until the lock is released', async () => {
    const h = home();
    const log = new AuditLog(h);
    await log.append({ node: 'n', action: 'pin', changes: [] });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const taken = new Promise<void>((r) => (holding = r));
    // Another writer (another AuditLog, as another process would have) holds the file's lock.
    const other = withFileLock(log.file, async () => {
      holding();
      await held;
    });
    await taken;
    const appended = new AuditLog(h).append({ node: 'n', action: 'unpin', changes: [] });
    let done = false;
    void appended.then(() => (done = true));
    // Give the append every chance to run (file I/O rounds) while the lock is held.
    for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 5));
    expect(done).toBe(false);
    expect(readFileSync(log.file, 'utf8').trim().split('\n')).toHaveLength(1);
    release();
    await other;
    await appended;
    expect((await log.list()).map((e) => e.action)).toEqual(['unpin', 'pin']);
  });

  it('40 appends at once from separate logs: every line whole, none lost', async () => {
    const h = home();
    const big = 'x'.repeat(100_000); // far over PIPE_BUF: one write is not atomic by itself everywhere
    await Promise.all(Array.from({ length: 40 }, (_, i) => new AuditLog(h).append({ node: `n${i}`, action: 'pin', changes: [], note: big })));
    const lines = readFileSync(path.join(h, 'audit.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(40);
    expect(new Set(lines.map((l) => (JSON.parse(l) as { node: string }).node)).size).toBe(40);
  });
});
