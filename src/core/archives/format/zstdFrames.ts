// zstd frame headers, read as the compressed bytes stream past — never decoded — so the window a
// frame asks for is known before any decoder allocates it. Why: k3s refuses a frame whose window
// is over 32 MiB (k3s pkg/untar MaxDecoderMemory; the cases are on k3sZstdRefusal), and our own
// decoder (fzstd) allocates the declared window up front and shifts all of it for every block, so
// an 806-byte file declaring a 2 GB window would cost 2 GB and many seconds before it failed.
// The walker reads only frame and block headers (a few bytes each, skipping the block bodies), so
// the check costs nothing and its memory is bounded by one frame header.
import { formatBytes } from '../../../shared/format';
import { limit } from '../../limits';
import type { K3sImportRefusal } from './errors';

/** The largest window k3s's zstd decoder accepts (bytes): limits.ts archive.zstdWindowBytes. */
export const K3S_ZSTD_MAX_WINDOW = limit('archive.zstdWindowBytes');

const MIN_WINDOW = 1024;
/** Block_Maximum_Size: no block holds or decodes to more than 128 KiB. */
const BLOCK_MAX = 128 * 1024;
const ZSTD_MAGIC = 0xfd2fb528;
/** Skippable frames: magic 0x184D2A50 … 0x184D2A5F. */
const isSkippableMagic = (m: number): boolean => m >>> 4 === 0x184d2a5;

export interface ZstdFrameHeader {
  /** 1-based frame number (skippable frames not counted). */
  frame: number;
  /** Byte offset of the frame's magic number in the compressed stream. */
  offset: number;
  singleSegment: boolean;
  /** Window_Size from the Window_Descriptor; null in a Single_Segment frame (it has none). */
  windowDescriptorBytes: number | null;
  /** Frame_Content_Size; null when the header does not say. Above 2^53 it is approximate. */
  contentSize: number | null;
  /** The window a decoder needs for this frame: the descriptor's, or max(content size, 1 KiB). */
  windowBytes: number;
}

type State = 'frame' | 'block' | 'lost';

/**
 * Push the compressed bytes in order; each push returns the frame headers completed by it.
 * Stops looking (state 'lost') at anything that is not a zstd or skippable frame, or at a
 * reserved or oversized block: the decoder refuses what follows as corrupt.
 */
export class ZstdFrameWalker {
  private state: State = 'frame';
  private head: number[] = [];
  private skip = 0;
  private offset = 0;
  private frameStart = 0;
  private frames = 0;
  private checksum = false;

  /**
   * True while a frame header has begun but is not complete. At the end of the input this means
   * a truncated header: a decoder must not be handed it (fzstd would size a window from the
   * bytes it has, e.g. 2 GB from a 9-byte file).
   */
  get inFrameHeader(): boolean {
    return this.state === 'frame' && this.skip === 0 && this.head.length > 0;
  }

  /** True once the walker met bytes that are not a zstd frame: it no longer vouches for what follows. */
  get lost(): boolean {
    return this.state === 'lost';
  }

  /** Upper bound of what the blocks whose headers were read decode to (bytes). */
  private decodable = 0;

  push(chunk: Uint8Array): ZstdFrameHeader[] {
    return this.walk(chunk, 0, Infinity).headers;
  }

  /**
   * Walks `chunk` from `start` to its end, or only until the blocks whose headers it read may
   * decode to `budget` more bytes: `end` is where it stopped. Feeding a decoder up to `end` at a
   * time bounds what each feed can produce (4-byte RLE blocks decode to 128 KiB each).
   */
  walk(chunk: Uint8Array, start: number, budget: number): { end: number; headers: ZstdFrameHeader[] } {
    const found: ZstdFrameHeader[] = [];
    const stopAt = this.decodable + budget;
    let i = start;
    while (i < chunk.length && this.state !== 'lost' && this.decodable < stopAt) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - i);
        this.skip -= n;
        i += n;
        this.offset += n;
        continue;
      }
      if (this.head.length === 0) this.frameStart = this.offset;
      this.head.push(chunk[i]!);
      i++;
      this.offset++;
      if (this.state === 'frame') {
        const h = this.frameHeader();
        if (h) found.push(h);
      } else {
        this.blockHeader();
      }
    }
    return { end: i, headers: found };
  }

  /** Consumes frame-header bytes; returns the header once complete. */
  private frameHeader(): ZstdFrameHeader | null {
    const b = this.head;
    if (b.length < 4) return null;
    const magic = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
    if (isSkippableMagic(magic)) {
      if (b.length < 8) return null;
      this.skip = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
      this.head = [];
      return null;
    }
    if (magic !== ZSTD_MAGIC) {
      this.state = 'lost';
      return null;
    }
    if (b.length < 5) return null;
    const fhd = b[4]!;
    const singleSegment = (fhd & 0x20) !== 0;
    const dictBytes = [0, 1, 2, 4][fhd & 3]!;
    const fcsFlag = fhd >> 6;
    const fcsBytes = fcsFlag === 0 ? (singleSegment ? 1 : 0) : 1 << fcsFlag;
    const total = 5 + (singleSegment ? 0 : 1) + dictBytes + fcsBytes;
    if (b.length < total) return null;

    let windowDescriptorBytes: number | null = null;
    if (!singleSegment) {
      const wd = b[5]!;
      const base = 2 ** (10 + (wd >> 3));
      windowDescriptorBytes = base + (base / 8) * (wd & 7);
    }
    let contentSize: number | null = null;
    if (fcsBytes > 0) {
      const at = total - fcsBytes;
      contentSize = 0;
      for (let k = fcsBytes - 1; k >= 0; k--) contentSize = contentSize * 256 + b[at + k]!;
      if (fcsBytes === 2) contentSize += 256;
    }
    this.frames++;
    this.checksum = (fhd & 0x04) !== 0;
    this.head = [];
    this.state = 'block';
    return {
      frame: this.frames,
      offset: this.frameStart,
      singleSegment,
      windowDescriptorBytes,
      contentSize,
      windowBytes: windowDescriptorBytes ?? Math.max(contentSize ?? 0, MIN_WINDOW),
    };
  }

  /** Block_Header: Last_Block (bit 0), Block_Type (bits 1–2), Block_Size (bits 3–23). */
  private blockHeader(): void {
    const b = this.head;
    if (b.length < 3) return;
    const v = b[0]! | (b[1]! << 8) | (b[2]! << 16);
    this.head = [];
    const last = (v & 1) === 1;
    const type = (v >> 1) & 3;
    const size = v >>> 3;
    // Reserved type, or larger than the format's Block_Maximum_Size (RLE: what it decodes to):
    // not zstd, and an RLE block may not decode to megabytes from 4 bytes.
    if (type === 3 || size > BLOCK_MAX) {
      this.state = 'lost';
      return;
    }
    // An RLE block carries one byte, repeated Block_Size times on output.
    this.skip = type === 1 ? 1 : size;
    this.decodable += type === 2 ? BLOCK_MAX : size;
    if (last) {
      if (this.checksum) this.skip += 4;
      this.state = 'frame';
    }
  }
}

/**
 * Why k3s would refuse this frame, or null when it decodes it.
 * k3s decodes .tar.zst / .tzst with klauspost/compress and `zstd.WithDecoderMaxMemory(1 << 25)`
 * (k3s pkg/untar MaxDecoderMemory; the default max window of 512 MiB is capped to it). A frame is
 * refused when it needs more than 32 MiB of window:
 *   - a frame with a Window_Descriptor: Window_Size > 32 MiB (ErrWindowSizeExceeded). This is what
 *     `zstd --long=26` or more writes when it compresses from a pipe (no content size known);
 *   - a Single_Segment frame has no descriptor; its window is its Frame_Content_Size (at least
 *     1 KiB), refused when larger than 32 MiB (ErrDecoderSizeExceeded). This is what
 *     `zstd --long=26 file.tar` writes for a tar between 32 and 64 MiB.
 * k3s then imports nothing from the archive. Exactly 32 MiB (`--long=25`) is accepted.
 */
export function k3sZstdRefusal(h: ZstdFrameHeader): K3sImportRefusal | null {
  if (h.windowBytes <= K3S_ZSTD_MAX_WINDOW) return null;
  const where = h.frame === 1 ? 'its zstd frame' : `its zstd frame ${h.frame} (at byte ${h.offset})`;
  const needs = h.singleSegment
    ? `holds ${formatBytes(h.windowBytes)} in one segment, so decoding it needs a ${formatBytes(h.windowBytes)} window`
    : `declares a ${formatBytes(h.windowBytes)} window`;
  return {
    cause: 'zstd-window',
    message:
      `k3s cannot import it: ${where} ${needs}, and k3s decodes zstd with a window of at most ${formatBytes(K3S_ZSTD_MAX_WINDOW)}, ` +
      `so it imports nothing from this archive (made with zstd --long=26 or more?)`,
    windowBytes: h.windowBytes,
    limitBytes: K3S_ZSTD_MAX_WINDOW,
    frame: h.frame,
    offset: h.offset,
  };
}

/**
 * The fix, for a technician to copy: decompress allowing any window, recompress from a pipe
 * with `--long=25` (a 32 MiB window, the most k3s accepts; drop `--long` for the default).
 * `quote` renders a file name for the shell the line is shown for.
 */
export function zstdRecompressHint(fileName: string, quote: (s: string) => string): string {
  const base = fileName.replace(/\.(tar\.zst|tzst)$/, '');
  const out = `${base}.w25.tar.zst`;
  return `Recompress it with a window of at most 32 MiB, e.g. \`zstd -d -c --long=31 ${quote(fileName)} | zstd -T0 -19 --long=25 -o ${quote(out)}\` (or without --long).`;
}
