// Content.Write for one blob, as containerd's own client writes content remotely: one duplex
// stream per blob under a stable ref, so an interrupted write resumes where containerd's ingest
// stopped. STAT first (containerd opens or reopens the ingest, with the size and digest it will
// check at commit, and says how many bytes it already holds), then WRITE messages from that
// offset, pipelined (each gets a reply; we only count them), then COMMIT with total, expected
// digest and the blob's labels. An AlreadyExists answer means the blob is there already.
// Cancelling drops the stream and leaves the ingest for the next attempt to resume.
import * as grpc from '@grpc/grpc-js';
import { HoldfastError } from '../errors';

/** One blob to write: the bytes come from `read(offset)`, a stream from that offset to the end. */
export interface BlobWrite {
  ref: string;
  digest: string;
  size: number;
  labels: Record<string, string>;
  read(offset: number): AsyncIterable<Buffer>;
  /** Called with the bytes sent so far for this blob (the resumed offset included). */
  onProgress?: (sent: number) => void;
  signal?: AbortSignal;
}

/* oxlint-disable typescript/no-explicit-any -- the duplex call carries untyped messages (codecs at run time) */
export interface WriteTransport {
  openWrite(lease: string): grpc.ClientDuplexStream<any, any>;
  mapError(err: grpc.ServiceError, what: string): HoldfastError;
}

interface Reply {
  action: string;
  offset: number;
}

/** Bytes per WRITE message: well under containerd's 16 MiB receive limit. */
export const WRITE_CHUNK_BYTES = 1024 * 1024;

/** A write that hears nothing from containerd for this long is given up (resumable later). */
export const WRITE_IDLE_MS = 120_000;

/** The duplex call as the write uses it: send with back-pressure, wait for replies, end. */
interface WriteCall {
  send(msg: Record<string, unknown>): Promise<void>;
  /** Waits until `n` replies in all have come (or the call failed). */
  replyCount(n: number): Promise<Reply>;
  end(): void;
  cancel(): void;
  /** Stops the idle watch and the abort listener. */
  dispose(): void;
}

/**
 * Opens the call and turns its events into what the write waits on: every reply, 'drain',
 * failure, end, abort and a silence longer than `idleMs` wakes the one waiter.
 */
function openWriteCall(t: WriteTransport, blob: BlobWrite, lease: string, idleMs: number): WriteCall {
  const call = t.openWrite(lease);
  const replies: Reply[] = [];
  let waiter: (() => void) | null = null;
  let failure: unknown = null;
  let ended = false;
  let lastHeard = Date.now();
  const wake = (): void => {
    const w = waiter;
    waiter = null;
    w?.();
  };
  const idle = setInterval(() => {
    if (Date.now() - lastHeard <= idleMs) return;
    failure ??= new HoldfastError('TIMEOUT', `containerd stopped answering while ${blob.digest} was written (nothing for ${Math.round(idleMs / 1000)} s)`, {
      hint: 'Check the node (load, disk, containerd); run the same command again to resume from what containerd kept.',
    });
    call.cancel();
    wake();
  }, Math.min(idleMs, 5000));
  call.on('data', (m: any) => {
    lastHeard = Date.now();
    replies.push({ action: String(m.action), offset: Number(m.offset ?? 0) });
    wake();
  });
  call.on('error', (err: grpc.ServiceError) => {
    failure ??= err;
    wake();
  });
  call.on('end', () => {
    ended = true;
    wake();
  });
  call.on('drain', () => {
    lastHeard = Date.now();
    wake();
  });
  const onAbort = (): void => {
    failure ??= blob.signal?.reason ?? new Error('aborted');
    call.cancel();
    wake();
  };
  blob.signal?.addEventListener('abort', onAbort, { once: true });

  const check = (): void => {
    if (failure) throw writeFailure(t, blob, failure);
  };
  return {
    async send(msg) {
      check();
      // Backpressure: wait for 'drain' (or a reply or failure, which wake us too; then the next
      // write finds the buffer still full and waits again).
      if (!call.write(msg)) await new Promise<void>((r) => (waiter = r));
    },
    async replyCount(n) {
      for (;;) {
        check();
        if (replies.length >= n) return replies[n - 1]!;
        if (ended) throw new HoldfastError('INTERNAL', `containerd ended the write of ${blob.digest} early`);
        await new Promise<void>((r) => (waiter = r));
      }
    },
    end: () => call.end(),
    cancel: () => call.cancel(),
    dispose() {
      clearInterval(idle);
      blob.signal?.removeEventListener('abort', onAbort);
    },
  };
}

/** What a failed call throws: the abort reason, our own error, ALREADY, or containerd's mapped. */
function writeFailure(t: WriteTransport, blob: BlobWrite, failure: unknown): unknown {
  const e = failure as grpc.ServiceError;
  if (blob.signal?.aborted) return blob.signal.reason ?? e;
  if (e instanceof HoldfastError) return e;
  if (e.code === grpc.status.ALREADY_EXISTS) return ALREADY;
  return typeof e.code === 'number' ? t.mapError(e, `content.Write of ${blob.digest}`) : e;
}

export async function writeBlobStream(t: WriteTransport, blob: BlobWrite, lease: string, idleMs = WRITE_IDLE_MS): Promise<number> {
  const call = openWriteCall(t, blob, lease, idleMs);
  let sent = 0;
  try {
    await call.send({ action: 'STAT', ref: blob.ref, total: blob.size, expected: blob.digest });
    const stat = await call.replyCount(1);
    let offset = stat.offset;
    let requests = 1;
    if (offset > blob.size) {
      // Not our bytes (a ref reused with other content): start again from zero.
      offset = 0;
    }
    blob.onProgress?.(offset);
    let first = true;
    for await (const chunk of blob.read(offset)) {
      for (let at = 0; at < chunk.length; at += WRITE_CHUNK_BYTES) {
        const data = chunk.subarray(at, at + WRITE_CHUNK_BYTES);
        // offset 0 on the first write truncates whatever an older ingest held.
        await call.send({ action: 'WRITE', ref: blob.ref, offset: first && offset === 0 ? 0 : offset, data });
        first = false;
        requests++;
        offset += data.length;
        sent += data.length;
        blob.onProgress?.(offset);
      }
    }
    await call.send({ action: 'COMMIT', ref: blob.ref, offset, total: blob.size, expected: blob.digest, labels: blob.labels });
    requests++;
    const done = await call.replyCount(requests);
    if (done.action !== 'COMMIT') throw new HoldfastError('INTERNAL', `containerd did not commit ${blob.digest} (it answered ${done.action})`);
    call.end();
    return sent;
  } catch (e) {
    call.cancel();
    if (e === ALREADY) return sent;
    throw e;
  } finally {
    call.dispose();
  }
}

const ALREADY = new Error('already exists');
