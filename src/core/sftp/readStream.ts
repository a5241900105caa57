// A pipelined SFTP reader. ssh2's createReadStream keeps one request in flight, so every
// chunk costs a round trip; this keeps several reads outstanding (like OpenSSH's sftp) and
// emits the bytes in order. Chunks stay under OpenSSH's 261,120-byte read/write limit.
import { Readable } from 'node:stream';
import type { SFTPWrapper } from 'ssh2';

export const SFTP_CHUNK = 255 * 1024;

interface Slot {
  pos: number;
  len: number;
  buf: Buffer;
  filled: number;
  done: boolean;
}

export interface SftpReadOptions {
  /** Bytes to read (the file's size when the stream is created). */
  size: number;
  start?: number;
  chunk?: number;
  inflight?: number;
}

export function sftpReadStream(sftp: SFTPWrapper, path: string, opts: SftpReadOptions): Readable {
  const chunk = Math.min(opts.chunk ?? SFTP_CHUNK, SFTP_CHUNK);
  const reads = new ReadPipeline(sftp, path, { chunk, inflight: opts.inflight ?? 16, end: opts.size, start: opts.start ?? 0 });
  reads.open();
  return reads.stream;
}

/** Why a read's answer ends the stream (an error, or EOF before the size we were told); null if it does not. */
function readFailure(path: string, at: number, end: number, err: Error | null | undefined, bytesRead: number): Error | null {
  if (err) return new Error(`reading ${path} over SFTP failed at byte ${at}: ${err.message}`);
  // EOF before the size we were told: the file shrank.
  if (bytesRead === 0) return new Error(`${path} ended at byte ${at}, before its size of ${end} bytes (was it changed while being read?)`);
  return null;
}

/** The reads of one stream: at most `inflight` outstanding, their bytes pushed in file order. */
class ReadPipeline {
  readonly stream: Readable;
  private handle: Buffer | null = null;
  private nextPos: number;
  private readonly slots: Slot[] = [];
  private pending = 0;
  private failed = false;
  private closing = false;

  constructor(
    private readonly sftp: SFTPWrapper,
    private readonly path: string,
    private readonly opts: { chunk: number; inflight: number; end: number; start: number },
  ) {
    this.nextPos = opts.start;
    this.stream = new Readable({
      highWaterMark: opts.chunk * 4,
      read: () => this.pump(),
      destroy: (err, cb) => {
        this.failed = true;
        this.closeHandle(() => cb(err));
      },
    });
  }

  open(): void {
    this.sftp.open(this.path, 'r', (err, h) => {
      if (err) {
        this.failed = true;
        this.stream.destroy(new Error(`cannot open ${this.path} over SFTP: ${err.message}`));
        return;
      }
      this.handle = h;
      this.pump();
    });
  }

  private closeHandle(cb: (err?: Error | null) => void): void {
    if (!this.handle || this.closing) return cb(null);
    this.closing = true;
    const h = this.handle;
    this.handle = null;
    this.sftp.close(h, () => cb(null));
  }

  private issue(slot: Slot): void {
    if (!this.handle || this.failed) return;
    this.pending++;
    this.sftp.read(this.handle, slot.buf, slot.filled, slot.len - slot.filled, slot.pos + slot.filled, (err, bytesRead) => {
      this.pending--;
      if (this.failed) return;
      const failure = readFailure(this.path, slot.pos + slot.filled, this.opts.end, err, bytesRead);
      if (failure) {
        this.failed = true;
        this.stream.destroy(failure);
        return;
      }
      slot.filled += bytesRead;
      if (slot.filled < slot.len) this.issue(slot); // short read: ask for the rest
      else slot.done = true;
      this.flush();
    });
  }

  /** Pushes the finished slots at the head, in order; ends the stream after the last. */
  private flush(): void {
    let pushedAll = true;
    while (this.slots.length && this.slots[0]!.done) {
      const s = this.slots.shift()!;
      pushedAll = this.stream.push(s.buf);
      if (!pushedAll) break;
    }
    if (this.slots.length === 0 && this.nextPos >= this.opts.end && !this.failed) {
      this.closeHandle(() => this.stream.push(null));
      return;
    }
    if (pushedAll) this.pump();
  }

  /** Issues reads until `inflight` are outstanding or the end is reached. */
  private pump(): void {
    if (!this.handle || this.failed) return;
    const { chunk, inflight, end } = this.opts;
    while (this.slots.length < inflight && this.nextPos < end) {
      const len = Math.min(chunk, end - this.nextPos);
      const slot: Slot = { pos: this.nextPos, len, buf: Buffer.allocUnsafe(len), filled: 0, done: false };
      this.nextPos += len;
      this.slots.push(slot);
      this.issue(slot);
    }
    if (this.slots.length === 0 && this.nextPos >= end && this.pending === 0) this.closeHandle(() => this.stream.push(null));
  }
}
