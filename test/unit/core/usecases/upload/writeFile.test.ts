import { createHash, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, openSync, closeSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionSftp } from '../../../../../src/core/node/session';
import { sftpWriteFromFile, SftpWriteError } from '../../../../../src/core/usecases/upload/writeFile';

const dir = mkdtempSync(path.join(os.tmpdir(), 'hf-wf-'));
const data = randomBytes(3 * 1024 * 1024 + 12345);
const file = path.join(dir, 'f');
writeFileSync(file, data);
const fd = openSync(file, 'r');
afterAll(() => closeSync(fd));

/** A fake SFTP server: copies each write into `out` and answers in a shuffled order. */
function fakeSftp(opts: { failAt?: number; closeAfter?: number } = {}) {
  const ee = new EventEmitter();
  const out = Buffer.alloc(data.length);
  const queue: (() => void)[] = [];
  let maxPending = 0;
  let writes = 0;
  const write: SessionSftp['write'] = (_h, buf, off, len, pos, cb) => {
    writes++;
    if (opts.closeAfter !== undefined && writes > opts.closeAfter) return; // dropped: never answered
    buf.copy(out, pos, off, off + len);
    queue.push(() => cb(opts.failAt !== undefined && pos === opts.failAt ? new Error('Failure') : undefined));
    maxPending = Math.max(maxPending, queue.length);
    if (opts.closeAfter !== undefined && writes === opts.closeAfter) setTimeout(() => ee.emit('close'), 5);
    setImmediate(() => {
      // answer a random pending request
      const i = Math.floor(Math.random() * queue.length);
      const [f] = queue.splice(i, 1);
      f?.();
    });
  };
  return { sftp: Object.assign(ee, { write }), out, stats: () => ({ maxPending }) };
}

describe('sftpWriteFromFile', () => {
  it('writes every byte once, hashes in file order, and keeps at most `inflight` writes out', async () => {
    const f = fakeSftp();
    const hash = createHash('sha256');
    const acks: number[] = [];
    const r = await sftpWriteFromFile(f.sftp, Buffer.from('h'), '/x', { fd, start: 0, end: data.length, hash, inflight: 4, chunk: 64 * 1024, onAcked: (n) => acks.push(n) });
    expect(r).toEqual({ outcome: 'done', ackedTo: data.length });
    expect(f.out.equals(data)).toBe(true);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(data).digest('hex'));
    expect(f.stats().maxPending).toBeLessThanOrEqual(4);
    expect(acks).toEqual([...acks].sort((a, b) => a - b)); // the acknowledged prefix only grows
  });

  it('resumes at an offset', async () => {
    const f = fakeSftp();
    const start = 1_000_000;
    const hash = createHash('sha256');
    await sftpWriteFromFile(f.sftp, Buffer.from('h'), '/x', { fd, start, end: data.length, hash });
    expect(f.out.subarray(start).equals(data.subarray(start))).toBe(true);
    expect(f.out.subarray(0, start).every((b) => b === 0)).toBe(true);
  });

  it('stops on abort with nothing left pending', async () => {
    const f = fakeSftp();
    const ac = new AbortController();
    const r = await sftpWriteFromFile(f.sftp, Buffer.from('h'), '/x', {
      fd, start: 0, end: data.length, hash: createHash('sha256'), chunk: 32 * 1024,
      signal: ac.signal, onAcked: (n) => n > 500_000 && ac.abort(),
    });
    expect(r.outcome).toBe('aborted');
    expect(r.ackedTo).toBeGreaterThan(500_000);
    expect(r.ackedTo).toBeLessThan(data.length);
  });

  it('reports a remote failure with the acknowledged prefix', async () => {
    const f = fakeSftp({ failAt: 255 * 1024 * 3 });
    const err = await sftpWriteFromFile(f.sftp, Buffer.from('h'), '/x', { fd, start: 0, end: data.length, hash: createHash('sha256') }).catch((e) => e);
    expect(err).toBeInstanceOf(SftpWriteError);
    expect(err.kind).toBe('remote');
    expect(err.ackedTo).toBeLessThanOrEqual(255 * 1024 * 3);
  });

  it('does not hang when the channel closes with writes unanswered', async () => {
    const f = fakeSftp({ closeAfter: 5 });
    const err = await sftpWriteFromFile(f.sftp, Buffer.from('h'), '/x', { fd, start: 0, end: data.length, hash: createHash('sha256'), chunk: 64 * 1024 }).catch((e) => e);
    expect(err).toBeInstanceOf(SftpWriteError);
    expect(err.kind).toBe('closed');
  });
});
