// A pipelined SFTP writer fed from a local file — the mirror of sftp/readStream.ts. ssh2's
// createWriteStream keeps one write in flight (every chunk costs a round trip); this keeps
// several outstanding at increasing offsets, like OpenSSH's sftp, reading the local file in order
// into a fixed pool of buffers and updating a hash with each chunk as it is read (so the local
// SHA-256 costs no second pass). Memory is bounded by inflight × chunk, whatever the file size.
// Chunks stay under OpenSSH's 261,120-byte write limit, so ssh2 never splits a request.
import fs from 'node:fs';
import type { Hash } from 'node:crypto';
import type { SessionSftp } from '../../node/session';
import { SFTP_CHUNK } from '../../sftp/readStream';
import { isChannelEndError } from '../../ssh/sftpGuard';
import { HoldfastError } from '../../errors';

export interface SftpWriteOptions {
  /** Open local file to read from. */
  fd: number;
  /** First byte to send; the same offset locally and remotely. */
  start: number;
  /** Local file size: bytes [start, end) are sent. */
  end: number;
  /** Updated, in file order, with every chunk read. */
  hash: Hash;
  chunk?: number;
  inflight?: number;
  signal?: AbortSignal;
  /** Called with the end of the prefix the server has acknowledged so far. */
  onAcked?: (ackedTo: number) => void;
}

export interface SftpWriteResult {
  /** 'aborted': the signal fired; no write was issued after it and none is left pending. */
  outcome: 'done' | 'aborted';
  /** Every byte below this offset was written and acknowledged. */
  ackedTo: number;
}

/** A write-path failure, with the acknowledged prefix at that moment (for "resume from byte N"). */
export class SftpWriteError extends Error {
  constructor(
    message: string,
    readonly ackedTo: number,
    readonly kind: 'remote' | 'local' | 'closed',
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SftpWriteError';
  }
}

interface Slot {
  pos: number;
  len: number;
  buf: Buffer;
}

export function sftpWriteFromFile(sftp: Pick<SessionSftp, 'write' | 'once' | 'removeListener'>, handle: Buffer, remotePath: string, opts: SftpWriteOptions): Promise<SftpWriteResult> {
  const chunk = Math.min(opts.chunk ?? SFTP_CHUNK, SFTP_CHUNK);
  const inflight = Math.max(1, opts.inflight ?? 16);
  const end = opts.end;
  const free: Buffer[] = [];
  let allocated = 0;
  let nextPos = opts.start; // next local byte to read
  let ackedTo = opts.start;
  const acked = new Map<number, number>(); // pos → end, for acks that arrive out of order
  let pending = 0; // sftp writes issued, not yet answered
  let reading = false;
  let stopping = false; // aborted: issue nothing more, settle once pending drains
  let settled = false;

  return new Promise<SftpWriteResult>((resolve, reject) => {
    const cleanup = () => {
      sftp.removeListener('close', onClose);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    const fail = (err: SftpWriteError) => {
      if (settled) return;
      settled = true;
      stopping = true;
      cleanup();
      reject(err);
    };
    const finishIfIdle = () => {
      if (settled || pending > 0 || reading) return;
      if (stopping) {
        settled = true;
        cleanup();
        resolve({ outcome: 'aborted', ackedTo });
      } else if (ackedTo >= end) {
        settled = true;
        cleanup();
        resolve({ outcome: 'done', ackedTo });
      }
    };
    // On a dropped connection ssh2 fails the pending requests, but a write issued on a closed
    // channel is silently dropped and never answered: stop at the channel's close.
    const onClose = () => fail(new SftpWriteError(`the SFTP channel closed while writing ${remotePath}`, ackedTo, 'closed'));
    const onAbort = () => {
      stopping = true;
      finishIfIdle();
    };
    sftp.once('close', onClose);
    if (opts.signal) {
      if (opts.signal.aborted) stopping = true;
      else opts.signal.addEventListener('abort', onAbort, { once: true });
    }

    function takeBuffer(): Buffer | null {
      const b = free.pop();
      if (b) return b;
      if (allocated < inflight) {
        allocated++;
        return Buffer.allocUnsafe(chunk);
      }
      return null;
    }

    function onWritten(slot: Slot, err: Error | undefined | null) {
      pending--;
      free.push(slot.buf);
      if (settled) return;
      if (err) {
        // The channel ended under the write (a cut link, the node's sftp-server gone): a dropped
        // connection, not the node refusing the bytes.
        const kind = isChannelEndError(err) || (err instanceof HoldfastError && err.code === 'UNREACHABLE') ? 'closed' : 'remote';
        fail(new SftpWriteError(`writing ${remotePath} over SFTP failed at byte ${slot.pos}: ${err.message}`, ackedTo, kind, { cause: err }));
        return;
      }
      acked.set(slot.pos, slot.pos + slot.len);
      let advanced = false;
      for (let e = acked.get(ackedTo); e !== undefined; e = acked.get(ackedTo)) {
        acked.delete(ackedTo);
        ackedTo = e;
        advanced = true;
      }
      if (advanced) opts.onAcked?.(ackedTo);
      pump();
      finishIfIdle();
    }

    function issue(slot: Slot) {
      pending++;
      try {
        sftp.write(handle, slot.buf, 0, slot.len, slot.pos, (err) => onWritten(slot, err));
      } catch (err) {
        // ssh2 throws synchronously on bad arguments only; treat it as a remote failure
        onWritten(slot, err as Error);
      }
    }

    // One local read at a time, strictly in file order: the hash must see the bytes in order.
    function pump() {
      if (settled || stopping || reading || nextPos >= end) return;
      const buf = takeBuffer();
      if (!buf) return; // every buffer is in flight; an ack will call pump again
      const pos = nextPos;
      const len = Math.min(chunk, end - pos);
      reading = true;
      readFully(opts.fd, buf, len, pos, (err) => {
        reading = false;
        if (settled) {
          free.push(buf);
          return;
        }
        if (err) {
          free.push(buf);
          fail(new SftpWriteError(err.message, ackedTo, 'local', { cause: err }));
          return;
        }
        opts.hash.update(len === buf.length ? buf : buf.subarray(0, len));
        if (stopping) {
          // Aborted while reading: this chunk is not sent (the hash object is abandoned anyway).
          free.push(buf);
          finishIfIdle();
          return;
        }
        nextPos = pos + len;
        issue({ pos, len, buf });
        pump();
      });
    }

    if (nextPos >= end) finishIfIdle();
    else pump();
    if (stopping) finishIfIdle();
  });
}

/** fs.read until `len` bytes are in `buf` (short reads happen); an early EOF is an error. */
function readFully(fd: number, buf: Buffer, len: number, pos: number, cb: (err: Error | null) => void, filled = 0): void {
  fs.read(fd, buf, filled, len - filled, pos + filled, (err, n) => {
    if (err) return cb(new Error(`reading the local file failed at byte ${pos + filled}: ${err.message}`));
    if (n === 0) return cb(new Error(`the local file ended at byte ${pos + filled}, before the size it had when the upload started (was it changed meanwhile?)`));
    if (filled + n < len) return readFully(fd, buf, len, pos, cb, filled + n);
    cb(null);
  });
}
