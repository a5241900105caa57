// A pin set (#50): the images every node of a group keeps durable, declared in a small versioned
// file (YAML or JSON) that `holdfast pinset show` and `holdfast guard` read. The format, its checks
// and the rule that resolves it against one node's images live here, pure; the pin itself goes
// through the pin plan (core/usecases/pin/plan.ts, target `pinSet`) like every other pin.
// YAML is read with `yaml` (YAML 1.2 core schema: `yes` stays a string, duplicate keys and more
// than a few aliases are errors). JSON is YAML 1.2, so one parser reads both. It is loaded when a
// file is read, so the contract (which checks a pin set) does not bring it into the app's window.
import * as z from 'zod';
import type { ImageRef } from './domain/images';
import type { LostPinKind } from './domain/lostPins';
import type { PinSetSignatures, PinSetSpec } from './domain/pins';
import { isImageIdRecord, normalizeReference, ReferenceError } from './imageReference';
import { satisfies } from './needs';
import { isKeylessSigner, signatureSentence, type SignatureRecord } from './signatures';

export type { PinSetSignatures, PinSetSpec };

export const PIN_SET_API_VERSION = 'holdfast/v1';
export const PIN_SET_KIND = 'PinSet';
/** Bounds of one pin set: far above a real site (tens of images), low enough to read at once. */
export const PIN_SET_MAX_IMAGES = 10_000;
export const PIN_SET_MAX_PATTERNS = 1_000;
const MAX_REF = 512;
/** Aliases are refused past this: a small file must not expand into a huge one (billion laughs). */
const MAX_ALIASES = 16;

export interface PinSet {
  apiVersion: typeof PIN_SET_API_VERSION;
  kind: typeof PIN_SET_KIND;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PinSetSpec;
}

/** A pin set that cannot be used: where (a field path or a line), what is wrong, and the fix. */
export class PinSetError extends Error {
  override name = 'PinSetError';
  constructor(
    readonly field: string,
    problem: string,
    readonly fix: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

const reference = z
  .string()
  .min(1)
  .max(MAX_REF)
  .superRefine((r, ctx) => {
    try {
      normalizeReference(r);
    } catch (e) {
      if (!(e instanceof ReferenceError)) throw e;
      ctx.addIssue({ code: 'custom', message: e.message });
    }
  });

/** Glob characters and the characters of a reference; nothing else (no [classes], no spaces). */
const PATTERN_CHARS = /^[A-Za-z0-9._\-/:@*?]+$/;

/** A glob over full references (also a signature policy's image patterns). */
export const referencePattern = z
  .string()
  .min(1)
  .max(MAX_REF)
  .superRefine((p, ctx) => {
    if (!PATTERN_CHARS.test(p)) ctx.addIssue({ code: 'custom', message: `"${p}" has a character a glob here cannot hold (only reference characters, * and ?)` });
    else if (!hasRegistry(p)) ctx.addIssue({ code: 'custom', message: `"${p}" names no registry: patterns match the full name containerd stores` });
  });

/** The first component is a registry (has `.` or `:`, or is localhost) or a glob standing for one. */
function hasRegistry(p: string): boolean {
  const i = p.indexOf('/');
  const first = i === -1 ? p : p.slice(0, i);
  return i !== -1 && (/[.:*?]/.test(first) || first === 'localhost');
}

/** Signers a requirement may name: far above a real site's few keys. */
export const PIN_SET_MAX_SIGNERS = 100;

/** spec.signatures: keys by fingerprint (as #48's verdicts record them), keyless signers as "identity (issuer)". */
const signaturesSchema = z.strictObject({
  required: z.boolean(),
  keys: z
    .array(z.string().regex(/^[0-9a-f]{64}$/, 'a key fingerprint is 64 lower-case hex digits (SHA-256 of the public key)'))
    .max(PIN_SET_MAX_SIGNERS)
    .optional(),
  identities: z
    .array(z.string().min(1).max(MAX_REF).refine(isKeylessSigner, 'a keyless signer is written "identity (issuer)"'))
    .max(PIN_SET_MAX_SIGNERS)
    .optional(),
});

/** spec: also the pin plan's `pinSet` target (shared/contract.ts). */
export const pinSetSpecSchema = z
  .strictObject({
    images: z.array(reference).max(PIN_SET_MAX_IMAGES).default([]),
    needed: z.boolean().default(false),
    patterns: z.array(referencePattern).max(PIN_SET_MAX_PATTERNS).default([]),
    signatures: signaturesSchema.optional(),
  })
  .refine((s) => s.images.length > 0 || s.needed || s.patterns.length > 0, { message: 'names nothing' });

// A Kubernetes object name (RFC 1123 subdomain), as a ConfigMap of it will need.
const objectName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/, 'lower-case letters, digits, "-" and "."');

export const pinSetSchema = z.strictObject({
  apiVersion: z.literal(PIN_SET_API_VERSION),
  kind: z.literal(PIN_SET_KIND),
  metadata: z.strictObject({
    name: objectName,
    labels: z.record(z.string().max(317), z.string().max(63)).optional(),
    annotations: z.record(z.string().max(317), z.string().max(4096)).optional(),
  }),
  spec: pinSetSpecSchema,
});

/** The fix for a bad field, by the field's path. */
function fixFor(path: string): string {
  if (path === 'apiVersion') return `write apiVersion: ${PIN_SET_API_VERSION}`;
  if (path === 'kind') return `write kind: ${PIN_SET_KIND}`;
  if (path.startsWith('metadata.name')) return 'give metadata.name, e.g. site (lower case, digits, "-")';
  if (path.startsWith('metadata')) return 'metadata holds name, and optionally labels and annotations';
  if (/^spec\.images\[\d+\]$/.test(path)) return 'write a reference as containerd stores it, e.g. registry.local/app/a:1 or registry.local/app/b@sha256:<64 hex>';
  if (path.startsWith('spec.images')) return `list at most ${PIN_SET_MAX_IMAGES} references under spec.images`;
  if (path === 'spec.needed') return 'write needed: true or needed: false';
  if (/^spec\.patterns\[\d+\]$/.test(path)) return 'write a glob over full references, e.g. registry.local/app/* or docker.io/library/nginx:*';
  if (path.startsWith('spec.patterns')) return `list at most ${PIN_SET_MAX_PATTERNS} globs under spec.patterns`;
  if (/^spec\.signatures\.keys\[\d+\]$/.test(path)) return 'write the fingerprint import records (io.holdfast.signature.by): 64 lower-case hex digits';
  if (/^spec\.signatures\.identities\[\d+\]$/.test(path)) return 'write a keyless signer as import records it, e.g. "ops@example.org (https://issuer.example)"';
  if (path.startsWith('spec.signatures')) return `write signatures: {required: true}, optionally with keys (fingerprints) and identities (at most ${PIN_SET_MAX_SIGNERS} each)`;
  if (path === 'spec') return 'give spec.images, spec.needed: true or spec.patterns';
  return `remove it: ${PIN_SET_API_VERSION} has apiVersion, kind, metadata and spec (images, needed, patterns, signatures)`;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || '(top level)';
}

/** The first problem zod found, as a PinSetError naming the field and the fix. */
function schemaError(err: z.ZodError): PinSetError {
  const issue = err.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = [fieldPath(issue.path), issue.keys[0]].filter((x) => x && x !== '(top level)').join('.');
    return new PinSetError(field, 'is not a field of a pin set', fixFor(field));
  }
  const field = fieldPath(issue.path);
  if (issue.code === 'invalid_type') {
    const problem = issue.input === undefined ? 'is missing' : `is ${JSON.stringify(issue.input)?.slice(0, 60) ?? typeof issue.input}, not ${issue.expected === 'array' ? 'a list' : `a ${issue.expected}`}`;
    return new PinSetError(field, problem, fixFor(field));
  }
  return new PinSetError(field, issue.message, fixFor(field));
}

/**
 * Reads a pin set from the text of a YAML or JSON file (`source` names it in errors). Throws a
 * PinSetError naming the field (or line) and the fix. References come out as containerd stores
 * them (`nginx` → docker.io/library/nginx:latest, as CRI resolves a pod's image), without duplicates.
 */
export async function parsePinSet(text: string, source: string, maxBytes: number): Promise<PinSet> {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > maxBytes) throw new PinSetError(source, `is ${bytes} bytes, more than a pin set may be (${maxBytes})`, 'split the site into several pin sets, or name images by pattern');
  const { parseDocument } = await import('yaml');
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true, strict: true });
  const bad = doc.errors[0];
  if (bad) {
    const at = bad.linePos?.[0];
    throw new PinSetError(at ? `${source}:${at.line}:${at.col}` : source, `not valid YAML or JSON (${bad.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')})`, 'fix the syntax at that line');
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    throw new PinSetError(source, e instanceof Error ? e.message : String(e), 'write the references out instead of using YAML aliases');
  }
  if (raw === null || raw === undefined) throw new PinSetError(source, 'is empty', `start it with apiVersion: ${PIN_SET_API_VERSION} and kind: ${PIN_SET_KIND}`);
  const parsed = pinSetSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw schemaError(parsed.error);
  const set = parsed.data as PinSet;
  set.spec = { ...set.spec, images: [...new Set(set.spec.images.map(normalizeReference))], patterns: [...new Set(set.spec.patterns)] };
  return set;
}

/**
 * The signature rule of a pin set (pure): why an image fails `req`, or null when it meets it (or
 * nothing is required). `records` are the signature records of the image's references (labels
 * are per reference; the signature binds the digest they share): one verified record, by a named
 * key or identity when any are named, vouches for the image.
 */
export function signatureShortfall(req: PinSetSignatures | undefined, records: readonly (SignatureRecord | null | undefined)[]): string | null {
  if (!req?.required) return null;
  const named = [...(req.keys ?? []), ...(req.identities ?? [])];
  const verified = records.filter((r): r is Extract<SignatureRecord, { verified: true }> => r?.verified === true);
  if (verified.some((r) => named.length === 0 || named.includes(r.by))) return null;
  if (verified.length > 0) return `${signatureSentence(verified[0])}, not by a key or identity the pin set names`;
  const refused = records.find((r) => r?.verified === false);
  return signatureSentence(refused);
}

/**
 * A pattern as a RegExp over a full reference. POSIX fnmatch(3) with FNM_PATHNAME for `*` and `?`
 * (they never cross a `/`), and `**` for any run including `/` as in gitignore(5) and Node's
 * path.matchesGlob. No [classes]: `[` is not a reference character. The whole reference must match.
 */
export function patternRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.\\^$+{}()|[\]-]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export type PinSetVia = 'images' | 'needed' | 'patterns';

/** One reference a pin set selects on a node, or one it names that the node lacks. */
export interface PinSetEntry {
  ref: string;
  /** Which parts of the spec select it. */
  via: PinSetVia[];
  /** durable: nothing to do; pin: to make durable; missing: named, not on the node (never faked). */
  state: 'durable' | 'pin' | 'missing';
  /** When Holdfast's durable pin of it was lost behind its back (shared/lostPins): what happened. */
  lost?: LostPinKind;
  /** Why it fails the set's signature requirement (signatureShortfall); it is pinned anyway. */
  unverified?: string;
}

export interface PinSetResolution {
  entries: PinSetEntry[];
  /** References to make durable (the pin plan adds every reference of the same image). */
  pin: string[];
  durable: string[];
  missing: string[];
  /** Selected references whose image fails spec.signatures, with why: pinned all the same. */
  unverified: { ref: string; reason: string }[];
  /** Patterns that match no reference on the node (not an error: a glob names no image). */
  unmatched: string[];
}

/** What resolution reads of a node: its references (with need and lost pin), needed images it lacks, pins lost with their reference. */
export interface PinSetNode {
  refs: readonly Pick<ImageRef, 'name' | 'digest' | 'imageId' | 'pin' | 'need' | 'lostPin' | 'signature'>[];
  neededMissing: readonly string[];
  lost?: readonly { ref: string; kind: LostPinKind }[];
}

/**
 * The pin set against one node (pure). A reference counts as durable only when every reference of
 * its image is (kubelet merges them by image id; containerd 1.7.3-1.7.9 read one of them): the
 * pin plan pins them all. A named image the node lacks is `missing`, never matched to another.
 */
export function resolvePinSet(spec: PinSetSpec, node: PinSetNode): PinSetResolution {
  const refs = node.refs.filter((r) => !isImageIdRecord(r.name));
  const picked = new Map<string, Set<PinSetVia>>();
  const missing = new Map<string, Set<PinSetVia>>();
  const add = (into: Map<string, Set<PinSetVia>>, ref: string, via: PinSetVia) => into.set(ref, (into.get(ref) ?? new Set()).add(via));
  for (const q of spec.images) {
    const want = normalizeReference(q);
    const hits = refs.filter((r) => satisfies(want, r));
    if (hits.length === 0) add(missing, want, 'images');
    for (const h of hits) add(picked, h.name, 'images');
  }
  if (spec.needed) {
    for (const r of refs) if (r.need?.needed === true) add(picked, r.name, 'needed');
    for (const m of node.neededMissing) add(missing, m, 'needed');
  }
  const globs = spec.patterns.map((p) => ({ p, re: patternRegExp(p), hit: false }));
  for (const r of refs) {
    for (const g of globs) {
      if (!g.re.test(r.name)) continue;
      g.hit = true;
      add(picked, r.name, 'patterns');
    }
  }
  const byImage = new Map<string, (typeof refs)[number][]>();
  for (const r of node.refs) if (r.imageId) byImage.set(r.imageId, [...(byImage.get(r.imageId) ?? []), r]);
  const lostGone = new Map((node.lost ?? []).map((l) => [l.ref, l.kind]));
  const entries: PinSetEntry[] = [];
  for (const r of refs) {
    const via = picked.get(r.name);
    if (!via) continue;
    const image = r.imageId ? byImage.get(r.imageId)! : [r];
    const lost = r.lostPin?.kind ?? lostGone.get(r.name);
    const unverified = signatureShortfall(spec.signatures, image.map((s) => s.signature));
    entries.push({ ref: r.name, via: [...via], state: image.every((s) => s.pin === 'durable') ? 'durable' : 'pin', ...(lost ? { lost } : {}), ...(unverified ? { unverified } : {}) });
  }
  for (const [ref, via] of missing) {
    const lost = lostGone.get(ref);
    entries.push({ ref, via: [...via], state: 'missing', ...(lost ? { lost } : {}) });
  }
  const of = (state: PinSetEntry['state']) => entries.filter((e) => e.state === state).map((e) => e.ref);
  const unverified = entries.flatMap((e) => (e.unverified ? [{ ref: e.ref, reason: e.unverified }] : []));
  return { entries, pin: of('pin'), durable: of('durable'), missing: of('missing'), unverified, unmatched: globs.filter((g) => !g.hit).map((g) => g.p) };
}

/** The ConfigMap deploy/guard.yaml mounts as guard's --pin-set file (deploy/pinset.yaml). */
export const PIN_SET_CONFIG_MAP = { name: 'holdfast-pinset', namespace: 'holdfast', key: 'pinset.yaml', app: 'holdfast-guard' } as const;

/** What a pin set is written as: its own file, or the ConfigMap manifest holding it. */
export type PinSetFileKind = 'pinset' | 'configmap';

/** A pin set naming these references (duplicates once), nothing else. */
export function pinSetOf(name: string, images: readonly string[]): PinSet {
  return { apiVersion: PIN_SET_API_VERSION, kind: PIN_SET_KIND, metadata: { name }, spec: { images: [...new Set(images)], needed: false, patterns: [] } };
}

/**
 * A pin set as YAML (`yaml`'s stringify), in its minimal form (no `needed: false`, no empty
 * patterns), or the ConfigMap manifest for the `holdfast` namespace that carries it. parsePinSet
 * reads either's pin set back as it was.
 */
export async function pinSetText(set: PinSet, as: PinSetFileKind): Promise<string> {
  const { stringify } = await import('yaml');
  const { needed, patterns, signatures } = set.spec;
  const spec = { images: set.spec.images, ...(needed ? { needed: true } : {}), ...(patterns.length ? { patterns } : {}), ...(signatures ? { signatures } : {}) };
  const body = stringify({ apiVersion: set.apiVersion, kind: set.kind, metadata: set.metadata, spec }, { lineWidth: 0 });
  if (as === 'pinset') return `# A pin set for Holdfast's guard (its --pin-set; docs/at-the-site.md)\n${body}`;
  const { name, namespace, key, app } = PIN_SET_CONFIG_MAP;
  const map = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { 'app.kubernetes.io/name': app } }, data: { [key]: body } };
  return `# The pin set every node's guard keeps (deploy/guard.yaml mounts it): kubectl apply -f this file\n${stringify(map, { lineWidth: 0 })}`;
}
