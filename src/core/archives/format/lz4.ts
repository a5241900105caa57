// Streaming decoder for the LZ4 *frame* format (what `lz4 -z` writes, and what k3s reads for
// `.tar.lz4`), written from the LZ4 frame and block format specifications. Memory use is bounded
// by one block (≤ 4 MiB compressed + 4 MiB decoded + 64 KiB history), whatever the stream size.
// Every checksum is verified (header HC, block checksums, content checksum) with the xxh32 in
// ./xxh32.ts, so a damaged archive is reported as corrupt instead of decoding garbage. The stream
// layout is on Lz4FrameDecoder.
import { ArchiveError } from './errors';
import { Xxh32, xxh32 } from './xxh32';

const FRAME_MAGIC = 0x184d2204;
const LEGACY_MAGIC = 0x184c2102;
const SKIPPABLE_MIN = 0x184d2a50;
const SKIPPABLE_MAX = 0x184d2a5f;
const HISTORY = 64 * 1024;
const LEGACY_BLOCK = 8 * 1024 * 1024;
/** LZ4_compressBound(8 MiB): the largest a legacy block can be. */
const LEGACY_MAX_COMPRESSED = LEGACY_BLOCK + Math.floor(LEGACY_BLOCK / 255) + 16;
const BLOCK_MAX_BY_ID: Record<number, number> = { 4: 64 * 1024, 5: 256 * 1024, 6: 1024 * 1024, 7: 4 * 1024 * 1024 };

const corrupt = (detail: string): ArchiveError =>
  new ArchiveError('corrupt', `corrupt: the lz4 stream is damaged (${detail})`);

const isMagic = (v: number): boolean =>
  v === FRAME_MAGIC || v === LEGACY_MAGIC || (v >= SKIPPABLE_MIN && v <= SKIPPABLE_MAX);

const EMPTY = Buffer.alloc(0);

/** FIFO of input chunks; hands out exact byte counts, copying only when a read spans chunks. */
class ByteQueue {
  private chunks: Buffer[] = [];
  private head = 0; // read offset in chunks[0]
  length = 0;

  push(b: Buffer): void {
    if (b.length === 0) return;
    this.chunks.push(b);
    this.length += b.length;
  }

  /** Exactly n bytes (caller checked `length >= n`). */
  take(n: number): Buffer {
    // A zero-length (stored) block may arrive when the queue is empty, i.e. when a read ended
    // right after its size field: it must decode the same wherever the input was split.
    if (n === 0) return EMPTY;
    const first = this.chunks[0]!;
    if (first.length - this.head >= n) {
      const out = first.subarray(this.head, this.head + n);
      this.advance(n);
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length - this.head, n - off);
      c.copy(out, off, this.head, this.head + k);
      off += k;
      this.advance(k);
    }
    return out;
  }

  /** Byte i of the queued data, without consuming it (caller checked `length > i`). */
  peek(i: number): number {
    let k = this.head + i;
    for (const c of this.chunks) {
      if (k < c.length) return c[k]!;
      k -= c.length;
    }
    throw new RangeError('peek past the end of the queue');
  }

  u32(): number {
    const b = this.take(4);
    return b.readUInt32LE(0);
  }

  /** Drops up to n bytes; returns how many were dropped. */
  skip(n: number): number {
    let left = n;
    while (left > 0 && this.length > 0) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length - this.head, left);
      this.advance(k);
      left -= k;
    }
    return n - left;
  }

  private advance(k: number): void {
    this.head += k;
    this.length -= k;
    if (this.head === this.chunks[0]!.length) {
      this.chunks.shift();
      this.head = 0;
    }
  }
}

/**
 * Decodes one LZ4 block from `src` into `dst` starting at `d0`, never writing at or past `dLimit`.
 * Matches may reach back to `low` (0 for linked blocks: the history window; `d0` for independent
 * blocks). Returns the end offset of the decoded data in `dst`.
 *
 * A block is a run of sequences: token(u8: high nibble literal count, low nibble match length - 4,
 * 15 = "more length bytes follow, each added, until one is not 255"), literals, then (except in
 * the last sequence) a u16 match offset and the extra match-length bytes.
 */
export function decodeBlock(src: Buffer, dst: Uint8Array, d0: number, dLimit: number, low: number): number {
  const sEnd = src.length;
  let s = 0;
  let d = d0;
  while (s < sEnd) {
    const token = src[s++]!;
    let lit = token >>> 4;
    if (lit === 15) {
      let b: number;
      do {
        if (s >= sEnd) throw corrupt('literal length runs past the end of a block');
        b = src[s++]!;
        lit += b;
      } while (b === 255);
    }
    if (s + lit > sEnd) throw corrupt('literals run past the end of a block');
    if (d + lit > dLimit) throw corrupt('a block decodes to more than its maximum size');
    if (lit < 64) {
      for (let i = 0; i < lit; i++) dst[d + i] = src[s + i]!;
    } else {
      src.copy(dst, d, s, s + lit); // native memcpy, no subarray allocation
    }
    s += lit;
    d += lit;
    if (s === sEnd) break; // the last sequence has literals only

    if (s + 2 > sEnd) throw corrupt('a match offset runs past the end of a block');
    const offset = src[s]! | (src[s + 1]! << 8);
    s += 2;
    if (offset === 0 || d - offset < low) throw corrupt('a match points before the start of the data');
    let len = token & 15;
    if (len === 15) {
      let b: number;
      do {
        if (s >= sEnd) throw corrupt('match length runs past the end of a block');
        b = src[s++]!;
        len += b;
      } while (b === 255);
    }
    len += 4;
    if (d + len > dLimit) throw corrupt('a block decodes to more than its maximum size');
    const m = d - offset;
    if (len < 64) {
      // Short copies: a forward byte loop, which is also right when the match overlaps the
      // bytes it produces (offset < len repeats the last `offset` bytes, e.g. offset 1 = RLE).
      for (let i = 0; i < len; i++) dst[d + i] = dst[m + i]!;
      d += len;
    } else if (offset >= len) {
      dst.copyWithin(d, m, m + len);
      d += len;
    } else {
      // Long run of a short pattern: copy in doubling chunks; everything from m up to d is
      // already periodic with period `offset`, so copying d - m bytes at a time stays correct.
      let left = len;
      while (left > 0) {
        const n = Math.min(left, d - m);
        dst.copyWithin(d, m, m + n);
        d += n;
        left -= n;
      }
    }
  }
  return d;
}

const S_MAGIC = 0;
const S_SKIP_SIZE = 1;
const S_SKIP = 2;
const S_DESCRIPTOR = 3;
const S_BLOCK_SIZE = 4;
const S_BLOCK = 5;
const S_CONTENT_CHECKSUM = 6;
const S_LEGACY_SIZE = 7;
const S_LEGACY_BLOCK = 8;

/**
 * Synchronous, push-driven LZ4 frame decoder. `out` receives decoded bytes it may keep.
 *
 * Layout of a stream (all integers little-endian):
 *
 *   frame   := magic(0x184D2204) descriptor block* endMark(u32 0) contentChecksum?(u32)
 *   descriptor := FLG(u8) BD(u8) contentSize?(u64) dictId?(u32) HC(u8)
 *     FLG bits: 7-6 version (must be 01), 5 block independence, 4 block checksum,
 *               3 content size present, 2 content checksum, 1 reserved (0), 0 dict id present
 *     BD bits:  6-4 block max size (4=64 KiB, 5=256 KiB, 6=1 MiB, 7=4 MiB), others reserved (0)
 *     HC:       second byte of xxh32(FLG..end of dictId)
 *   block   := size(u32; high bit set = stored uncompressed; 0 = end mark) data blockChecksum?(u32)
 *
 * A stream may hold several frames back to back, plus skippable frames (magic 0x184D2A50..5F,
 * u32 length, payload) and legacy frames (magic 0x184C2102, `lz4 -l`: u32 size + block, each block
 * independent and up to 8 MiB decoded; a legacy frame ends at end of input or at the next magic).
 *
 * Blocks of a frame without the independence flag (`lz4 -BD`) may copy from up to 64 KiB of
 * output of the previous blocks, so the decoder keeps a 64 KiB history window.
 */
export class Lz4FrameDecoder {
  private readonly q = new ByteQueue();
  private state = S_MAGIC;
  private framesDone = 0;
  /** Compressed bytes consumed so far (for messages). */
  private offset = 0;

  // Current frame.
  private independent = true;
  private blockChecksum = false;
  private contentChecksum = false;
  private contentSize: number | null = null;
  private blockMax = 0;
  private produced = 0;
  private hash: Xxh32 | null = null;
  private window: Uint8Array | null = null;
  private histLen = 0;
  private blockSize = 0;
  private blockStored = false;
  private skipLeft = 0;
  private legacyBuf: Uint8Array | null = null;

  /** Largest block size seen in frame descriptors (for diagnostics / measurements). */
  maxBlockSizeSeen = 0;

  push(chunk: Buffer, out: (b: Buffer) => void): void {
    this.q.push(chunk);
    this.run(out);
  }

  /** Input is complete: throws unless the stream ended cleanly after a whole frame. */
  end(out: (b: Buffer) => void): void {
    this.run(out);
    const clean =
      this.q.length === 0 && ((this.state === S_MAGIC && this.framesDone > 0) || this.state === S_LEGACY_SIZE);
    if (clean) return;
    if (this.state === S_MAGIC && this.framesDone === 0 && this.q.length === 0) {
      throw new ArchiveError('truncated', 'truncated: the lz4 stream is empty');
    }
    throw new ArchiveError(
      'truncated',
      `truncated: the lz4 stream ends before the end of the archive (cut inside ${this.where()} after ${this.offset + this.q.length} bytes)`,
    );
  }

  private where(): string {
    switch (this.state) {
      case S_MAGIC:
        return 'a frame header';
      case S_DESCRIPTOR:
        return 'a frame descriptor';
      case S_BLOCK_SIZE:
      case S_BLOCK:
      case S_LEGACY_BLOCK:
        return 'a data block';
      case S_CONTENT_CHECKSUM:
        return 'the content checksum';
      default:
        return 'a skippable frame';
    }
  }

  private take(n: number): Buffer {
    this.offset += n;
    return this.q.take(n);
  }

  private u32(): number {
    this.offset += 4;
    return this.q.u32();
  }

  /** Steps the state machine until it needs more input. */
  private run(out: (b: Buffer) => void): void {
    while (this.step(out));
  }

  /** One step of the state machine; false when it waits for more input. */
  private step(out: (b: Buffer) => void): boolean {
    switch (this.state) {
      case S_MAGIC:
        if (this.q.length < 4) return false;
        this.onMagic(this.u32());
        return true;
      case S_SKIP_SIZE:
        if (this.q.length < 4) return false;
        this.skipLeft = this.u32();
        this.state = S_SKIP;
        return true;
      case S_SKIP:
        return this.skipFrame();
      case S_DESCRIPTOR:
        return this.readDescriptor();
      case S_BLOCK_SIZE:
        return this.readBlockSize();
      case S_BLOCK:
        return this.readBlock(out);
      case S_CONTENT_CHECKSUM:
        return this.readContentChecksum();
      case S_LEGACY_SIZE:
        return this.readLegacySize();
      case S_LEGACY_BLOCK:
        return this.readLegacyBlock(out);
      default:
        return false;
    }
  }

  private skipFrame(): boolean {
    const n = this.q.skip(this.skipLeft);
    this.offset += n;
    this.skipLeft -= n;
    if (this.skipLeft > 0) return false;
    this.framesDone++;
    this.state = S_MAGIC;
    return true;
  }

  /** A block's size field: 0 ends the frame; the high bit marks a stored block. */
  private readBlockSize(): boolean {
    if (this.q.length < 4) return false;
    const v = this.u32();
    if (v === 0) {
      this.state = this.contentChecksum ? S_CONTENT_CHECKSUM : S_MAGIC;
      if (!this.contentChecksum) this.finishFrame();
      return true;
    }
    this.blockStored = (v & 0x80000000) !== 0;
    this.blockSize = v & 0x7fffffff;
    if (this.blockSize > this.blockMax) {
      throw corrupt(`a block of ${this.blockSize} bytes exceeds the frame's ${this.blockMax}-byte maximum at byte ${this.offset - 4}`);
    }
    this.state = S_BLOCK;
    return true;
  }

  /** A whole block and its checksum, once buffered. */
  private readBlock(out: (b: Buffer) => void): boolean {
    const need = this.blockSize + (this.blockChecksum ? 4 : 0);
    if (this.q.length < need) return false;
    const at = this.offset;
    const data = this.take(this.blockSize);
    if (this.blockChecksum) {
      const want = this.u32();
      if (xxh32(data) !== want) throw corrupt(`block checksum mismatch at byte ${at}`);
    }
    this.emitBlock(data, out);
    this.state = S_BLOCK_SIZE;
    return true;
  }

  private readContentChecksum(): boolean {
    if (this.q.length < 4) return false;
    const want = this.u32();
    if (this.hash!.digest() !== want) throw corrupt('content checksum mismatch: the decoded data is not what was compressed');
    this.finishFrame();
    this.state = S_MAGIC;
    return true;
  }

  /** A legacy block's size, or the magic number of the next frame (which ends the legacy one). */
  private readLegacySize(): boolean {
    if (this.q.length < 4) return false;
    const v = this.u32();
    if (isMagic(v)) {
      this.framesDone++;
      this.onMagic(v);
      return true;
    }
    if (v === 0 || v > LEGACY_MAX_COMPRESSED) throw corrupt(`impossible legacy block size ${v} at byte ${this.offset - 4}`);
    this.blockSize = v;
    this.state = S_LEGACY_BLOCK;
    return true;
  }

  private readLegacyBlock(out: (b: Buffer) => void): boolean {
    if (this.q.length < this.blockSize) return false;
    const data = this.take(this.blockSize);
    const buf = (this.legacyBuf ??= new Uint8Array(LEGACY_BLOCK));
    const end = decodeBlock(data, buf, 0, LEGACY_BLOCK, 0);
    out(Buffer.from(buf.subarray(0, end)));
    this.state = S_LEGACY_SIZE;
    return true;
  }

  private onMagic(v: number): void {
    if (v === FRAME_MAGIC) {
      this.state = S_DESCRIPTOR;
    } else if (v === LEGACY_MAGIC) {
      this.state = S_LEGACY_SIZE;
    } else if (v >= SKIPPABLE_MIN && v <= SKIPPABLE_MAX) {
      this.state = S_SKIP_SIZE;
    } else if (this.framesDone === 0 && this.offset === 4) {
      throw corrupt(`it does not start with the lz4 frame magic number (found 0x${v.toString(16).padStart(8, '0')})`);
    } else {
      throw corrupt(`unexpected data after the end of an lz4 frame at byte ${this.offset - 4}`);
    }
  }

  /** Parses FLG/BD/[content size]/[dict id]/HC once all of it is buffered. */
  private readDescriptor(): boolean {
    if (this.q.length < 2) return false;
    const flg = this.q.peek(0);
    const len = 2 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0) + 1;
    if (this.q.length < len) return false;
    const at = this.offset;
    const desc = this.take(len);
    const bd = desc[1]!;
    if (flg >>> 6 !== 1) throw corrupt(`unsupported frame version ${flg >>> 6} at byte ${at}`);
    if (flg & 0x02 || bd & 0x8f) throw corrupt(`reserved descriptor bits are set at byte ${at}`);
    const blockMax = BLOCK_MAX_BY_ID[(bd >>> 4) & 7];
    if (blockMax === undefined) throw corrupt(`invalid block size id ${(bd >>> 4) & 7} at byte ${at}`);
    const hc = (xxh32(desc.subarray(0, len - 1)) >>> 8) & 0xff;
    if (hc !== desc[len - 1]) throw corrupt(`frame descriptor checksum mismatch at byte ${at}`);
    if (flg & 0x01) {
      throw new ArchiveError(
        'unsupported',
        `unsupported: the lz4 stream was compressed with a dictionary (id ${desc.readUInt32LE(len - 5)}), which k3s cannot decode either`,
      );
    }
    this.independent = (flg & 0x20) !== 0;
    this.blockChecksum = (flg & 0x10) !== 0;
    this.contentChecksum = (flg & 0x04) !== 0;
    this.contentSize = flg & 0x08 ? Number(desc.readBigUInt64LE(2)) : null;
    this.blockMax = blockMax;
    if (blockMax > this.maxBlockSizeSeen) this.maxBlockSizeSeen = blockMax;
    this.produced = 0;
    this.hash = this.contentChecksum ? new Xxh32(0) : null;
    this.histLen = 0;
    const want = this.independent ? blockMax : HISTORY + blockMax;
    if (!this.window || this.window.length !== want) this.window = new Uint8Array(want);
    this.state = S_BLOCK_SIZE;
    return true;
  }

  private emitBlock(data: Buffer, out: (b: Buffer) => void): void {
    const win = this.window!;
    let decoded: Buffer;
    if (this.independent) {
      if (this.blockStored) {
        decoded = data;
      } else {
        const end = decodeBlock(data, win, 0, this.blockMax, 0);
        decoded = Buffer.from(win.subarray(0, end));
      }
    } else {
      const start = this.histLen;
      let end: number;
      if (this.blockStored) {
        win.set(data, start);
        end = start + data.length;
        decoded = data;
      } else {
        end = decodeBlock(data, win, start, start + this.blockMax, 0);
        decoded = Buffer.from(win.subarray(start, end));
      }
      // Slide: keep the last 64 KiB of output as history for the next block.
      if (end > HISTORY) {
        win.copyWithin(0, end - HISTORY, end);
        this.histLen = HISTORY;
      } else {
        this.histLen = end;
      }
    }
    this.produced += decoded.length;
    if (this.contentSize !== null && this.produced > this.contentSize) {
      throw corrupt(`the frame decodes to more than its declared ${this.contentSize} bytes`);
    }
    this.hash?.update(decoded);
    if (decoded.length > 0) out(decoded);
  }

  private finishFrame(): void {
    if (this.contentSize !== null && this.produced !== this.contentSize) {
      throw corrupt(`the frame decodes to ${this.produced} bytes but declares ${this.contentSize}`);
    }
    this.framesDone++;
  }
}
