import { describe, expect, it } from 'vitest';
import { generateRefs } from '../../doubles/catalog';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { LostPin } from '../../../src/shared/domain/lostPins';
import { isPacked, packEnvelope, packRecords, packResult, PACKED, unpackEnvelope, unpackRecords, unpackResult } from '../../../src/shared/wirePack';

/** What a transport does to a packed answer: JSON (HTTP) or a structured clone (IPC). */
const overJson = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const overClone = <T>(v: T): T => structuredClone(v);

const LOST: LostPin = {
  node: 'edge-1',
  kind: 'label-removed',
  ref: 'registry.site.lan/acme/app:1.0',
  imageId: null,
  pinnedAt: '2026-11-30T10:00:00Z',
  pinnedBy: 'tech',
  summary: 'The durable pin Holdfast made on registry.site.lan/acme/app:1.0 is gone.',
  causes: ['Somebody removed the label (ctr images label).'],
  remedy: { kind: 'repin', text: 'Pin it again.', command: 'holdfast pin edge-1 registry.site.lan/acme/app:1.0', target: { refs: ['registry.site.lan/acme/app:1.0'] } },
  stillPinnedVia: null,
};

describe('wirePack: long record lists cross as a value table and rows of indices', () => {
  const refs = generateRefs(10_000);

  it('gives back records equal to the ones packed, over JSON and over a structured clone', () => {
    const packed = packRecords(refs);
    expect(isPacked(packed)).toBe(true);
    expect(unpackRecords(overJson(packed))).toEqual(refs);
    expect(unpackRecords(overClone(packed))).toEqual(refs);
  });

  it('is a third of the JSON size for 10,000 references (a tag and a digest reference per image)', () => {
    const plain = JSON.stringify(refs).length;
    const packed = JSON.stringify(packRecords(refs)).length;
    expect(packed).toBeLessThan(plain / 2.5);
  });

  it('keeps what differs between records: absent keys, null, undefined, numbers vs strings, booleans, nested objects', () => {
    const list = [
      { name: 'a', size: 1, imageId: null, imagePinnedNow: true, labels: { k: 'v' } },
      { name: '1', size: '1', imageId: 'sha256:x', imagePinnedNow: false, lostPin: LOST, archive: undefined },
      { size: 0, labels: {}, platforms: ['linux/amd64', 'linux/arm64'] },
      { name: 'a', labels: { k: 'v' }, platforms: ['linux/arm64', 'linux/amd64'] },
    ];
    const back = unpackRecords(overJson(packRecords(list))) as Record<string, unknown>[];
    expect(back).toEqual(overJson(list)); // undefined dropped, as JSON itself does
    expect(back[1]).not.toHaveProperty('archive');
    expect(back[2]).not.toHaveProperty('name');
    expect(back[1]!.size).toBe('1');
    expect(back[0]!.size).toBe(1);
    expect(back[3]!.platforms).toEqual(['linux/arm64', 'linux/amd64']); // order is content
  });

  it('sends each distinct value once and shares it between the records, frozen', () => {
    const packed = packRecords(refs) as { values: unknown[] };
    const labelSets = packed.values.filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
    expect(labelSets).toHaveLength(3); // CRI label only, both labels, none
    const back = unpackRecords(overJson(packed)) as ImageRef[];
    const pinnedByK3s = back.filter((r) => r.pin === 'distro');
    expect(pinnedByK3s[0]!.labels).toBe(pinnedByK3s[1]!.labels);
    expect(Object.isFrozen(pinnedByK3s[0]!.labels)).toBe(true);
    expect(() => {
      'use strict';
      (pinnedByK3s[0]!.labels as Record<string, string>).x = 'y';
    }).toThrow(TypeError);
  });

  it('a key named __proto__ stays an own property and never becomes the prototype', () => {
    const list = overJson([{ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}, "a": 2}') as Record<string, unknown>]);
    const back = unpackRecords(overJson(packRecords(list))) as Record<string, unknown>[];
    expect(Object.getPrototypeOf(back[1])).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(back[1], '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('leaves alone what is not a list of records: empty lists, strings, mixed lists, single objects', () => {
    for (const v of [[], ['a', 'b'], [{ a: 1 }, 'b'], [[1]], { a: 1 }, 'x', 3, null]) {
      expect(packRecords(v)).toBe(v);
      expect(unpackRecords(v)).toBe(v);
    }
  });

  it('packs the record lists of a result object (images.report) and leaves its other properties', () => {
    const info = { containerdVersion: '2.1.9', distro: 'k3s' };
    const report = { images: refs.slice(0, 300), lost: [LOST], info, paths: ['a', 'b'] };
    const packed = overJson(packResult(report)) as Record<string, unknown>;
    expect(isPacked(packed.images)).toBe(true);
    expect(isPacked(packed.lost)).toBe(true);
    expect(packed.info).toEqual(info);
    expect(packed.paths).toEqual(['a', 'b']);
    expect(unpackResult(packed)).toEqual(report);
    expect(unpackResult(overJson(packResult(refs)))).toEqual(refs);
  });

  it('envelopes: results packed and unpacked, errors untouched', () => {
    const ok = { ok: true as const, result: refs.slice(0, 5) };
    const wire = overJson(packEnvelope(ok));
    expect(PACKED in (wire.result as object)).toBe(true);
    expect(unpackEnvelope(wire)).toEqual(ok);
    const err = { ok: false as const, error: { code: 'UNREACHABLE', message: 'm' } };
    expect(packEnvelope(err)).toBe(err);
    expect(unpackEnvelope(err)).toBe(err);
  });

  it('a damaged packed list gives records, never throws or loops: indices out of range read as absent', () => {
    const damaged = { [PACKED]: true, keys: ['a', 'b'], values: ['x'], rows: [0, 7, 0] };
    expect(unpackRecords(damaged)).toEqual([{ a: 'x', b: undefined }]);
  });
});
