// AuditLog.durablePins over a real audit file: entries written by AuditLog.append, read once
// and then only what was appended since; a torn last line waits for its end.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../../src/core/audit/log';
import type { LabelChange } from '../../../../src/shared/domain/pins';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';
const ID = 'sha256:' + 'a'.repeat(64);
const pinChange = (ref: string): LabelChange => ({ ref, imageId: ID, before: { [CRI]: 'pinned', [K3S]: 'pinned' }, after: { [CRI]: 'pinned' } });
const unpinChange = (ref: string): LabelChange => ({ ref, imageId: ID, before: { [CRI]: 'pinned' }, after: {} });

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('AuditLog.durablePins', () => {
  it('follows pins and unpins as they are appended, per node', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-'));
    const log = new AuditLog(dir);
    expect(await log.durablePins('n1')).toEqual([]); // no log yet

    const first = await log.append({ node: 'n1', action: 'pin', changes: [pinChange('app:1'), pinChange('app@sha256:' + 'd'.repeat(64))] });
    await log.append({ node: 'n2', action: 'pin', changes: [pinChange('other:1')] });
    await log.append({ node: 'n1', action: 'rm-archive', archive: { path: 'a.tar', size: 1, sha256: 'x' } });
    expect((await log.durablePins('n1')).map((p) => [p.ref, p.pinnedAt, p.pinnedBy])).toEqual([
      ['app:1', first.time, first.user],
      ['app@sha256:' + 'd'.repeat(64), first.time, first.user],
    ]);

    await log.append({ node: 'n1', action: 'unpin', changes: [unpinChange('app:1')] });
    expect((await log.durablePins('n1')).map((p) => p.ref)).toEqual(['app@sha256:' + 'd'.repeat(64)]);
    expect((await log.durablePins('n2')).map((p) => p.ref)).toEqual(['other:1']);
  });

  it('leaves a torn last line for later and starts over when the log is replaced', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-'));
    const log = new AuditLog(dir);
    await log.append({ node: 'n1', action: 'pin', changes: [pinChange('app:1')] });
    const line = JSON.stringify({ time: '2026-03-02T00:00:00.000Z', user: 'u', node: 'n1', action: 'pin', changes: [pinChange('late:1')] });
    appendFileSync(log.file, line.slice(0, 40)); // a writer caught mid-line
    expect((await log.durablePins('n1')).map((p) => p.ref)).toEqual(['app:1']);
    appendFileSync(log.file, line.slice(40) + '\n');
    expect((await log.durablePins('n1')).map((p) => p.ref)).toEqual(['app:1', 'late:1']);

    // A new, shorter log (rotated by hand): read again from its start.
    rmSync(log.file);
    writeFileSync(log.file, JSON.stringify({ time: '2026-03-03T00:00:00.000Z', user: 'u', node: 'n1', action: 'pin', changes: [pinChange('x:1')] }) + '\n');
    expect((await log.durablePins('n1')).map((p) => p.ref)).toEqual(['x:1']);
  });

  it('reads in small chunks across line and UTF-8 boundaries, to the same answer', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-'));
    const writer = new AuditLog(dir);
    for (let i = 0; i < 12; i++) {
      await writer.append({ node: 'n1', user: `técnico-${'é'.repeat(i)}@sítio`, action: i % 4 === 3 ? 'unpin' : 'pin', changes: [i % 4 === 3 ? unpinChange(`r${i - 1}:1`) : pinChange(`r${i}:1`)] });
    }
    const whole = await new AuditLog(dir).durablePins('n1');
    expect(whole.map((p) => p.ref)).toEqual(['r0:1', 'r1:1', 'r4:1', 'r5:1', 'r8:1', 'r9:1']);
    for (const size of [1, 7, 64, 333]) {
      expect(await new AuditLog(dir, { readChunkBytes: size }).durablePins('n1'), `chunks of ${size} bytes`).toEqual(whole);
    }
    expect(whole[5]!.pinnedBy).toBe(`técnico-${'é'.repeat(9)}@sítio`);
  });
});
