// xxHash32, streaming, written from the xxHash specification (it is what the LZ4 frame format uses
// for its header, block and content checksums). All arithmetic is mod 2^32: Math.imul for products,
// `| 0` / `>>> 0` to wrap sums.

const P1 = 0x9e3779b1;
const P2 = 0x85ebca77;
const P3 = 0xc2b2ae3d;
const P4 = 0x27d4eb2f;
const P5 = 0x165667b1;

const rotl = (x: number, r: number): number => (x << r) | (x >>> (32 - r));
const round = (acc: number, lane: number): number => Math.imul(rotl((acc + Math.imul(lane, P2)) | 0, 13), P1);
const u32 = (b: Uint8Array, i: number): number => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16) | (b[i + 3]! << 24);

export class Xxh32 {
  private v1: number;
  private v2: number;
  private v3: number;
  private v4: number;
  private readonly seed: number;
  private total = 0;
  /** Bytes not yet consumed by a full 16-byte stripe. */
  private readonly tail = new Uint8Array(16);
  private tailLen = 0;

  constructor(seed = 0) {
    this.seed = seed | 0;
    this.v1 = (this.seed + P1 + P2) | 0;
    this.v2 = (this.seed + P2) | 0;
    this.v3 = this.seed;
    this.v4 = (this.seed - P1) | 0;
  }

  update(data: Uint8Array, start = 0, end = data.length): this {
    let i = start;
    this.total += end - start;
    if (this.tailLen > 0) {
      const n = Math.min(16 - this.tailLen, end - i);
      this.tail.set(data.subarray(i, i + n), this.tailLen);
      this.tailLen += n;
      i += n;
      if (this.tailLen < 16) return this;
      this.stripe(this.tail, 0);
      this.tailLen = 0;
    }
    // Hot loop: locals instead of fields.
    let v1 = this.v1;
    let v2 = this.v2;
    let v3 = this.v3;
    let v4 = this.v4;
    for (; i + 16 <= end; i += 16) {
      v1 = round(v1, u32(data, i));
      v2 = round(v2, u32(data, i + 4));
      v3 = round(v3, u32(data, i + 8));
      v4 = round(v4, u32(data, i + 12));
    }
    this.v1 = v1;
    this.v2 = v2;
    this.v3 = v3;
    this.v4 = v4;
    if (i < end) {
      this.tail.set(data.subarray(i, end), 0);
      this.tailLen = end - i;
    }
    return this;
  }

  private stripe(b: Uint8Array, i: number): void {
    this.v1 = round(this.v1, u32(b, i));
    this.v2 = round(this.v2, u32(b, i + 4));
    this.v3 = round(this.v3, u32(b, i + 8));
    this.v4 = round(this.v4, u32(b, i + 12));
  }

  /** The hash of everything passed to update so far, as an unsigned 32-bit number. */
  digest(): number {
    let acc: number;
    if (this.total >= 16) {
      acc = (rotl(this.v1, 1) + rotl(this.v2, 7) + rotl(this.v3, 12) + rotl(this.v4, 18)) | 0;
    } else {
      acc = (this.seed + P5) | 0;
    }
    acc = (acc + this.total) | 0; // length mod 2^32
    const b = this.tail;
    let i = 0;
    for (; i + 4 <= this.tailLen; i += 4) acc = Math.imul(rotl((acc + Math.imul(u32(b, i), P3)) | 0, 17), P4);
    for (; i < this.tailLen; i++) acc = Math.imul(rotl((acc + Math.imul(b[i]!, P5)) | 0, 11), P1);
    acc ^= acc >>> 15;
    acc = Math.imul(acc, P2);
    acc ^= acc >>> 13;
    acc = Math.imul(acc, P3);
    acc ^= acc >>> 16;
    return acc >>> 0;
  }
}

export function xxh32(data: Uint8Array, seed = 0): number {
  return new Xxh32(seed).update(data).digest();
}
