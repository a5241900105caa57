// Seeded randomness for the fuzz suites: the same seed gives the same cases on every machine, so
// a crash found once is found again (the failing case's number is in the report).

/** mulberry32: small, fast, good enough to pick mutations. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** [0, 1) */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }
}

const WORDS = ['Config', 'RepoTags', 'Layers', 'manifests', 'digest', 'mediaType', 'size', 'platform', 'annotations', 'layers', 'config', 'schemaVersion', 'os', 'architecture', 'variant', '__proto__', 'constructor', 'toString', 'name', 'node', 'path', 'refs', ''];

/** A random JSON value of bounded size; `hints` are strings worth using (digests, paths, media types). */
export function randomJson(rng: Rng, hints: readonly string[] = [], depth = 0): unknown {
  const r = rng.int(depth > 4 ? 6 : 10);
  switch (r) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1, 2 ** 53, -(2 ** 31), 1e308, 0.5, 65535, 65536]);
    case 3:
      return hints.length && rng.chance(0.7) ? rng.pick(hints) : rng.pick(WORDS);
    case 4:
      return rng.pick(['', 'x'.repeat(rng.int(5000)), '\u0000', '../../etc/passwd', '/abs', 'a:b@sha256:' + '0'.repeat(64), '\ud800', 'ÿ'.repeat(40)]);
    case 5:
      return hints.length ? rng.pick(hints) : 'sha256:' + 'a'.repeat(64);
    case 6:
    case 7: {
      const n = rng.chance(0.1) ? rng.int(200) : rng.int(5);
      return Array.from({ length: n }, () => randomJson(rng, hints, depth + 1));
    }
    default: {
      const o: Record<string, unknown> = {};
      const n = rng.int(6);
      for (let i = 0; i < n; i++) o[rng.chance(0.8) ? rng.pick(WORDS) : String(rng.int(100))] = randomJson(rng, hints, depth + 1);
      return o;
    }
  }
}

/** A value nested `levels` deep: [[[…]]] or {"a":{"a":…}}. */
export function deeplyNested(levels: number, asObject: boolean): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = asObject ? { a: v } : [v];
  return v;
}

/** Byte-level mutations: flips, cuts, splices, duplicated runs, oversize fields. */
export function mutateBytes(rng: Rng, input: Buffer): Buffer {
  const b = Buffer.from(input);
  switch (rng.int(7)) {
    case 0: {
      const n = 1 + rng.int(8);
      for (let i = 0; i < n && b.length; i++) {
        const at = rng.int(b.length);
        b[at] = b[at]! ^ (1 << rng.int(8));
      }
      return b;
    }
    case 1:
      return b.subarray(0, rng.int(b.length + 1)); // truncated
    case 2: {
      const at = rng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), rng.bytes(1 + rng.int(64)), b.subarray(at)]);
    }
    case 3: {
      const at = rng.int(b.length + 1);
      return Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + rng.int(512)))]);
    }
    case 4: {
      // duplicate a run (repeated headers, frames, blocks)
      const at = rng.int(b.length + 1);
      const run = b.subarray(at, at + 1 + rng.int(1024));
      return Buffer.concat([b.subarray(0, at), run, run, b.subarray(at)]);
    }
    case 5: {
      // oversize a field: 0xff or 0x7f runs where sizes and lengths live
      const at = rng.int(Math.max(1, b.length));
      b.fill(rng.pick([0xff, 0x7f, 0x00, 0x30 + 9]), at, Math.min(b.length, at + 1 + rng.int(12)));
      return b;
    }
    default:
      return Buffer.concat([b, rng.bytes(rng.int(2048))]); // trailing garbage
  }
}
