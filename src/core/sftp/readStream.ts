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
  const inflight = opts.inflight ?? 16;
  const end = opts.size;
  let handle: Buffer | null = null;
  let nextPos = opts.start ?? 0;
  const slots: Slot[] = [];
  let pending = 0;
  let failed = false;
  let closing = false;

  const closeHandle = (cb: (err?: Error | null) => void) => {
    if (!handle || closing) return cb(null);
    closing = true;
    const h = handle;
    handle = null;
    sftp.close(h, () => cb(null));
  };

  const stream = new Readable({
    highWaterMark: chunk * 4,
    read() {
      pump();
    },
    destroy(err, cb) {
      failed = true;
      closeHandle(() => cb(err));
    },
  });

  function issue(slot: Slot) {
    if (!handle || failed) return;
    pending++;
    sftp.read(handle, slot.buf, slot.filled, slot.len - slot.filled, slot.pos + slot.filled, (err, bytesRead) => {
      pending--;
      if (failed) return;
      if (err) {
        failed = true;
        stream.destroy(new Error(`reading ${path} over SFTP failed at byte ${slot.pos + slot.filled}: ${err.message}`));
        return;
      }
      if (bytesRead === 0) {
        // EOF before the size we were told: the file shrank.
        failed = true;
        stream.destroy(new Error(`${path} ended at byte ${slot.pos + slot.filled}, before its size of ${end} bytes (was it changed while being read?)`));
        return;
      }
      slot.filled += bytesRead;
      if (slot.filled < slot.len) issue(slot); // short read: ask for the rest
      else slot.done = true;
      flush();
    });
  }

  function flush() {
    let pushedAll = true;
    while (slots.length && slots[0]!.done) {
      const s = slots.shift()!;
      pushedAll = stream.push(s.buf);
      if (!pushedAll) break;
    }
    if (slots.length === 0 && nextPos >= end && !failed) {
      closeHandle(() => stream.push(null));
      return;
    }
    if (pushedAll) pump();
  }

  function pump() {
    if (!handle || failed) return;
    while (slots.length < inflight && nextPos < end) {
      const len = Math.min(chunk, end - nextPos);
      const slot: Slot = { pos: nextPos, len, buf: Buffer.allocUnsafe(len), filled: 0, done: false };
      nextPos += len;
      slots.push(slot);
      issue(slot);
    }
    if (slots.length === 0 && nextPos >= end && pending === 0) closeHandle(() => stream.push(null));
  }

  sftp.open(path, 'r', (err, h) => {
    if (err) {
      failed = true;
      stream.destroy(new Error(`cannot open ${path} over SFTP: ${err.message}`));
      return;
    }
    handle = h;
    pump();
  });
  return stream;
}
