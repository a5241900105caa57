// The compact wire form of long record lists between the process that owns the nodes and the
// renderer (IPC and `holdfast serve`'s HTTP): 10,000 references on one node would otherwise cross
// as one JSON object per record (6.6 MB, ~80,000 strings to build; bench/ui). Packed, every
// distinct value is sent once and each record is a row of integers into that table. Hand-written:
// the packers on npm (compress-json, jsonh, msgpack) either encode references as strings the
// decoder parses again or decode more slowly than JSON.parse in V8. Shared values (label maps,
// platform lists) are frozen: they are the same object for every record that has them.

/** The marker of a packed list; no record list or result object of the contract has this key. */
export const PACKED = 'holdfast.packed/1';

export interface PackedRecords {
  [PACKED]: true;
  /** Every key any record has, in first-seen order. */
  keys: string[];
  /** Every distinct value, once. */
  values: unknown[];
  /** keys.length integers per record: an index into values, or -1 where the record lacks the key. */
  rows: number[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isPacked(v: unknown): v is PackedRecords {
  return isRecord(v) && v[PACKED] === true && Array.isArray(v.keys) && Array.isArray(v.values) && Array.isArray(v.rows);
}

/**
 * A list of records in packed form; anything else (an empty list, a list of non-records) as it
 * is. Every list, however short: one path for all, so every test through a transport runs it.
 *
 * Measured (bench/ui): images.list with 10,000 references was 6.6 MB of JSON; parsing it built
 * ~80,000 strings and 30,000 objects in a fresh heap, which on a VM with slow first page touches
 * was most of the time between the answer and the first rows. The tag and digest reference of an
 * image share their digest, image id and dates, every reference shares the same few label sets,
 * platforms, media types and reasons, and the renderer rebuilds the same records with those
 * values shared. The form is plain JSON whose bulk is an integer array, the fastest thing
 * JSON.parse reads.
 */
export function packRecords(list: unknown): unknown {
  if (!Array.isArray(list) || list.length === 0 || !list.every(isRecord)) return list;
  const keys: string[] = [];
  const keyIndex = new Map<string, number>();
  for (const r of list) for (const k in r) if (!keyIndex.has(k)) keyIndex.set(k, keys.push(k) - 1);
  const values: unknown[] = [];
  const primitives = new Map<unknown, number>();
  const objects = new Map<string, number>(); // by their JSON text: equal label maps are one value
  const rows = new Array<number>(list.length * keys.length).fill(-1);
  list.forEach((r, i) => {
    for (const k in r) {
      const v = r[k];
      if (v === undefined) continue; // as JSON.stringify drops it
      let at: number | undefined;
      if (typeof v === 'object' && v !== null) {
        const text = JSON.stringify(v);
        at = objects.get(text);
        if (at === undefined) objects.set(text, (at = values.push(v) - 1));
      } else {
        at = primitives.get(v);
        if (at === undefined) primitives.set(v, (at = values.push(v) - 1));
      }
      rows[i * keys.length + keyIndex.get(k)!] = at;
    }
  });
  return { [PACKED]: true, keys, values, rows } satisfies PackedRecords;
}

function deepFreeze(v: unknown): void {
  if (typeof v !== 'object' || v === null || Object.isFrozen(v)) return;
  Object.freeze(v);
  for (const x of Object.values(v)) deepFreeze(x);
}

/** The records again (each a new object, shared values frozen); anything not packed as it is. */
export function unpackRecords(v: unknown): unknown {
  if (!isPacked(v)) return v;
  const { keys, values, rows } = v;
  for (const x of values) deepFreeze(x);
  const n = keys.length === 0 ? 0 : Math.floor(rows.length / keys.length);
  const out = new Array<Record<string, unknown>>(n);
  // A key named __proto__ would set the prototype by assignment: defined as an own property instead.
  const plain = keys.every((k) => k !== '__proto__');
  for (let i = 0, at = 0; i < n; i++) {
    const r: Record<string, unknown> = {};
    for (let k = 0; k < keys.length; k++, at++) {
      const ix = rows[at]!;
      if (ix < 0) continue;
      if (plain || keys[k] !== '__proto__') r[keys[k]!] = values[ix];
      else Object.defineProperty(r, '__proto__', { value: values[ix], enumerable: true, writable: true, configurable: true });
    }
    out[i] = r;
  }
  return out;
}

/**
 * A channel's result as it crosses to the renderer: a record list packed, and the record lists
 * that are direct properties of a result object (images.report's images).
 */
export function packResult(result: unknown): unknown {
  if (Array.isArray(result)) return packRecords(result);
  if (!isRecord(result)) return result;
  let out: Record<string, unknown> | undefined;
  for (const k in result) {
    const p = packRecords(result[k]);
    if (p !== result[k]) (out ??= { ...result })[k] = p;
  }
  return out ?? result;
}

/** packResult undone, in the renderer. */
export function unpackResult(result: unknown): unknown {
  if (isPacked(result)) return unpackRecords(result);
  if (!isRecord(result)) return result;
  let out: Record<string, unknown> | undefined;
  for (const k in result) {
    if (isPacked(result[k])) (out ??= { ...result })[k] = unpackRecords(result[k]);
  }
  return out ?? result;
}

/** An answer as a transport to the renderer sends it: the result packed (packResult), errors as they are. */
export function packEnvelope<E extends { ok: boolean; result?: unknown }>(envelope: E): E {
  return envelope.ok ? { ...envelope, result: packResult(envelope.result) } : envelope;
}

/** packEnvelope undone, where the renderer receives an answer. */
export function unpackEnvelope<E extends { ok: boolean; result?: unknown }>(envelope: E): E {
  return envelope.ok ? { ...envelope, result: unpackResult(envelope.result) } : envelope;
}
