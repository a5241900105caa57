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

type WriteSftp = Pick<SessionSftp, 'write' | 'once' | 'removeListener'>;

export function sftpWriteFromFile(sftp: WriteSftp, handle: Buffer, remotePath: string, opts: SftpWriteOptions): Promise<SftpWriteResult> {
  return new Promise<SftpWriteResult>((resolve, reject) => new PipelinedWrite(sftp, handle, remotePath, opts, resolve, reject).start());
}

/** One write of bytes [start, end): the buffer pool, the acknowledged prefix and how it settles. */
class PipelinedWrite {
  private readonly chunk: number;
  private readonly inflight: number;
  private readonly free: Buffer[] = [];
  private allocated = 0;
  private nextPos: number; // next local byte to read
  private ackedTo: number;
  private readonly acked = new Map<number, number>(); // pos → end, for acks that arrive out of order
  private pending = 0; // sftp writes issued, not yet answered
  private reading = false;
  private stopping = false; // aborted: issue nothing more, settle once pending drains
  private settled = false;

  constructor(
    private readonly sftp: WriteSftp,
    private readonly handle: Buffer,
    private readonly remotePath: string,
    private readonly opts: SftpWriteOptions,
    private readonly resolve: (r: SftpWriteResult) => void,
    private readonly reject: (err: SftpWriteError) => void,
  ) {
    this.chunk = Math.min(opts.chunk ?? SFTP_CHUNK, SFTP_CHUNK);
    this.inflight = Math.max(1, opts.inflight ?? 16);
    this.nextPos = opts.start;
    this.ackedTo = opts.start;
  }

  start(): void {
    this.sftp.once('close', this.onClose);
    const { signal } = this.opts;
    if (signal) {
      if (signal.aborted) this.stopping = true;
      else signal.addEventListener('abort', this.onAbort, { once: true });
    }
    if (this.nextPos >= this.opts.end) this.finishIfIdle();
    else this.pump();
    if (this.stopping) this.finishIfIdle();
  }

  // On a dropped connection ssh2 fails the pending requests, but a write issued on a closed
  // channel is silently dropped and never answered: stop at the channel's close.
  private readonly onClose = () => this.fail(new SftpWriteError(`the SFTP channel closed while writing ${this.remotePath}`, this.ackedTo, 'closed'));

  private readonly onAbort = () => {
    this.stopping = true;
    this.finishIfIdle();
  };

  private cleanup(): void {
    this.sftp.removeListener('close', this.onClose);
    this.opts.signal?.removeEventListener('abort', this.onAbort);
  }

  private fail(err: SftpWriteError): void {
    if (this.settled) return;
    this.settled = true;
    this.stopping = true;
    this.cleanup();
    this.reject(err);
  }

  private finishIfIdle(): void {
    if (this.settled || this.pending > 0 || this.reading) return;
    if (this.stopping) {
      this.settled = true;
      this.cleanup();
      this.resolve({ outcome: 'aborted', ackedTo: this.ackedTo });
    } else if (this.ackedTo >= this.opts.end) {
      this.settled = true;
      this.cleanup();
      this.resolve({ outcome: 'done', ackedTo: this.ackedTo });
    }
  }

  private takeBuffer(): Buffer | null {
    const b = this.free.pop();
    if (b) return b;
    if (this.allocated < this.inflight) {
      this.allocated++;
      return Buffer.allocUnsafe(this.chunk);
    }
    return null;
  }

  private onWritten(slot: Slot, err: Error | undefined | null): void {
    this.pending--;
    this.free.push(slot.buf);
    if (this.settled) return;
    if (err) {
      // The channel ended under the write (a cut link, the node's sftp-server gone): a dropped
      // connection, not the node refusing the bytes.
      const kind = isChannelEndError(err) || (err instanceof HoldfastError && err.code === 'UNREACHABLE') ? 'closed' : 'remote';
      this.fail(new SftpWriteError(`writing ${this.remotePath} over SFTP failed at byte ${slot.pos}: ${err.message}`, this.ackedTo, kind, { cause: err }));
      return;
    }
    this.acked.set(slot.pos, slot.pos + slot.len);
    let advanced = false;
    for (let e = this.acked.get(this.ackedTo); e !== undefined; e = this.acked.get(this.ackedTo)) {
      this.acked.delete(this.ackedTo);
      this.ackedTo = e;
      advanced = true;
    }
    if (advanced) this.opts.onAcked?.(this.ackedTo);
    this.pump();
    this.finishIfIdle();
  }

  private issue(slot: Slot): void {
    this.pending++;
    try {
      this.sftp.write(this.handle, slot.buf, 0, slot.len, slot.pos, (err) => this.onWritten(slot, err));
    } catch (err) {
      // ssh2 throws synchronously on bad arguments only; treat it as a remote failure
      this.onWritten(slot, err as Error);
    }
  }

  // One local read at a time, strictly in file order: the hash must see the bytes in order.
  private pump(): void {
    if (this.settled || this.stopping || this.reading || this.nextPos >= this.opts.end) return;
    const buf = this.takeBuffer();
    if (!buf) return; // every buffer is in flight; an ack will call pump again
    const pos = this.nextPos;
    const len = Math.min(this.chunk, this.opts.end - pos);
    this.reading = true;
    readFully(this.opts.fd, buf, len, pos, (err) => this.onRead(buf, pos, len, err));
  }

  private onRead(buf: Buffer, pos: number, len: number, err: Error | null): void {
    this.reading = false;
    if (this.settled) {
      this.free.push(buf);
      return;
    }
    if (err) {
      this.free.push(buf);
      this.fail(new SftpWriteError(err.message, this.ackedTo, 'local', { cause: err }));
      return;
    }
    this.opts.hash.update(len === buf.length ? buf : buf.subarray(0, len));
    if (this.stopping) {
      // Aborted while reading: this chunk is not sent (the hash object is abandoned anyway).
      this.free.push(buf);
      this.finishIfIdle();
      return;
    }
    this.nextPos = pos + len;
    this.issue({ pos, len, buf });
    this.pump();
  }
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
