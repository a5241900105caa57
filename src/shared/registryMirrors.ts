// A node's registry mirrors and rewrites (`mirrors:` of /etc/rancher/<distro>/registries.yaml) and
// what they mean for a pull. Pure: the node side (core/node/registries.ts) sends only the `mirrors:`
// block, never `configs:` (auth and TLS); this reads that block and applies its rewrites.
// Rewrites change what a mirror must hold for a node to pull a missing image, never the name the
// image is stored under. The semantics, with the k3s and containerd sources they come from, are on
// pullSources.
import { parseReference } from './imageReference';
import { plural } from './wording';

export interface MirrorRewrite {
  pattern: string;
  replacement: string;
  /** Why this rewrite is not applied here, one short clause; absent when it is. */
  problem?: string;
}

export interface RegistryMirror {
  /** The key as written: `docker.io`, `registry.example.com:5000`, `*`. */
  registry: string;
  endpoints: string[];
  rewrites: MirrorRewrite[];
}

/**
 * absent: no registries.yaml (k3s uses the registries' own endpoints); read: its mirrors block was
 * read; unreadable: it exists and the SSH user (even through sudo -n) may not read it;
 * not-understood: read, but not in the YAML Holdfast reads (notes say why).
 */
export type RegistriesState = 'absent' | 'read' | 'unreadable' | 'not-understood';

/** Where a node's containerd would pull a reference it lacks from, in the order it tries. */
export interface PullSource {
  /** The endpoint as containerd uses it: https://registry.example.com:5000/v2. */
  endpoint: string;
  /** The reference as asked of that endpoint: repository path (rewritten or not) and tag or digest. */
  as: string;
  /** The default endpoint (the registry itself): tried last, never rewritten; gone if the node disables it. */
  default?: boolean;
  /** Several rewrites change this path: containerd picks one of these at random on each pull. */
  alternatives?: string[];
}

export interface MissingPull {
  ref: string;
  sources: PullSource[];
}

/** What a node's registries.yaml says, as `inspect` shows it. Never carries a credential. */
export interface NodeRegistries {
  file: string;
  state: RegistriesState;
  mirrors: RegistryMirror[];
  /** Entries under `configs:` (auth, TLS), counted on the node: their values never leave it. null: not counted. */
  configs: number | null;
  notes: string[];
  /** For each needed image the node lacks and a mirror serves: where its containerd would pull it from. */
  pulls?: MissingPull[];
}

// ---- bounds (the block comes from a node that may be hostile or broken) ----
const MAX_LINES = 4000;
const MAX_LINE = 4096;
const MAX_MIRRORS = 200;
const MAX_ENDPOINTS = 64;
const MAX_REWRITES = 64;
export const MAX_PATTERN = 256;
const MAX_REPLACEMENT = 256;
/** Unbounded quantifiers (* + {n,}) a pattern may hold: each multiplies the backtracking JS may do. */
const MAX_UNBOUNDED = 6;

class NotUnderstood extends Error {}

/** What the node prints instead of a flow-style value it does not send. */
const INLINE = '@@inline';

// ---- the YAML Holdfast reads: block mappings and sequences, one-line flow collections, scalars ----

type YNode = string | null | YNode[] | Map<string, YNode>;

interface Line {
  indent: number;
  text: string;
  no: number;
}

/** The text before a comment (` #` or `#` at the start, outside quotes). */
function stripComment(s: string): string {
  let q: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (q) {
      if (c === '\\' && q === '"') i++;
      else if (c === q) q = null;
    } else if (c === '"' || c === "'") {
      if (i === 0 || /[\s,[{:]/.test(s[i - 1]!)) q = c;
    } else if (c === '#' && (i === 0 || /\s/.test(s[i - 1]!))) return s.slice(0, i).trimEnd();
  }
  return s.trimEnd();
}

function scalar(raw: string, no: number): string | null {
  const s = raw.trim();
  if (s.startsWith('"')) {
    if (!/^"(?:[^"\\]|\\.)*"$/.test(s)) throw new NotUnderstood(`line ${no}: a double-quoted value Holdfast cannot read`);
    try {
      return JSON.parse(s) as string; // YAML's double-quoted escapes include JSON's
    } catch {
      throw new NotUnderstood(`line ${no}: a double-quoted escape Holdfast does not read`);
    }
  }
  if (s.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(s)) throw new NotUnderstood(`line ${no}: a single-quoted value Holdfast cannot read`);
    return s.slice(1, -1).replace(/''/g, "'");
  }
  if (/^[&*!|>%@`]/.test(s)) throw new NotUnderstood(`line ${no}: anchors, aliases, tags and block scalars are not read`);
  return s === '' || s === '~' || /^null$/i.test(s) ? null : s;
}

/** Splits a one-line flow collection's inside at commas outside quotes. */
function splitFlow(inner: string, no: number): string[] {
  const out: string[] = [];
  let q: string | null = null;
  let start = 0;
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!;
    if (q) {
      if (c === '\\' && q === '"') i++;
      else if (c === q) q = null;
    } else if (c === '"' || c === "'") q = c;
    else if (c === '[' || c === '{') throw new NotUnderstood(`line ${no}: nested flow collections are not read`);
    else if (c === ',') {
      out.push(inner.slice(start, i));
      start = i + 1;
    }
  }
  if (q) throw new NotUnderstood(`line ${no}: an unclosed quote`);
  out.push(inner.slice(start));
  return out.map((s) => s.trim()).filter((s, i, all) => s !== '' || i < all.length - 1);
}

/** `key: rest` at the first `:` followed by a space or the end, outside quotes; null if none. */
function splitKey(text: string, no: number): { key: string; rest: string } | null {
  let i = 0;
  if (text[0] === '"' || text[0] === "'") {
    const m = text[0] === '"' ? /^"(?:[^"\\]|\\.)*"/.exec(text) : /^'(?:[^']|'')*'/.exec(text);
    if (!m) throw new NotUnderstood(`line ${no}: an unclosed quote`);
    i = m[0].length;
    const after = text.slice(i);
    const c = /^\s*:(?:\s|$)/.exec(after);
    if (!c) return null;
    return { key: scalar(m[0], no) ?? '', rest: after.slice(c[0].length).trim() };
  }
  const c = /:(?:\s|$)/.exec(text);
  if (!c) return null;
  return { key: text.slice(0, c.index).trim(), rest: text.slice(c.index + c[0].length).trim() };
}

function inlineValue(rest: string, no: number): YNode {
  if (rest === INLINE) return INLINE; // the node kept a flow value to itself (core/node/registries.ts)
  if (rest.startsWith('[')) {
    if (!rest.endsWith(']')) throw new NotUnderstood(`line ${no}: a flow sequence over several lines is not read`);
    return splitFlow(rest.slice(1, -1), no).map((s) => scalar(s, no));
  }
  if (rest.startsWith('{')) {
    if (!rest.endsWith('}')) throw new NotUnderstood(`line ${no}: a flow mapping over several lines is not read`);
    const m = new Map<string, YNode>();
    for (const entry of splitFlow(rest.slice(1, -1), no)) {
      const kv = splitKey(entry, no);
      if (!kv) throw new NotUnderstood(`line ${no}: a flow mapping entry without "key: value"`);
      m.set(kv.key, scalar(kv.rest, no));
    }
    return m;
  }
  return scalar(rest, no);
}

const isItem = (l: Line) => l.text === '-' || l.text.startsWith('- ');

function parseBlock(ls: Line[], pos: number, indent: number, who: string): [YNode, number] {
  const first = ls[pos]!;
  if (isItem(first)) {
    const seq: YNode[] = [];
    while (pos < ls.length && ls[pos]!.indent === indent && isItem(ls[pos]!)) {
      const l = ls[pos]!;
      const rest = l.text.slice(1).trim();
      if (rest === '' || splitKey(rest, l.no)) throw new NotUnderstood(`line ${l.no}: only scalars are read in a sequence`);
      seq.push(inlineValue(rest, l.no));
      pos++;
    }
    return [seq, pos];
  }
  const map = new Map<string, YNode>();
  while (pos < ls.length && ls[pos]!.indent === indent && !isItem(ls[pos]!)) {
    const l = ls[pos]!;
    const kv = splitKey(l.text, l.no);
    if (!kv) throw new NotUnderstood(`line ${l.no}: not a "key: value" line`);
    pos++;
    let value: YNode = null;
    if (kv.rest !== '') value = inlineValue(kv.rest, l.no);
    else if (pos < ls.length && (ls[pos]!.indent > indent || (ls[pos]!.indent === indent && isItem(ls[pos]!)))) {
      [value, pos] = parseBlock(ls, pos, ls[pos]!.indent, who);
    }
    // yaml.v2 refuses a key given twice in one mapping; Holdfast says so and keeps the last.
    if (map.has(kv.key)) throw new NotUnderstood(`line ${l.no}: "${kv.key.slice(0, 60)}" is given twice (${who} refuses the file)`);
    map.set(kv.key, value);
  }
  if (pos < ls.length && ls[pos]!.indent > indent) throw new NotUnderstood(`line ${ls[pos]!.no}: indented deeper than the lines before it`);
  return [map, pos];
}

// ---- Go regexp in JS: what can be evaluated safely, and how ----

/** A rewrite's pattern as a JS RegExp, or why Holdfast does not evaluate it. */
export function compileGoPattern(pattern: string): { re: RegExp } | { problem: string } {
  if (pattern.length > MAX_PATTERN) return { problem: `longer than ${MAX_PATTERN} characters: not evaluated` };
  let flags = '';
  let src = pattern;
  // Go's leading flag group (?i) (?s) (?m); JS takes them as flags. U swaps greediness: not read.
  const lead = /^\(\?([imsU]+)\)/.exec(src);
  if (lead) {
    if (lead[1]!.includes('U')) return { problem: 'the (?U) flag is not evaluated by Holdfast' };
    flags = [...new Set(lead[1]!)].join('');
    src = src.slice(lead[0].length);
  }
  const t: Translation = { src, i: 0, out: '', inClass: false, unbounded: 0, groups: [], lastGroupRisky: false };
  for (; t.i < src.length; t.i++) {
    const problem = translateNext(t);
    if (problem) return { problem };
  }
  if (t.inClass) return { problem: 'an unclosed "[": Go refuses it, containerd skips it' };
  if (t.groups.length) return { problem: 'an unclosed "(": Go refuses it, containerd skips it' };
  try {
    return { re: new RegExp(t.out, `${flags}g`) };
  } catch {
    return { problem: 'not a regular expression Holdfast can read' };
  }
}

/** A Go pattern being translated to JS, one character (or escape, group opening, quantifier) at a time. */
interface Translation {
  src: string;
  /** Where the translation stands in src: each step leaves it on the last character it read. */
  i: number;
  out: string;
  inClass: boolean;
  unbounded: number;
  /**
   * Per open group: does it hold a quantifier or an alternation (a quantified such group can
   * backtrack exponentially in JS, where Go's RE2 stays linear).
   */
  groups: { risky: boolean }[];
  lastGroupRisky: boolean;
}

/** Translates what starts at t.i, or says why Holdfast does not evaluate the pattern. */
function translateNext(t: Translation): string | undefined {
  const c = t.src[t.i]!;
  const afterGroup = t.lastGroupRisky;
  t.lastGroupRisky = false;
  if (c === '\\') return translateEscape(t);
  if (t.inClass) {
    if (c === '[' && t.src[t.i + 1] === ':') return 'POSIX classes like [[:alpha:]] are not evaluated by Holdfast';
    if (c === ']') t.inClass = false;
    t.out += c;
    return undefined;
  }
  if (c === '[') {
    t.inClass = true;
    t.out += c;
    if (t.src[t.i + 1] === '^') {
      t.out += '^';
      t.i++;
    }
    if (t.src[t.i + 1] === ']') {
      t.out += '\\]'; // Go: a ] first in a class is literal
      t.i++;
    }
    return undefined;
  }
  if (c === '(') return openGroup(t);
  if (c === ')') {
    const g = t.groups.pop();
    if (!g) return 'an unmatched ")": Go refuses it, containerd skips it';
    if (t.groups.length && g.risky) t.groups[t.groups.length - 1]!.risky = true;
    t.lastGroupRisky = g.risky;
    t.out += c;
    return undefined;
  }
  if (c === '|') {
    if (t.groups.length) t.groups[t.groups.length - 1]!.risky = true;
    t.out += c;
    return undefined;
  }
  const quant = c === '*' || c === '+' ? c : c === '{' ? /^\{(\d+)(,(\d*))?\}/.exec(t.src.slice(t.i))?.[0] : undefined;
  if (quant) return translateQuantifier(t, quant, afterGroup);
  t.out += c;
  return undefined;
}

/** A backslash and the character after it. */
function translateEscape(t: Translation): string | undefined {
  const n = t.src[t.i + 1];
  if (n === undefined) return 'ends in a backslash: Go refuses it, containerd skips it';
  if (/[1-9]/.test(n)) return "a backreference: Go's regexp has none, containerd skips it";
  if (/[0pPQEC]/.test(n)) return `\\${n} is not evaluated by Holdfast`;
  if (n === 'A' && !t.inClass) t.out += '(?<![\\s\\S])';
  else if (n === 'z' && !t.inClass) t.out += '$(?![\\s\\S])';
  else t.out += '\\' + n;
  t.i++;
  return undefined;
}

/** A group's opening: plain, non-capturing or named (Go's (?P<name>) too). */
function openGroup(t: Translation): string | undefined {
  if (t.src[t.i + 1] === '?') {
    const rest = t.src.slice(t.i);
    if (/^\(\?[=!]|^\(\?<[=!]/.test(rest)) return "a lookaround: Go's regexp has none, containerd skips it";
    const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
    if (named) {
      t.out += `(?<${named[1]}>`;
      t.i += named[0].length - 1;
    } else if (rest.startsWith('(?:')) {
      t.out += '(?:';
      t.i += 2;
    } else return 'inline flags inside the pattern are not evaluated by Holdfast';
  } else t.out += '(';
  t.groups.push({ risky: false });
  return undefined;
}

/** A quantifier (*, + or {n,m}): refused where JS could backtrack without bound. */
function translateQuantifier(t: Translation, quant: string, afterGroup: boolean): string | undefined {
  const m = /^\{(\d+)(,(\d*))?\}$/.exec(quant);
  const isUnbounded = !m || (m[2] !== undefined && m[3] === '');
  const repeats = !m || m[2] !== undefined ? true : Number(m[1]) > 1;
  if (m && (Number(m[1]) > 1000 || (m[3] && Number(m[3]) > 1000))) return 'a repeat count over 1000: Go refuses it, containerd skips it';
  if (afterGroup && repeats) return 'a repeated group that itself repeats or alternates: not evaluated by Holdfast (slow in JS)';
  if (isUnbounded && ++t.unbounded > MAX_UNBOUNDED) return `more than ${MAX_UNBOUNDED} unbounded repeats: not evaluated by Holdfast`;
  if (t.groups.length) t.groups[t.groups.length - 1]!.risky = true;
  t.out += quant;
  t.i += quant.length - 1;
  return undefined;
}

/** Go's Regexp.Expand: `$1`, `${1}`, `$name`, `${name}`, `$$`; an unknown group is empty, a malformed `$` literal. */
function expand(template: string, m: RegExpExecArray): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const at = template.indexOf('$', i);
    if (at < 0) break;
    out += template.slice(i, at);
    i = at + 1;
    if (template[i] === '$') {
      out += '$';
      i++;
      continue;
    }
    const braced = template[i] === '{';
    const name = /^[A-Za-z0-9_]+/.exec(template.slice(braced ? i + 1 : i))?.[0];
    if (!name || (braced && template[i + 1 + name.length] !== '}')) {
      out += '$';
      continue;
    }
    i += name.length + (braced ? 2 : 0);
    const v = /^\d+$/.test(name) ? m[Number(name)] : m.groups?.[name];
    out += v ?? '';
  }
  return out + template.slice(i);
}

/** Go's ReplaceAllString: every match, an empty match right after the previous match skipped. */
export function goReplaceAll(re: RegExp, s: string, template: string): string {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let out = '';
  let last = 0;
  let prevEnd = -1;
  g.lastIndex = 0;
  for (let m = g.exec(s); m; m = g.exec(s)) {
    const start = m.index;
    const end = start + m[0].length;
    if (m[0].length === 0) {
      g.lastIndex = start + 1;
      if (start === prevEnd) {
        if (start >= s.length) break;
        continue;
      }
    }
    out += s.slice(last, start) + expand(template, m);
    last = end;
    prevEnd = end;
    if (start >= s.length) break;
  }
  return out + s.slice(last);
}

/** The repository paths a mirror's rewrites make of `path` (none: the path is pulled as it is). */
export function rewritePath(path: string, rewrites: readonly MirrorRewrite[]): string[] {
  const out: string[] = [];
  for (const r of rewrites) {
    if (r.problem) continue;
    const c = compileGoPattern(r.pattern);
    if (!('re' in c)) continue;
    const rr = goReplaceAll(c.re, path, r.replacement);
    if (rr !== path && !out.includes(rr)) out.push(rr);
  }
  return out;
}

// ---- the mirrors block → NodeRegistries ----

/**
 * Reads the lines of a `mirrors:` block (and only it) as the node printed them. `who`: the node's
 * distro as the notes name it ("k3s", "RKE2": shared/distro distroDisplayName).
 */
export function parseMirrorsBlock(lines: readonly string[], who = 'k3s'): { mirrors: RegistryMirror[]; notes: string[]; understood: boolean } {
  const notes: string[] = [];
  const ls: Line[] = [];
  for (const [i, raw] of lines.slice(0, MAX_LINES).entries()) {
    if (raw.length > MAX_LINE) return { mirrors: [], notes: [`line ${i + 1} of the mirrors block is longer than ${MAX_LINE} characters: not read`], understood: false };
    const line = raw.replace(/\r$/, '');
    if (/^\s*@@dropped$/.test(line)) {
      notes.push(`a key other than endpoint/rewrite: ignored, as ${who} does; its value stayed on the node`);
      continue;
    }
    const lead = /^[ \t]*/.exec(line)![0];
    if (lead.includes('\t')) return { mirrors: [], notes: [`line ${i + 1}: a tab in the indentation (YAML forbids it)`], understood: false };
    const text = stripComment(line.slice(lead.length));
    if (text === '') continue;
    ls.push({ indent: lead.length, text, no: i + 1 });
  }
  if (lines.length > MAX_LINES) notes.push(`only the first ${MAX_LINES} lines of the mirrors block were read`);
  if (ls.length === 0) return { mirrors: [], notes, understood: true };
  let root: YNode;
  try {
    let pos: number;
    [root, pos] = parseBlock(ls, 0, ls[0]!.indent, who);
    if (pos < ls.length) throw new NotUnderstood(`line ${ls[pos]!.no}: less indented than the block`);
  } catch (e) {
    if (e instanceof NotUnderstood) return { mirrors: [], notes: [...notes, e.message], understood: false };
    throw e;
  }
  const top = root instanceof Map ? root.get('mirrors') : undefined;
  if (top === INLINE) return { mirrors: [], notes: [...notes, 'mirrors is written in flow style ({…}): Holdfast reads the block style only'], understood: false };
  if (top === null || top === undefined) return { mirrors: [], notes, understood: true };
  if (!(top instanceof Map)) return { mirrors: [], notes: [...notes, 'mirrors is not a mapping of registries'], understood: false };
  const mirrors: RegistryMirror[] = [];
  for (const [registry, v] of top) {
    if (mirrors.length >= MAX_MIRRORS) {
      notes.push(`only the first ${MAX_MIRRORS} mirrors were read`);
      break;
    }
    if (v === INLINE) {
      notes.push(`mirror ${registry.slice(0, 80)} is written in flow style ({…}): not read`);
      continue;
    }
    const m: RegistryMirror = { registry: registry.slice(0, 255), endpoints: [], rewrites: [] };
    if (v instanceof Map) {
      const ep = v.get('endpoint');
      if (Array.isArray(ep)) m.endpoints = ep.filter((e): e is string => typeof e === 'string').slice(0, MAX_ENDPOINTS).map((e) => e.slice(0, 512));
      else if (ep !== undefined && ep !== null) notes.push(`mirror ${m.registry}: endpoint is not a list (${who} refuses the file)`);
      const rw = v.get('rewrite');
      if (rw instanceof Map) {
        for (const [pattern, replacement] of [...rw].slice(0, MAX_REWRITES)) {
          const r: MirrorRewrite = { pattern: pattern.slice(0, MAX_PATTERN + 1), replacement: typeof replacement === 'string' ? replacement.slice(0, MAX_REPLACEMENT) : '' };
          const c = compileGoPattern(pattern);
          if ('problem' in c) r.problem = c.problem;
          else if (typeof replacement === 'string' && replacement.length > MAX_REPLACEMENT) r.problem = `a replacement longer than ${MAX_REPLACEMENT} characters: not evaluated`;
          m.rewrites.push(r);
        }
        if (rw.size > MAX_REWRITES) notes.push(`mirror ${m.registry}: only the first ${MAX_REWRITES} rewrites were read`);
      } else if (rw !== undefined && rw !== null) notes.push(`mirror ${m.registry}: rewrite is not a mapping (${who} refuses the file)`);
    } else if (v !== null) notes.push(`mirror ${m.registry} is not a mapping`);
    mirrors.push(m);
  }
  return { mirrors, notes, understood: true };
}

// ---- endpoints and pulls ----

const isLocalhost = (host: string) => {
  const h = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return h === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '::1';
};

/** The registry's own endpoint: https://<host>/v2 (docker.io: registry-1.docker.io). */
export function defaultEndpoint(registry: string): string {
  return `https://${registry === 'docker.io' ? 'registry-1.docker.io' : registry}/v2`;
}

/** A mirror endpoint as k3s writes it into hosts.toml (normalizeEndpointAddress); null if unreadable. */
export function normalizeEndpoint(endpoint: string): string | null {
  const withScheme = endpoint.includes('://') ? endpoint : `//${endpoint}`;
  let u: URL;
  try {
    u = new URL(withScheme, 'https://placeholder.invalid');
  } catch {
    return null;
  }
  if (!endpoint.includes('://')) u = new URL(`${isLocalhost(u.host) && u.port !== '' && u.port !== '443' ? 'http' : 'https'}:${withScheme}`);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
  const host = u.host === 'docker.io' ? 'registry-1.docker.io' : u.host;
  const p = u.pathname === '' || u.pathname === '/' || u.pathname === '/v2' || u.pathname === '/v2/' ? '/v2' : u.pathname;
  return `${u.protocol}//${host}${p}`;
}

/**
 * The mirror that applies to a registry: its own entry, else `*`. Not known here: a registry with
 * its own `configs:` entry (auth or TLS) but no mirror gets a hosts.toml of its own from k3s, so
 * `*` does not apply to it — the node sends only a count of configs entries, not their names.
 */
export function mirrorFor(registry: string, mirrors: readonly RegistryMirror[]): RegistryMirror | undefined {
  return mirrors.find((m) => m.registry === registry) ?? mirrors.find((m) => m.registry === '*');
}

/**
 * Where a node's containerd would pull `ref` from (a normalised reference: docker.io/library/x:1),
 * in order: each mirror endpoint with the rewritten repository path, then the registry itself.
 * null: no mirror applies (the registry itself only) or `ref` is not a reference.
 *
 * The semantics, from k3s and its containerd fork (sources named so they can be checked again):
 * - registries.yaml is read by rancher/wharfie pkg/registries (gopkg.in/yaml.v2 into
 *   `mirrors: <registry>: {endpoint: [URL…], rewrite: {REGEX: REPLACEMENT}}`); unknown keys are
 *   ignored. `"*"` is the mirror of every registry that has no entry of its own (docs.k3s.io,
 *   "Private Registry Configuration", Wildcard Support).
 * - k3s writes one hosts.toml per registry (k3s pkg/agent/containerd/config.go getHostConfigs):
 *   the mirror endpoints in order, then the registry's default endpoint (https://<registry>/v2,
 *   docker.io: https://registry-1.docker.io/v2) unless --disable-default-registry-endpoint. An
 *   endpoint without a scheme is https (http for localhost on a port other than 443); a path of
 *   "", "/" or "/v2" is /v2. The rewrites are copied onto every mirror endpoint but never onto the
 *   default endpoint or the embedded registry's.
 * - containerd (k3s-io/containerd core/remotes/docker/resolver.go withRewritesFromHost) applies
 *   them to the repository path (the name without registry, tag or digest: `library/nginx`):
 *   each pattern is compiled with Go's regexp and the FIRST whose ReplaceAllString changes the
 *   path is used — in Go's map order, which is random, so two patterns that both change a path
 *   make the pulled name a coin toss. A pattern Go cannot compile is skipped with a warning.
 * - The image is still STORED under the name the pod spec gives (docs: "images will still be
 *   stored under the original name … crictl image ls will show docker.io/rancher/mirrored-pause:3.6").
 *   So rewrites never change which reference a node must hold for a workload
 *   (shared/workloads normalizeNeededImage stays as it is); they change what a mirror must hold
 *   for the node to pull a missing image, which is what this tells.
 */
export function pullSources(ref: string, mirrors: readonly RegistryMirror[]): PullSource[] | null {
  let p;
  try {
    p = parseReference(ref);
  } catch {
    return null;
  }
  const mirror = mirrorFor(p.domain, mirrors);
  if (!mirror || mirror.endpoints.length === 0) return null;
  const object = p.digest ? `@${p.digest}` : `:${p.tag ?? 'latest'}`;
  const def = defaultEndpoint(p.domain);
  const out: PullSource[] = [];
  for (const e of mirror.endpoints) {
    const ep = normalizeEndpoint(e);
    if (!ep || ep === def || out.some((s) => s.endpoint === ep)) continue; // the default endpoint is tried last, as itself
    const paths = rewritePath(p.path, mirror.rewrites);
    const s: PullSource = { endpoint: ep, as: `${paths[0] ?? p.path}${object}` };
    if (paths.length > 1) s.alternatives = paths.map((x) => `${x}${object}`);
    out.push(s);
  }
  if (out.length === 0) return null;
  out.push({ endpoint: def, as: `${p.path}${object}`, default: true });
  return out;
}

/** "https://mirror:5000/v2 as mirror/library/nginx:1" (one short clause). */
export function describePullSource(s: PullSource): string {
  const host = s.endpoint.replace(/^https:\/\//, '').replace(/\/v2$/, '');
  if (s.default) return `${host} (the registry itself, unless disabled)`;
  return s.alternatives ? `${host} as one of ${s.alternatives.join(' | ')} (rewrites overlap)` : `${host} as ${s.as}`;
}

/** Where the node would pull each of these (needed, missing) references from, for those a mirror serves. */
export function missingPulls(refs: readonly string[], mirrors: readonly RegistryMirror[], max = 200): MissingPull[] {
  const out: MissingPull[] = [];
  for (const ref of refs) {
    if (out.length >= max) break;
    const sources = pullSources(ref, mirrors);
    if (sources) out.push({ ref, sources });
  }
  return out;
}

/** A node's registries.yaml in one short clause (inspect's line per node, the app's heading). */
export function registriesHeadline(r: NodeRegistries): string {
  switch (r.state) {
    case 'absent':
      return 'no registries.yaml';
    case 'unreadable':
      return `not read (${r.notes[0] ?? 'unreadable'})`;
    default: {
      const parts = [plural(r.mirrors.length, 'mirror')];
      if (r.configs === null) parts.push('configs not counted');
      else if (r.configs > 0) parts.push(`configs: ${r.configs} (credentials stay on the node)`);
      return `${parts.join(', ')}${r.state === 'not-understood' ? ', not all understood' : ''}`;
    }
  }
}
