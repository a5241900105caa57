// Streaming decompressors for the compressions k3s accepts, as plain byte Transforms. Every
// failure surfaces as a stream error carrying an ArchiveError whose message names the
// compression: 'truncated' when the input ends before the compressed stream does, 'corrupt'
// otherwise (with a hint when the data is in fact another format). Memory stays bounded by one
// slice's worth of output (a few MiB) whatever the compression ratio: how is on decompressor.
import { PassThrough, Transform, type TransformCallback } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';
import { Decompress as ZstdDecompress } from 'fzstd';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { isExecutable } from '../../localTools';
import unbzip2Stream from 'unbzip2-stream';
import { ArchiveError } from './errors';
import type { ArchiveCompression } from '../../../shared/archiveSuffixes';
import { Lz4FrameDecoder } from './lz4';
import { k3sZstdRefusal, ZstdFrameWalker } from './zstdFrames';
import { logger } from '../../log';
import { bzip2InJs } from '../../env';

const log = logger('archives');

export type { ArchiveCompression } from '../../../shared/archiveSuffixes';

/** Human names used in messages. */
export const COMPRESSION_LABEL: Readonly<Record<ArchiveCompression, string>> = {
  none: 'tar',
  gzip: 'gzip',
  zstd: 'zstd',
  bzip2: 'bzip2',
  lz4: 'lz4',
};

const HIGH_WATER = 256 * 1024;

/** What the first bytes of a file look like. `tar` needs the first 263 bytes. */
export function sniffFormat(head: Uint8Array): ArchiveCompression | 'tar' | null {
  const b = (i: number): number => head[i] ?? -1;
  if (b(0) === 0x1f && b(1) === 0x8b) return 'gzip';
  if (b(0) === 0x28 && b(1) === 0xb5 && b(2) === 0x2f && b(3) === 0xfd) return 'zstd';
  if (b(0) === 0x42 && b(1) === 0x5a && b(2) === 0x68) return 'bzip2';
  if ((b(0) === 0x04 && b(1) === 0x22 && b(2) === 0x4d && b(3) === 0x18) || (b(0) === 0x02 && b(1) === 0x21 && b(2) === 0x4c && b(3) === 0x18)) {
    return 'lz4';
  }
  if (head.length >= 262 && Buffer.from(head.subarray(257, 262)).toString('latin1') === 'ustar') return 'tar';
  return null;
}

/** Bytes a text file may hold besides printable characters: tab, line feed, vertical tab, form feed, carriage return. */
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d]);
const EXCERPT_CHARS = 40;

/**
 * When the first bytes of a file are text (valid UTF-8, no NUL or other control byte: an error
 * page saved under the archive's name, a list, a note), what they are for a message — `text
 * ("<!DOCTYPE html>")`, its first line quoted, or `blank lines` — else null. Every tar header
 * and every compressed stream k3s takes holds bytes no text has (NULs, magic numbers), so a
 * text start is never a damaged archive. `partial`: `head` is a window cut from a longer file,
 * which may end inside a multi-byte character.
 */
export function textStart(head: Uint8Array, opts: { partial?: boolean } = {}): string | null {
  if (head.length === 0) return null;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(opts.partial ? head.subarray(0, head.length - cutCharacter(head)) : head);
  } catch {
    return null; // not UTF-8
  }
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if ((c < 0x20 && !TEXT_CONTROLS.has(c)) || c === 0x7f || (c >= 0x80 && c <= 0x9f)) return null;
  }
  const line = text.replace(/^\uFEFF/, '').split(/\r?\n/).map((l) => l.trim()).find((l) => l !== '') ?? '';
  if (line === '') return 'blank lines';
  const chars = [...line];
  return `text (${JSON.stringify(chars.length > EXCERPT_CHARS ? `${chars.slice(0, EXCERPT_CHARS).join('')}\u2026` : line)})`;
}

/** How many bytes at the end of `b` are the start of a UTF-8 character the window cut off (0–3). */
function cutCharacter(b: Uint8Array): number {
  for (let k = 1; k <= Math.min(3, b.length); k++) {
    const c = b[b.length - k]!;
    if (c >= 0x80 && c <= 0xbf) continue; // a continuation byte: look further back for its lead
    const len = c >= 0xf0 && c <= 0xf7 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return len > k ? k : 0;
  }
  return 0;
}

function looksLike(head: Uint8Array, expected: ArchiveCompression): string {
  const actual = sniffFormat(head);
  if (actual === null || actual === expected) return '';
  return actual === 'tar' ? '; it is an uncompressed tar' : `; it looks ${actual}-compressed`;
}

interface SyncEngine {
  /**
   * Where the next piece of `chunk` from `off` ends, for engines that can tell how much a piece
   * decodes to; else the decompressor cuts fixed slices (SLICE_BYTES).
   */
  next?(chunk: Buffer, off: number): number;
  push(chunk: Buffer, out: (b: Buffer) => void): void;
  end(out: (b: Buffer) => void): void;
}

/** Maps whatever a decoder threw to an ArchiveError. `atEnd`: the input had all arrived. */
type ErrorMapper = (err: unknown, atEnd: boolean) => ArchiveError;

/** Shared bookkeeping: byte counts and the first bytes, for messages. */
abstract class DecompressorBase extends Transform {
  bytesIn = 0;
  bytesOut = 0;
  protected head: Buffer = Buffer.alloc(0);

  constructor(readonly compression: ArchiveCompression) {
    super({ readableHighWaterMark: HIGH_WATER, writableHighWaterMark: HIGH_WATER });
  }

  protected noteInput(chunk: Buffer): void {
    if (this.head.length < 264) this.head = Buffer.concat([this.head, chunk.subarray(0, 264 - this.head.length)]);
    this.bytesIn += chunk.length;
  }

  protected toArchiveError(err: unknown, atEnd: boolean, map: ErrorMapper): ArchiveError {
    if (err instanceof ArchiveError) return this.withHint(err);
    return this.withHint(map(err, atEnd));
  }

  /** Before any output, a failure usually means "this is not <compression> data": say what it is. */
  private withHint(e: ArchiveError): ArchiveError {
    if (this.bytesOut > 0 || e.reason !== 'corrupt') return e;
    const hint = looksLike(this.head, this.compression);
    if (!hint) return e;
    return new ArchiveError(e.reason, `${e.message.replace(/\.$/, '')}${hint}`, { cause: e.cause ?? e });
  }
}

/**
 * Input slice per engine call, for engines without `next`: lz4 decodes at most 255× plus one
 * block (≤ 4 MiB), bzip2 one block (≤ 900 kB before its run-length stage) at a time.
 */
const SLICE_BYTES: Partial<Record<ArchiveCompression, number>> = { lz4: 4096, bzip2: 16 * 1024 };
/** zstd: feed fzstd pieces whose blocks decode to at most about this much. */
const ZSTD_PIECE_OUTPUT = 4 * 1024 * 1024;

class SyncDecompressor extends DecompressorBase {
  private readonly out = (b: Buffer): void => {
    if (b.length === 0) return;
    this.bytesOut += b.length;
    this.pushed = true;
    this.push(b);
  };
  private readonly slice: number;
  /** The rest of a chunk, waiting for the consumer to read (see _read). */
  private rest: (() => void) | null = null;
  /**
   * Output pushed since the chunk was last resumed. Pausing is only allowed after a push: the
   * stream calls _read again only once something was pushed since its last _read.
   */
  private pushed = false;

  constructor(
    compression: ArchiveCompression,
    private readonly engine: SyncEngine,
    private readonly mapError: ErrorMapper,
  ) {
    super(compression);
    this.slice = SLICE_BYTES[compression] ?? 64 * 1024;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.noteInput(chunk);
    let off = 0;
    const step = (): void => {
      this.pushed = false;
      try {
        while (off < chunk.length) {
          const end = this.engine.next ? this.engine.next(chunk, off) : Math.min(chunk.length, off + this.slice);
          this.engine.push(chunk.subarray(off, end), this.out);
          off = end;
          if (off < chunk.length && this.pushed && this.readableLength >= HIGH_WATER) {
            this.rest = step;
            return;
          }
        }
      } catch (e) {
        cb(this.toArchiveError(e, false, this.mapError));
        return;
      }
      cb();
    };
    step();
  }

  override _read(size: number): void {
    const rest = this.rest;
    if (rest && !this.destroyed) {
      this.rest = null;
      rest();
      // Paused again (after a push, so the stream calls _read again): wait for it.
      if (this.rest) return;
    }
    // The chunk is done: Transform may be holding its write callback for this _read.
    super._read(size);
  }

  override _flush(cb: TransformCallback): void {
    try {
      this.engine.end(this.out);
    } catch (e) {
      cb(this.toArchiveError(e, true, this.mapError));
      return;
    }
    cb();
  }
}

// ---- zstd ------------------------------------------------------------------------------------

/**
 * Every frame header is read (zstdFrames.ts) before fzstd sees the bytes that hold it: a frame
 * k3s would refuse for its window is refused here too, and fzstd — which allocates the whole
 * declared window at once — never gets to allocate a window larger than k3s's 32 MiB.
 */
class ZstdEngine implements SyncEngine {
  private readonly frames = new ZstdFrameWalker();
  private sink: (b: Buffer) => void = () => {};
  private readonly d = new ZstdDecompress((chunk) => {
    // fzstd hands out a fresh array per block: wrap it without copying.
    if (chunk.length > 0) this.sink(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
  });
  private sawInput = false;

  /** Walks the frame and block headers of the next piece before fzstd is given any of it. */
  next(chunk: Buffer, off: number): number {
    const { end, headers } = this.frames.walk(chunk, off, ZSTD_PIECE_OUTPUT);
    for (const header of headers) {
      const refusal = k3sZstdRefusal(header);
      if (refusal) throw new ArchiveError('unsupported', `unsupported: ${refusal.message}`, { refusal });
    }
    // Bytes the walker cannot vouch for (not a frame, a reserved or oversized block) would reach
    // fzstd unchecked, and the next "frame header" in them with it: refuse them here.
    if (this.frames.lost) throw new ArchiveError('corrupt', 'corrupt: the zstd stream is damaged (invalid frame or block header)');
    return end;
  }

  /** Decodes the piece `next` just walked. */
  push(piece: Buffer, out: (b: Buffer) => void): void {
    this.sink = out;
    if (piece.length > 0) this.sawInput = true;
    this.d.push(piece, false);
  }

  end(out: (b: Buffer) => void): void {
    this.sink = out;
    if (!this.sawInput) throw new ArchiveError('truncated', 'truncated: the zstd stream is empty');
    // At the end fzstd reads a partial frame header as if it were whole (missing bytes as 0), so
    // a 9-byte file could have it allocate 2 GB: a header the walker has not seen complete is cut.
    if (this.frames.inFrameHeader) throw new ArchiveError('truncated', 'truncated: the zstd stream ends inside a frame header');
    this.d.push(new Uint8Array(0), true);
  }
}

const mapZstd: ErrorMapper = (err, atEnd) => {
  const code = (err as { code?: unknown } | null)?.code;
  const detail = err instanceof Error ? err.message : String(err);
  if (code === 5 || (atEnd && /EOF/i.test(detail))) {
    return new ArchiveError('truncated', 'truncated: the zstd stream ends before the end of the archive', { cause: err });
  }
  if (code === 1) {
    return new ArchiveError('unsupported', `unsupported: the zstd stream needs a window larger than can be decoded (${detail})`, { cause: err });
  }
  return new ArchiveError('corrupt', `corrupt: the zstd stream is damaged (${detail})`, { cause: err });
};

// ---- bzip2 -----------------------------------------------------------------------------------

class Bzip2Engine implements SyncEngine {
  private readonly s = unbzip2Stream();
  private sink: (b: Buffer) => void = () => {};
  private failure: unknown = null;
  private sawInput = false;

  constructor() {
    this.s.on('data', (d: Buffer) => this.sink(d));
    this.s.on('error', (e: unknown) => {
      this.failure ??= e;
    });
  }

  push(chunk: Buffer, out: (b: Buffer) => void): void {
    this.sink = out;
    if (chunk.length > 0) this.sawInput = true;
    this.s.write(chunk);
    if (this.failure) throw this.failure;
  }

  end(out: (b: Buffer) => void): void {
    this.sink = out;
    if (!this.sawInput) throw new ArchiveError('truncated', 'truncated: the bzip2 stream is empty');
    this.s.end();
    if (this.failure) throw this.failure;
  }
}

const mapBzip2: ErrorMapper = (err, atEnd) => {
  const detail = err instanceof Error ? err.message : String(err);
  // unbzip2-stream runs out of input with a TypeError (reading past its buffer list) or says
  // "ended prematurely"; its other messages are jokes, so only a CRC mismatch is worth quoting.
  if (atEnd && (err instanceof TypeError || /prematurely/.test(detail))) {
    return new ArchiveError('truncated', 'truncated: the bzip2 stream ends before the end of the archive', { cause: err });
  }
  if (/magic number|Not a BZIP/i.test(detail)) {
    return new ArchiveError('corrupt', 'corrupt: this is not bzip2 data (no bzip2 header)', { cause: err });
  }
  const why = /crc/i.test(detail) ? 'a block checksum does not match' : 'invalid compressed data';
  return new ArchiveError('corrupt', `corrupt: the bzip2 stream is damaged (${why})`, { cause: err });
};

// ---- lz4 -------------------------------------------------------------------------------------

const mapLz4: ErrorMapper = (err) =>
  new ArchiveError('corrupt', `corrupt: the lz4 stream is damaged (${err instanceof Error ? err.message : String(err)})`, {
    cause: err,
  });

// ---- gzip ------------------------------------------------------------------------------------

const mapGzip: ErrorMapper = (err) => {
  const code = (err as { code?: unknown } | null)?.code;
  const detail = err instanceof Error ? err.message : String(err);
  if (code === 'Z_BUF_ERROR' || /unexpected end/i.test(detail)) {
    return new ArchiveError('truncated', 'truncated: the gzip stream ends before the end of the archive', { cause: err });
  }
  if (/header check/i.test(detail)) {
    return new ArchiveError('corrupt', 'corrupt: this is not gzip data (no gzip header)', { cause: err });
  }
  return new ArchiveError('corrupt', `corrupt: the gzip stream is damaged (${detail})`, { cause: err });
};

/**
 * zlib's Gunzip inflates on the thread pool, so it cannot be driven synchronously; this
 * Transform forwards into it and relays its output, pausing it while our readable side is full.
 * Node's Gunzip also handles multi-member files (pigz, `cat a.gz b.gz`).
 */
class GunzipDecompressor extends DecompressorBase {
  private readonly inner: Gunzip = createGunzip({ chunkSize: 64 * 1024 });
  private onInnerEnd: (() => void) | null = null;
  private failed = false;

  constructor() {
    super('gzip');
    this.inner.on('data', (d: Buffer) => {
      this.bytesOut += d.length;
      if (!this.push(d)) this.inner.pause();
    });
    this.inner.on('end', () => this.onInnerEnd?.());
    this.inner.on('error', (e) => {
      if (this.failed) return;
      this.failed = true;
      this.destroy(this.toArchiveError(e, this.onInnerEnd !== null, mapGzip));
    });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.noteInput(chunk);
    this.inner.write(chunk, (err) => {
      if (!err) cb(); // on error the 'error' handler destroys us
    });
  }

  override _flush(cb: TransformCallback): void {
    if (this.bytesIn === 0) {
      cb(new ArchiveError('truncated', 'truncated: the gzip stream is empty'));
      return;
    }
    this.onInnerEnd = () => cb();
    this.inner.end();
  }

  override _read(size: number): void {
    this.inner.resume();
    super._read(size);
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    this.failed = true;
    this.inner.destroy();
    cb(err);
  }
}

// ---- bzip2 through the system's bzip2 -----------------------------------------------------------
// unbzip2-stream decodes at 1–4 MB/s, which makes a GiB-sized .tar.bz2 take many minutes. Where
// the machine has a `bzip2` binary (every Linux and macOS laptop), it decodes at ~15–30 MB/s.
// Fixed argv, bytes on stdin/stdout: nothing user-supplied reaches a shell.

const BZIP2_BIN = ['/usr/bin/bzip2', '/bin/bzip2', '/usr/local/bin/bzip2', '/opt/homebrew/bin/bzip2'].find((p) => isExecutable(p));

/** Exported for tests (a binary that cannot be run); use decompressor('bzip2'). */
export class Bzip2ProcessDecompressor extends Transform {
  private readonly child: ChildProcessWithoutNullStreams;
  private stderr = '';
  /** The binary could not be started (gone since the start, or no resources): no exit status means anything then. */
  private spawnError: Error | null = null;
  private sawInput = false;
  private flushing = false;
  private exitCode: number | null | undefined = undefined;
  private readonly exited: Promise<number | null>;

  constructor(private readonly bin: string) {
    super({ readableHighWaterMark: HIGH_WATER, writableHighWaterMark: HIGH_WATER });
    this.child = spawn(bin, ['-dc'], { stdio: ['pipe', 'pipe', 'pipe'] });
    // Without a listener a failed start would be an uncaught 'error' and end the process; 'close'
    // follows it and reports (failure()).
    this.child.on('error', (err) => {
      this.spawnError ??= err;
      log.debug('bzip2 could not be run', { bin, err });
    });
    this.child.stdout.on('data', (c: Buffer) => {
      if (!this.push(c)) this.child.stdout.pause();
    });
    this.child.stderr.on('data', (c: Buffer) => {
      if (this.stderr.length < 4000) this.stderr += c.toString();
    });
    this.child.stdin.on('error', (err) => log.debug('bzip2 stdin error (reported at exit)', { err })); // EPIPE when bzip2 gives up: reported at exit
    this.exited = new Promise((resolve) =>
      this.child.on('close', (code) => {
        this.exitCode = code;
        resolve(code);
        // bzip2 gave up before all input was written (not bzip2 data, a damaged block): its
        // stdin will never drain again, so waiting writes are released and the stream fails now.
        if (!this.flushing && code !== 0) this.destroy(this.failure(code));
      }),
    );
  }

  override _read(size: number): void {
    this.child.stdout.resume();
    // Transform holds a write's callback here while our output is over the high-water mark; not
    // handing it back starved bzip2 of input for good once a slow reader had paused us.
    super._read(size);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    if (chunk.length) this.sawInput = true;
    // After bzip2 has ended (exit 0: its stream ended; trailing bytes are ignored, as bzip2 does).
    if (this.exitCode !== undefined) return cb();
    const stdin = this.child.stdin;
    if (stdin.write(chunk)) return cb();
    const go = (): void => {
      stdin.off('drain', go);
      this.child.off('close', go);
      cb();
    };
    stdin.on('drain', go);
    this.child.on('close', go);
  }

  override _flush(cb: TransformCallback): void {
    this.flushing = true;
    this.child.stdin.end();
    void this.exited.then((code) => (code === 0 && this.sawInput ? cb() : cb(this.failure(code))));
  }

  /** What bzip2's exit and its stderr mean, as an ArchiveError. */
  private failure(code: number | null): ArchiveError {
    if (this.spawnError) {
      const why = (this.spawnError as NodeJS.ErrnoException).code ?? this.spawnError.message;
      return new ArchiveError('unsupported', `unsupported: ${this.bin} could not be run to decode bzip2 (${why})`, { cause: this.spawnError });
    }
    const msg = this.stderr.trim();
    if (!this.sawInput) return new ArchiveError('truncated', 'truncated: the bzip2 stream is empty');
    if (/unexpected end of file|compressed file ends unexpectedly/i.test(msg)) {
      return new ArchiveError('truncated', 'truncated: the bzip2 stream ends before the end of the archive');
    }
    if (/not a bzip2 file|bad magic/i.test(msg)) return new ArchiveError('corrupt', 'corrupt: this is not bzip2 data (no bzip2 header)');
    return new ArchiveError('corrupt', `corrupt: the bzip2 stream is damaged (${msg.split('\n').pop() || `bzip2 exited ${code}`})`);
  }

  override _destroy(err: Error | null, cb: (error: Error | null) => void): void {
    this.child.kill('SIGKILL');
    cb(err);
  }
}

// ---- entry point -----------------------------------------------------------------------------

/**
 * A byte Transform that decompresses `compression` ('none' passes bytes through).
 *
 * zstd (fzstd), bzip2 (unbzip2-stream) and lz4 (./lz4.ts) are synchronous push decoders driven
 * from one Transform; gzip wraps Node's zlib, which works off-thread. Back-pressure: a Transform
 * does not ask for more input while its readable side is above the high-water mark — but one
 * input chunk (up to 1 MiB) of zstd RLE blocks alone decodes to 32 GiB. So the synchronous
 * decoders are fed small slices of each chunk (SLICE_BYTES), and between slices the Transform
 * waits while its output is unread.
 */
export function decompressor(compression: ArchiveCompression): Transform {
  switch (compression) {
    case 'none':
      return new PassThrough({ readableHighWaterMark: HIGH_WATER, writableHighWaterMark: HIGH_WATER });
    case 'gzip':
      return new GunzipDecompressor();
    case 'zstd':
      return new SyncDecompressor('zstd', new ZstdEngine(), mapZstd);
    case 'bzip2':
      return BZIP2_BIN && !bzip2InJs()
        ? new Bzip2ProcessDecompressor(BZIP2_BIN)
        : new SyncDecompressor('bzip2', new Bzip2Engine(), mapBzip2);
    case 'lz4':
      return new SyncDecompressor('lz4', new Lz4FrameDecoder(), mapLz4);
    default: {
      const never: never = compression;
      throw new ArchiveError('unsupported', `unsupported: unknown compression ${String(never)}`);
    }
  }
}
