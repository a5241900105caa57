// The audit log read line by line and bounded (#51): a log Holdfast cannot read is an error that
// names it and says what to do, never "no pins" (lost-pin detection would then say nothing is
// lost); a line no Holdfast writes is refused at audit.lineBytes instead of filling memory; the
// log shows only its newest audit.listBytes of entries and says how many it left out.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, truncateSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../../src/core/audit/log';
import { lostPinsFrom } from '../../../../src/core/audit/lostPins';
import { HoldfastError } from '../../../../src/core/errors';
import { limit } from '../../../../src/core/limits';
import type { LabelChange } from '../../../../src/shared/domain/pins';

const ID = 'sha256:' + 'a'.repeat(64);
const pinChange = (ref: string): LabelChange => ({ ref, imageId: ID, before: { 'io.cattle.k3s.pinned': 'pinned' }, after: { 'io.cri-containerd.pinned': 'pinned' } });

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const failure = (attempt: () => Promise<unknown>) =>
  attempt().then(
    () => null,
    (e: unknown) => e,
  );

async function pinned(log: AuditLog, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await log.append({ node: 'n1', action: 'pin', changes: [pinChange(`app-${i}:1`)] });
}

describe('an audit log that cannot be read', () => {
  it('a directory in its place: every read is an error naming the file, and no lost pin is reported as none', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-read-'));
    const log = new AuditLog(dir);
    mkdirSync(log.file);
    for (const attempt of [() => log.durablePins('n1'), () => log.list(), () => lostPinsFrom('n1', log, { refs: [] })]) {
      const err = await failure(attempt);
      expect(err).toBeInstanceOf(HoldfastError);
      expect((err as HoldfastError).message).toBe(`cannot read the audit log ${log.file}: it is a directory`);
      expect((err as HoldfastError).hint).toMatch(/^Move it aside/);
    }
  });

  it('a FIFO or a link to /dev/full in its place: refused as not a regular file, never waited on or read', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-read-'));
    const log = new AuditLog(dir);
    for (const make of [() => execFileSync('mkfifo', [log.file]), () => symlinkSync('/dev/full', log.file)]) {
      make();
      for (const attempt of [() => log.durablePins('n1'), () => log.list()]) {
        const err = await failure(attempt);
        expect((err as HoldfastError).message).toBe(`cannot read the audit log ${log.file}: it is not a regular file`);
      }
      rmSync(log.file);
    }
  });

  it('pins then a sparse 700 MiB line of NUL bytes: refused at audit.lineBytes, not read into memory', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-read-'));
    const log = new AuditLog(dir);
    await pinned(log, 83);
    const pinsEnd = statSync(log.file).size;
    truncateSync(log.file, 700 * 1024 * 1024); // a hole: no disk used, and no '\n' in it
    for (const attempt of [() => log.durablePins('n1'), () => log.list('n1'), () => lostPinsFrom('n1', log, { refs: [] })]) {
      const err = await failure(attempt);
      expect(err).toBeInstanceOf(HoldfastError);
      expect((err as HoldfastError).message).toBe(
        `cannot read the audit log ${log.file}: its line at byte ${pinsEnd.toLocaleString('en-US')} is over the limit audit.lineBytes (16 MiB)`,
      );
    }
    expect(limit('audit.lineBytes')).toBe(16 * 1024 * 1024);
  });

  it('the line a later append completes is read whole; only a line over the bound is refused', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-read-'));
    const log = new AuditLog(dir, { lineBytes: 400, readChunkBytes: 64 });
    await pinned(log, 3);
    expect((await log.durablePins('n1')).map((p) => p.ref)).toEqual(['app-0:1', 'app-1:1', 'app-2:1']);
    appendFileSync(log.file, `{"node":"n1","action":"pin","note":"${'x'.repeat(500)}"}\n`);
    await expect(log.durablePins('n1')).rejects.toThrow(/its line at byte [\d,]+ is over the limit audit\.lineBytes/);
  });
});

describe('a long audit log', () => {
  it('shows only its newest entries, newest first, within audit.listBytes, and counts the others', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'hf-audit-read-'));
    const file = new AuditLog(dir).file;
    const line = (i: number) => JSON.stringify({ time: `t${i}`, user: 'u', node: i % 3 === 0 ? 'n2' : 'n1', action: 'pin', changes: [pinChange(`app-${i}:1`)] }) + '\n';
    appendFileSync(file, Array.from({ length: 3000 }, (_, i) => line(i)).join(''));
    const log = new AuditLog(dir, { listBytes: 100 * line(2999).length, readChunkBytes: 1000 });
    const all = await log.recent();
    expect(all.entries.length + all.omitted).toBe(3000);
    expect(all.entries.length).toBeGreaterThanOrEqual(95);
    expect(all.entries.length).toBeLessThanOrEqual(110);
    expect(all.entries.map((e) => e.time)).toEqual(Array.from({ length: all.entries.length }, (_, k) => `t${2999 - k}`));
    const n2 = await log.recent('n2');
    expect(n2.entries.length + n2.omitted).toBe(1000);
    expect(n2.entries[0]!.time).toBe('t2997');
    expect(n2.entries.every((e) => e.node === 'n2')).toBe(true);
    // Everything fits: nothing left out, in the order list() has always given.
    expect(await new AuditLog(dir).recent()).toEqual({ entries: (await new AuditLog(dir).list()), omitted: 0 });
    expect((await new AuditLog(dir).list()).length).toBe(3000);
  });
});
