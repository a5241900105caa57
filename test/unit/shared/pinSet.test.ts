// The pin set format (#50): what parses (YAML and JSON, minimal and full), every bad input as an
// error naming the field and the fix, the glob rule, and resolution against a node's references.
import { describe, expect, it } from 'vitest';
import type { ImageRef } from '../../../src/shared/domain/images';
import type { RefNeed } from '../../../src/shared/needVerdict';
import { parsePinSet, patternRegExp, PIN_SET_CONFIG_MAP, PinSetError, pinSetOf, pinSetText, resolvePinSet, signatureShortfall, type PinSetSignatures, type PinSetSpec } from '../../../src/shared/pinSet';
import type { SignatureRecord } from '../../../src/shared/signatures';
import { parse as parseYaml } from 'yaml';
import { imageRef } from '../../support/imageRef';

const MAX = 1024 * 1024;
const head = 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: site}\n';
const D = `sha256:${'a'.repeat(64)}`;

async function error(text: string, max = MAX): Promise<PinSetError> {
  try {
    await parsePinSet(text, 'site.yaml', max);
  } catch (e) {
    if (e instanceof PinSetError) return e;
    throw e;
  }
  throw new Error('parsed');
}

describe('parsePinSet: what reads', () => {
  it.each([
    ['the minimal form of #50', `${head}spec:\n  images: [registry.local/app/a:1, "registry.local/app/b@${D}"]\n  needed: true\n  patterns: ["registry.local/app/*"]\n`, { images: ['registry.local/app/a:1', `registry.local/app/b@${D}`], needed: true, patterns: ['registry.local/app/*'] }],
    ['needed alone', `${head}spec: {needed: true}\n`, { images: [], needed: true, patterns: [] }],
    ['short names as CRI resolves them, duplicates once', `${head}spec:\n  images: [nginx, "nginx:latest", "user/app:2"]\n`, { images: ['docker.io/library/nginx:latest', 'docker.io/user/app:2'], needed: false, patterns: [] }],
    ['JSON', JSON.stringify({ apiVersion: 'holdfast/v1', kind: 'PinSet', metadata: { name: 'site' }, spec: { patterns: ['**/pause:*'] } }), { images: [], needed: false, patterns: ['**/pause:*'] }],
    ['metadata labels', `${head.replace('{name: site}', '{name: site, labels: {team: edge}}')}spec: {needed: true}\n`, { images: [], needed: true, patterns: [] }],
    ['a signature requirement', `${head}spec:\n  needed: true\n  signatures: {required: true, keys: ["${'f'.repeat(64)}"], identities: ["ops@example.org (https://issuer.example)"]}\n`, { images: [], needed: true, patterns: [], signatures: { required: true, keys: ['f'.repeat(64)], identities: ['ops@example.org (https://issuer.example)'] } }],
  ])('%s', async (_, text, spec) => {
    const set = await parsePinSet(text, 'site.yaml', MAX);
    expect(set.metadata.name).toBe('site');
    expect(set.spec).toEqual(spec);
  });
});

describe('parsePinSet: every bad input names the field and the fix', () => {
  it.each([
    ['wrong apiVersion', 'apiVersion: holdfast/v2\nkind: PinSet\nmetadata: {name: s}\nspec: {needed: true}\n', 'apiVersion', /apiVersion: holdfast\/v1/],
    ['wrong kind', 'apiVersion: holdfast/v1\nkind: PinnedImageSet\nmetadata: {name: s}\nspec: {needed: true}\n', 'kind', /kind: PinSet/],
    ['no metadata.name', 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {}\nspec: {needed: true}\n', 'metadata.name', /metadata\.name/],
    ['an upper-case name', 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: Site}\nspec: {needed: true}\n', 'metadata.name', /lower case/],
    ['no spec', `${head}`, 'spec', /spec\.images/],
    ['a spec naming nothing', `${head}spec: {needed: false}\n`, 'spec', /spec\.images, spec\.needed: true or spec\.patterns/],
    ['a typo in spec', `${head}spec: {image: [a:1]}\n`, 'spec.image', /remove it/],
    ['an unknown top-level field', `${head}spec: {needed: true}\nstatus: {}\n`, 'status', /remove it/],
    ['needed: yes (a string in YAML 1.2)', `${head}spec: {needed: yes}\n`, 'spec.needed', /needed: true or needed: false/],
    ['a bad reference', `${head}spec:\n  images: [ok:1, "Bad Ref"]\n`, 'spec.images[1]', /registry\.local\/app\/a:1/],
    ['an upper-case repository', `${head}spec:\n  images: [Registry.local/App:1]\n`, 'spec.images[0]', /as containerd stores it/],
    ['images not a list', `${head}spec: {images: a:1}\n`, 'spec.images', /spec\.images/],
    ['a pattern without registry', `${head}spec: {patterns: ["nginx:*"]}\n`, 'spec.patterns[0]', /docker\.io\/library\/nginx:\*/],
    ['a pattern with a class', `${head}spec: {patterns: ["registry.local/app[12]"]}\n`, 'spec.patterns[0]', /glob/],
    ['YAML syntax', `${head}spec: {needed: true\n`, 'site.yaml:', /fix the syntax/],
    ['a duplicate key', `${head}spec: {needed: true}\nspec: {needed: false}\n`, 'site.yaml:', /fix the syntax/],
    ['an empty file', '', 'site.yaml', /apiVersion: holdfast\/v1/],
    ['a list, not an object', '- a\n', '(top level)', /remove it|apiVersion/],
    ['a key that is not a fingerprint', `${head}spec: {needed: true, signatures: {required: true, keys: [ABC]}}\n`, 'spec.signatures.keys[0]', /64 lower-case hex/],
    ['an identity without its issuer', `${head}spec: {needed: true, signatures: {required: true, identities: [ops@example.org]}}\n`, 'spec.signatures.identities[0]', /identity \(issuer\)|ops@example\.org \(/],
    ['signatures without required', `${head}spec: {needed: true, signatures: {keys: []}}\n`, 'spec.signatures.required', /required: true/],
    ['a typo in signatures', `${head}spec: {needed: true, signatures: {required: true, key: []}}\n`, 'spec.signatures.key', /required: true/],
  ])('%s', async (_, text, field, fix) => {
    const e = await error(text);
    expect(e.field.startsWith(field), `${e.field} (${e.message})`).toBe(true);
    expect(e.fix).toMatch(fix);
  });

  it('refuses a file over the bound, and an alias bomb', async () => {
    expect((await error(`${head}spec: {needed: true}\n`, 40)).message).toMatch(/more than a pin set may be \(40\)/);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x]', ...'bcdefgh'.split('').map((k, i) => `${k}: &${k} [${Array(8).fill(`*${'abcdefgh'[i]}`).join(', ')}]`)].join('\n');
    expect((await error(`${bomb}\n${head}spec: {needed: true}\n`)).fix).toMatch(/aliases/);
  });

  it('refuses more images than the bound', async () => {
    const images = Array.from({ length: 10_001 }, (_, i) => `r.local/a:${i}`);
    expect((await error(JSON.stringify({ apiVersion: 'holdfast/v1', kind: 'PinSet', metadata: { name: 's' }, spec: { images } }))).field).toBe('spec.images');
  });
});

describe('patternRegExp: fnmatch with FNM_PATHNAME, ** across /', () => {
  it.each([
    ['registry.local/app/*', 'registry.local/app/a:1', true],
    ['registry.local/app/*', `registry.local/app/b@${D}`, true],
    ['registry.local/app/*', 'registry.local/app/sub/c:1', false],
    ['registry.local/app/**', 'registry.local/app/sub/c:1', true],
    ['**/pause:*', 'registry.k8s.io/pause:3.10', true],
    ['*/pause:*', 'registry.k8s.io/pause:3.10', true],
    ['docker.io/library/nginx:1.2?', 'docker.io/library/nginx:1.27', true],
    ['docker.io/library/nginx:1.2?', 'docker.io/library/nginx:1.2', false],
    ['registry.local/app/a.1', 'registry.local/app/aX1', false],
    ['registry.local/app/*', 'registry.local/app', false],
  ])('%s ~ %s: %s', (glob, ref, match) => {
    expect(patternRegExp(glob).test(ref)).toBe(match);
  });
});

const need = (needed: boolean): RefNeed => ({
  needed,
  basis: needed ? 'workload' : null,
  verdict: needed ? 'unprotected' : 'unneeded',
  atRisk: needed,
  workloads: [],
  neededBecause: needed ? 'needed by Deployment default/c' : null,
  because: '',
});
const spec = (over: Partial<PinSetSpec>): PinSetSpec => ({ images: [], needed: false, patterns: [], ...over });

describe('resolvePinSet', () => {
  const a = imageRef('registry.local/app/a:1', { pin: 'none' }, '1');
  const aDigest = imageRef(`registry.local/app/a@sha256:${'1'.repeat(64)}`, { pin: 'durable' }, '1');
  const b = imageRef('registry.local/app/b:1', { pin: 'durable' }, '2');
  const c = imageRef('registry.local/other/c:1', { pin: 'distro', need: need(true) }, '3');
  const d = imageRef('docker.io/library/d:1', { pin: 'none', need: need(false) }, '4');
  const idRecord = imageRef(`sha256:${'2'.repeat(64).replace(/^./, 'c')}`, { pin: 'durable' }, '2');
  const refs: ImageRef[] = [a, aDigest, b, c, d, idRecord];

  it.each<[string, PinSetSpec, { pin: string[]; durable: string[]; missing: string[]; unmatched?: string[] }]>([
    ['an image by tag: every reference of it must be durable', spec({ images: ['registry.local/app/a:1'] }), { pin: ['registry.local/app/a:1'], durable: [], missing: [] }],
    ['a durable image with its id record', spec({ images: ['registry.local/app/b:1'] }), { pin: [], durable: ['registry.local/app/b:1'], missing: [] }],
    ['a digest reference finds the tag with that target', spec({ images: [`registry.local/app/b@sha256:${'2'.repeat(64)}`] }), { pin: [], durable: ['registry.local/app/b:1'], missing: [] }],
    ['a named image the node lacks is missing', spec({ images: ['registry.local/app/zz:9'] }), { pin: [], durable: [], missing: ['registry.local/app/zz:9'] }],
    ['a tag of another version is not the named one', spec({ images: ['registry.local/app/a:2'] }), { pin: [], durable: [], missing: ['registry.local/app/a:2'] }],
    ['needed: what the needs rule says, and what the node lacks', spec({ needed: true }), { pin: ['registry.local/other/c:1'], durable: [], missing: [] }],
    ['a pattern, never the image id record', spec({ patterns: ['registry.local/app/*'] }), { pin: ['registry.local/app/a:1', `registry.local/app/a@sha256:${'1'.repeat(64)}`], durable: ['registry.local/app/b:1'], missing: [] }],
    ['a pattern that matches nothing', spec({ patterns: ['r.example/*'] }), { pin: [], durable: [], missing: [], unmatched: ['r.example/*'] }],
  ])('%s', (_, s, want) => {
    const r = resolvePinSet(s, { refs, neededMissing: [] });
    expect({ pin: r.pin, durable: r.durable, missing: r.missing }).toEqual({ pin: want.pin, durable: want.durable, missing: want.missing });
    expect(r.unmatched).toEqual(want.unmatched ?? []);
    expect(r.pin).not.toContain(d.name); // never an image outside the set
  });

  it('merges the parts that select a reference, and reports needed images the node lacks', () => {
    const r = resolvePinSet(spec({ images: ['registry.local/other/c:1'], needed: true, patterns: ['registry.local/**'] }), { refs, neededMissing: ['registry.local/cron/job:1'] });
    expect(r.entries.find((e) => e.ref === c.name)).toEqual({ ref: c.name, via: ['images', 'needed', 'patterns'], state: 'pin' });
    expect(r.entries.find((e) => e.ref === 'registry.local/cron/job:1')).toEqual({ ref: 'registry.local/cron/job:1', via: ['needed'], state: 'missing' });
  });

  it('says which pin was lost behind its back: the label removed, or the reference deleted', () => {
    const lostPin = { kind: 'label-removed' } as ImageRef['lostPin'];
    const r = resolvePinSet(spec({ images: ['registry.local/app/a:1', 'registry.local/app/gone:1'] }), {
      refs: [{ ...a, lostPin }, aDigest],
      neededMissing: [],
      lost: [{ ref: 'registry.local/app/gone:1', kind: 'ref-deleted' }],
    });
    expect(r.entries).toEqual([
      { ref: a.name, via: ['images'], state: 'pin', lost: 'label-removed' },
      { ref: 'registry.local/app/gone:1', via: ['images'], state: 'missing', lost: 'ref-deleted' },
    ]);
  });
});

describe('signatureShortfall: which images fail a pin set\'s signature requirement', () => {
  const KEY = 'a'.repeat(64);
  const OTHER = 'b'.repeat(64);
  const ID = 'ops@example.org (https://issuer.example)';
  const at = '2026-12-01T00:00:00Z';
  const by = (who: string): SignatureRecord => ({ verified: true, by: who, format: 'bundle', at });
  const refused: SignatureRecord = { verified: false, reason: 'no signature', at };

  it.each<[string, PinSetSignatures | undefined, (SignatureRecord | null | undefined)[], string | null]>([
    ['no requirement: nothing fails', undefined, [null], null],
    ['required: false: nothing fails', { required: false }, [null], null],
    ['required without keys: any verified signer passes', { required: true }, [by(OTHER)], null],
    ['required without keys: never verified fails', { required: true }, [null, undefined], 'never verified'],
    ['required without keys: verified:false fails with its reason', { required: true }, [refused], 'not verified: no signature (2026-12-01)'],
    ['with a key: verified by it passes', { required: true, keys: [KEY] }, [by(KEY)], null],
    ['with a key: verified by another key fails', { required: true, keys: [KEY] }, [by(OTHER)], 'signed by key bbbbbbbb…, verified 2026-12-01, not by a key or identity the pin set names'],
    ['with a key: never verified fails', { required: true, keys: [KEY] }, [null], 'never verified'],
    ['with an identity: verified by it passes', { required: true, identities: [ID] }, [by(ID)], null],
    ['with an identity: a key is not it', { required: true, identities: [ID] }, [by(KEY)], 'signed by key aaaaaaaa…, verified 2026-12-01, not by a key or identity the pin set names'],
    ['keys and identities: either passes', { required: true, keys: [OTHER], identities: [ID] }, [by(ID)], null],
    ['one reference of the image verified vouches for the image', { required: true, keys: [KEY] }, [null, refused, by(KEY)], null],
  ])('%s', (_, req, records, want) => {
    expect(signatureShortfall(req, records)).toBe(want);
  });

  it('resolution: a selected image that fails is pinned all the same, and listed with why', () => {
    const signed = imageRef('registry.local/app/s:1', { signature: by(KEY) }, '5');
    const plain = imageRef('registry.local/app/p:1', {}, '6');
    const r = resolvePinSet(spec({ images: ['registry.local/app/s:1', 'registry.local/app/p:1', 'registry.local/app/gone:1'], signatures: { required: true, keys: [KEY] } }), { refs: [signed, plain], neededMissing: [] });
    expect(r.pin).toEqual(['registry.local/app/s:1', 'registry.local/app/p:1']);
    expect(r.unverified).toEqual([{ ref: 'registry.local/app/p:1', reason: 'never verified' }]);
    expect(r.entries.find((e) => e.ref === plain.name)).toMatchObject({ state: 'pin', unverified: 'never verified' });
    expect(r.entries.find((e) => e.ref === 'registry.local/app/gone:1')).not.toHaveProperty('unverified');
  });
});

describe('pinSetText: the pin set the app writes from selected images', () => {
  const refs = ['registry.local/app/a:1', `registry.local/app/b@${D}`, 'docker.io/library/nginx:1.27', 'registry.local/app/a:1'];

  it('as a pin set file: parsePinSet reads back the same set, in its minimal form', async () => {
    const set = pinSetOf('north', refs);
    const text = await pinSetText(set, 'pinset');
    expect(text).not.toMatch(/needed|patterns/);
    const back = await parsePinSet(text, 'north.yaml', MAX);
    expect(back).toEqual({ ...set, spec: { images: refs.slice(0, 3), needed: false, patterns: [] } });
  });

  it('keeps a signature requirement when it writes the set back', async () => {
    const set = { ...pinSetOf('north', refs), spec: { ...pinSetOf('north', refs).spec, signatures: { required: true, keys: ['c'.repeat(64)] } } };
    expect((await parsePinSet(await pinSetText(set, 'pinset'), 'north.yaml', MAX)).spec.signatures).toEqual({ required: true, keys: ['c'.repeat(64)] });
  });

  it('as the ConfigMap deploy/guard.yaml mounts: namespace holdfast, its pinset.yaml parses back', async () => {
    const text = await pinSetText(pinSetOf('north', refs), 'configmap');
    const map = parseYaml(text) as { apiVersion: string; kind: string; metadata: { name: string; namespace: string }; data: Record<string, string> };
    expect(map).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: PIN_SET_CONFIG_MAP.name, namespace: 'holdfast' } });
    expect(Object.keys(map.data)).toEqual(['pinset.yaml']);
    expect((await parsePinSet(map.data['pinset.yaml']!, 'pinset.yaml', MAX)).spec.images).toEqual(refs.slice(0, 3));
  });

  it('a bad name or reference does not parse back: the writer checks with the same parser', async () => {
    await expect(async () => parsePinSet(await pinSetText(pinSetOf('North Site', refs), 'pinset'), 'x', MAX)).rejects.toThrow(/metadata\.name/);
    await expect(async () => parsePinSet(await pinSetText(pinSetOf('n', ['UPPER/Case:1']), 'pinset'), 'x', MAX)).rejects.toThrow(/spec\.images\[0\]/);
  });
});
