// A site's signature policy (#48): per node group, which images must verify and with what keys or
// keyless identities, so an import applies it without a technician remembering flags. The format
// (YAML or JSON, apiVersion holdfast/v1, kind SignaturePolicy), which rules apply to a node and an
// image, and how they merge with the command line's flags live here, pure. Core reads the file
// and resolves its paths (relative to the policy file); verification uses the merged options.
import * as z from 'zod';
import type { Document, LineCounter } from 'yaml';
import type { CertificateIdentity, SignatureOptions, SignatureRule, SignatureTrust } from './importOptions';
import { normalizeReference, ReferenceError } from './imageReference';
import { PIN_SET_API_VERSION, patternRegExp, referencePattern } from './pinSet';

export const POLICY_API_VERSION = PIN_SET_API_VERSION;
export const POLICY_KIND = 'SignaturePolicy';
export const POLICY_MAX_RULES = 200;
const MAX_ALIASES = 16;

/** One rule as written: the groups it applies to (all nodes when absent), the images it covers, who may sign them. */
export interface PolicyRule extends SignatureTrust {
  name: string;
  groups?: string[];
  images: string[];
  allowUnsigned?: boolean;
}

export interface SignaturePolicy {
  apiVersion: typeof POLICY_API_VERSION;
  kind: typeof POLICY_KIND;
  metadata: { name: string };
  spec: { rules: PolicyRule[] };
}

/** A policy that cannot be used: where (file:line:col), which field, what is wrong, and the fix. */
export class PolicyError extends Error {
  override name = 'PolicyError';
  constructor(
    readonly where: string,
    readonly field: string,
    problem: string,
    readonly fix: string,
  ) {
    super(`${where}: ${field ? `${field} ` : ''}${problem}`);
  }
}

const file = z.string().min(1).max(4096).refine((p) => !p.includes('\0'), 'a file path');
const ruleName = z.string().min(1).max(63).regex(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/, 'is not lower-case letters, digits, "-" and "."');

const identity = z
  .strictObject({ identity: z.string().min(1).max(1024).optional(), identityRegexp: z.string().min(1).max(1024).optional(), issuer: z.string().min(1).max(1024) })
  .superRefine((i, ctx) => {
    if ((i.identity === undefined) === (i.identityRegexp === undefined)) ctx.addIssue({ code: 'custom', message: 'needs exactly one of identity and identityRegexp' });
    if (i.identityRegexp === undefined) return;
    try {
      new RegExp(i.identityRegexp);
    } catch (e) {
      ctx.addIssue({ code: 'custom', path: ['identityRegexp'], message: `is not a regular expression (${e instanceof Error ? e.message : String(e)})` });
    }
  });

const rule = z
  .strictObject({
    name: ruleName,
    groups: z.array(z.string().min(1).max(253)).min(1).max(1000).optional(),
    images: z.array(referencePattern).min(1).max(1000),
    keys: z.array(file).min(1).max(64).optional(),
    identities: z.array(identity).min(1).max(64).optional(),
    trustedRoot: file.optional(),
    allowUnsigned: z.boolean().optional(),
  })
  .superRefine((r, ctx) => {
    if (!r.keys && !r.identities) ctx.addIssue({ code: 'custom', message: 'names no key and no identity' });
    if (r.identities && !r.trustedRoot) ctx.addIssue({ code: 'custom', path: ['trustedRoot'], message: 'is missing: keyless identities are checked against a trusted root' });
  });

export const signaturePolicySchema = z.strictObject({
  apiVersion: z.literal(POLICY_API_VERSION),
  kind: z.literal(POLICY_KIND),
  metadata: z.strictObject({ name: ruleName }),
  spec: z.strictObject({
    rules: z
      .array(rule)
      .min(1)
      .max(POLICY_MAX_RULES)
      .superRefine((rules, ctx) => {
        const seen = new Set<string>();
        rules.forEach((r, i) => {
          if (seen.has(r.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `"${r.name}" names two rules` });
          seen.add(r.name);
        });
      }),
  }),
});

/** The fix for a bad field, by the field's path. */
function fixFor(path: string): string {
  const field = path.replace(/^spec\.rules\[\d+\]\.?/, 'rule.').replace(/\[\d+\]/g, '[]');
  const fixes: Record<string, string> = {
    apiVersion: `write apiVersion: ${POLICY_API_VERSION}`,
    kind: `write kind: ${POLICY_KIND}`,
    'metadata.name': 'give metadata.name, e.g. site (lower case, digits, "-")',
    metadata: 'metadata holds only name',
    'spec.rules': `list between 1 and ${POLICY_MAX_RULES} rules under spec.rules`,
    'rule.': 'give the rule keys (public key files), or identities with a trustedRoot',
    'rule.name': 'give each rule its own name, e.g. site-apps (lower case, digits, "-")',
    'rule.groups[]': 'write node groups as node add and node edit set them (--group), or leave groups out for every node',
    'rule.groups': 'list node groups under groups, or leave it out for every node',
    'rule.images[]': 'write a glob over full references, e.g. registry.local/app/** or docker.io/library/nginx:*',
    'rule.images': 'list the image patterns the rule covers under images',
    'rule.keys[]': 'write the path of a cosign public key (.pub), relative to the policy file',
    'rule.keys': 'list public key files under keys',
    'rule.identities[]': 'write each signer as identity (or identityRegexp) and issuer',
    'rule.identities[].identityRegexp': 'write a JavaScript regular expression, e.g. ^https://github.com/org/',
    'rule.trustedRoot': 'give trustedRoot: the trusted_root.json you carry, relative to the policy file',
    'rule.allowUnsigned': 'write allowUnsigned: true or allowUnsigned: false',
  };
  return fixes[field] ?? fixes[field.replace(/\.[^.]+$/, '')] ?? `remove it: ${POLICY_KIND} has apiVersion, kind, metadata and spec.rules (name, groups, images, keys, identities, trustedRoot, allowUnsigned)`;
}

function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out;
}

/** file:line:col of the node at `path` (or of its key `key`), as near as the document holds it. */
function where(source: string, doc: Document, lc: LineCounter, path: readonly PropertyKey[], key?: string): string {
  const keys = path.filter((p): p is string | number => typeof p !== 'symbol');
  for (let n = keys.length; n >= 0; n--) {
    const node = doc.getIn(keys.slice(0, n), true) as { range?: [number, number, number]; items?: { key?: { value?: unknown; range?: [number, number, number] } }[] } | undefined;
    const at = (n === keys.length && key !== undefined ? node?.items?.find((i) => i.key?.value === key)?.key?.range : undefined) ?? node?.range;
    if (at) {
      const pos = lc.linePos(at[0]);
      return `${source}:${pos.line}:${pos.col}`;
    }
  }
  return source;
}

/** The first problem zod found, as a PolicyError naming the line, the field and the fix. */
function schemaError(err: z.ZodError, source: string, doc: Document, lc: LineCounter): PolicyError {
  const issue = err.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = [fieldPath(issue.path), issue.keys[0]].filter(Boolean).join('.');
    return new PolicyError(where(source, doc, lc, issue.path, issue.keys[0]), field, `is not a field of a ${POLICY_KIND}`, fixFor(field));
  }
  const field = fieldPath(issue.path);
  const at = where(source, doc, lc, issue.path);
  if (issue.code === 'invalid_type') {
    const problem = issue.input === undefined ? 'is missing' : `is ${JSON.stringify(issue.input)?.slice(0, 60) ?? typeof issue.input}, not ${issue.expected === 'array' ? 'a list' : `a ${issue.expected}`}`;
    return new PolicyError(at, field || '(top level)', problem, fixFor(field));
  }
  if (issue.code === 'invalid_value') return new PolicyError(at, field, `is ${JSON.stringify(issue.input)?.slice(0, 60)}, not ${issue.values.map(String).join(' or ')}`, fixFor(field));
  return new PolicyError(at, field, issue.message, fixFor(field));
}

/** Reads a policy from the text of a YAML or JSON file (`source` names it in errors, with the line). */
export async function parseSignaturePolicy(text: string, source: string, maxBytes: number): Promise<SignaturePolicy> {
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > maxBytes) throw new PolicyError(source, '', `is ${bytes} bytes, more than a policy may be (${maxBytes})`, 'cover images by pattern rather than one rule each');
  const { parseDocument, LineCounter } = await import('yaml');
  const lc = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true, strict: true, lineCounter: lc });
  const bad = doc.errors[0];
  if (bad) {
    const at = bad.linePos?.[0];
    throw new PolicyError(at ? `${source}:${at.line}:${at.col}` : source, '', `is not valid YAML or JSON (${bad.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')})`, 'fix the syntax at that line');
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (e) {
    throw new PolicyError(source, '', e instanceof Error ? e.message : String(e), 'write the rules out instead of using YAML aliases');
  }
  if (raw === null || raw === undefined) throw new PolicyError(source, '', 'is empty', `start it with apiVersion: ${POLICY_API_VERSION} and kind: ${POLICY_KIND}`);
  const parsed = signaturePolicySchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) throw schemaError(parsed.error, source, doc, lc);
  return parsed.data as SignaturePolicy;
}

/** Whether a rule applies to a node of `group` (a rule naming no groups applies to every node). */
export const ruleAppliesTo = (r: PolicyRule, group: string | undefined): boolean => r.groups === undefined || (group !== undefined && r.groups.includes(group));

/**
 * The rules for an import to nodes of these groups, as the import's options hold them, their
 * files resolved by `resolve` (core: relative to the policy file). The archive is verified once
 * for all its nodes, so a rule of any one node's group applies to the whole import.
 */
export function policyRules(policy: SignaturePolicy, groups: readonly (string | undefined)[], resolve: (file: string) => string): SignatureRule[] {
  return policy.spec.rules
    .filter((r) => groups.some((g) => ruleAppliesTo(r, g)))
    .map((r) => ({
      name: r.name,
      images: r.images,
      ...(r.keys ? { keys: r.keys.map(resolve) } : {}),
      ...(r.identities ? { identities: r.identities.map((i): CertificateIdentity => ({ ...i })) } : {}),
      ...(r.trustedRoot ? { trustedRoot: resolve(r.trustedRoot) } : {}),
      ...(r.allowUnsigned ? { allowUnsigned: true } : {}),
    }));
}

/** The flags' options with the policy's rules added: flags never remove or loosen a rule. */
export function withPolicy(flags: SignatureOptions, rules: readonly SignatureRule[]): SignatureOptions {
  return rules.length ? { ...flags, rules: [...(flags.rules ?? []), ...rules] } : flags;
}

const normalized = (ref: string): string => {
  try {
    return normalizeReference(ref);
  } catch (e) {
    if (e instanceof ReferenceError) return ref;
    throw e;
  }
};

/** Whether a rule's patterns cover an image (by the full reference containerd stores). */
export function ruleCovers(r: Pick<SignatureRule, 'images'>, ref: string): boolean {
  const full = normalized(ref);
  return r.images.some((p) => patternRegExp(p).test(full));
}

/** One thing an image must satisfy: who may vouch for it, and whether failing refuses the archive. */
export interface SignatureRequirement extends SignatureTrust {
  /** null: the command line's --key; otherwise the policy rule's name. */
  rule: string | null;
  allowUnsigned: boolean;
}

/** The command line's keyless signer (--certificate-identity or its -regexp, with --certificate-oidc-issuer), when whole. */
function flagIdentity(o: SignatureOptions): CertificateIdentity | null {
  if (o.certificateOidcIssuer === undefined || o.trustedRoot === undefined) return null;
  if (o.certificateIdentityRegexp !== undefined) return { identityRegexp: o.certificateIdentityRegexp, issuer: o.certificateOidcIssuer };
  return o.certificateIdentity !== undefined ? { identity: o.certificateIdentity, issuer: o.certificateOidcIssuer } : null;
}

/**
 * What one image must satisfy, each requirement on its own: the flags' keys and keyless identity
 * (every image; either suffices; with --allow-unsigned, not fatal), then every policy rule that covers it (fatal unless the rule itself
 * allows unsigned: --allow-unsigned never loosens a policy). None: the image is not verified.
 */
export function imageRequirements(o: SignatureOptions, ref: string): SignatureRequirement[] {
  const out: SignatureRequirement[] = [];
  const id = flagIdentity(o);
  if (o.keys?.length || id) {
    out.push({ rule: null, ...(o.keys?.length ? { keys: o.keys } : {}), ...(id ? { identities: [id], trustedRoot: o.trustedRoot! } : {}), allowUnsigned: o.allowUnsigned === true });
  }
  for (const r of o.rules ?? []) {
    if (!ruleCovers(r, ref)) continue;
    out.push({
      rule: r.name,
      ...(r.keys ? { keys: r.keys } : {}),
      ...(r.identities ? { identities: r.identities } : {}),
      ...(r.trustedRoot ? { trustedRoot: r.trustedRoot } : {}),
      allowUnsigned: r.allowUnsigned === true,
    });
  }
  return out;
}

/** Whether a requirement needs keyless verification (certificate identities, a trusted root). */
export const isKeyless = (t: SignatureTrust): boolean => (t.identities?.length ?? 0) > 0 || t.trustedRoot !== undefined;
