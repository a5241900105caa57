// A node's registry mirrors and rewrites, read from /etc/rancher/<distro>/registries.yaml over the
// SSH connection Holdfast already has (k3s: /etc/rancher/k3s/registries.yaml, RKE2:
// /etc/rancher/rke2/registries.yaml, beside each one's config.yaml). One fixed script, argv-quoted,
// bounded; its answer is read by the pure rule in shared/registryMirrors.ts. It is the node's one
// reading of the file: the embedded registry's mirror names come from it too (RegistriesRead).
// Credentials never leave the node: only the mirrors' `endpoint` and `rewrite` values are sent
// (how the script filters is on REGISTRIES_SCRIPT).
import path from 'node:path';
import { distroDisplayName, distroProfile } from '../../shared/distro';
import type { Distro, NodeDef, NodeInfo } from '../../shared/domain/nodes';
import { parseMirrorsBlock, type NodeRegistries } from '../../shared/registryMirrors';
import { HoldfastError } from '../errors';
import type { SshConnection } from '../ssh/connect';

/** How much of the file is read: a real one is a few KiB. */
export const REGISTRIES_MAX_BYTES = 262_144;

// awk, POSIX (mawk, busybox): `q` is a single quote (the program is in single quotes in the shell).
// K and V: the key of a "key: value" line (as written, quotes kept) and the value after it.
const AWK = String.raw`
function splitkey(s,   r, c, e) {
  r = s; sub(/^ +/, "", r); K = ""; V = ""; c = substr(r, 1, 1)
  if (c == "\"" || c == q) {
    e = index(substr(r, 2), c); if (e == 0) return 0
    K = substr(r, 1, e + 1); r = substr(r, e + 2)
    if (!match(r, /^[ \t]*:([ \t]|$)/)) return 0
    V = substr(r, RLENGTH + 1)
  } else {
    if (!match(r, /:([ \t]|$)/)) return 0
    K = substr(r, 1, RSTART - 1); V = substr(r, RSTART + RLENGTH)
  }
  sub(/^[ \t]+/, "", V); if (V ~ /^#/) V = ""
  return 1
}
function unq(k,   c) { c = substr(k, 1, 1); if ((c == "\"" || c == q) && length(k) > 1) return substr(k, 2, length(k) - 2); return k }
function out(s) { if (++pn <= 4000) print "| " s; else many = 1 }
function lastat(s,   i, j) { j = 0; while ((i = index(substr(s, j + 1), "@")) > 0) j += i; return j }
function hide(t,   a, j) {
  a = match(t, /[\/?#\\]/) ? RSTART - 1 : length(t)
  j = lastat(substr(t, 1, a)); if (j == 0) j = lastat(t)
  return j ? "<redacted>" substr(t, j) : t
}
function url(t,   r, i, p) {
  if (ep && index(t, "@")) {
    r = ""; while (t != "" && index("[]-\"" q, substr(t, 1, 1))) { r = r substr(t, 1, 1); t = substr(t, 2) }
    i = index(t, "//"); p = i ? substr(t, 1, i - 1) : t
    if (p !~ /^[A-Za-z][A-Za-z0-9+.-]*:$/) return r hide(t)
    t = r t
  }
  r = ""
  while ((i = index(t, "//")) > 0) { r = r substr(t, 1, i + 1); t = hide(substr(t, i + 2)); if (t ~ /^<redacted>/) { r = r "<redacted>"; t = substr(t, 11) } }
  return r t
}
function clean(s,   r, a, n) {
  sub(/[ \t]+#.*$/, "", s); r = ""
  while (match(s, /[^ \t]+/)) { a = RSTART; n = RLENGTH; r = r substr(s, 1, a - 1) url(substr(s, a, n)); s = substr(s, a + n) }
  return r s
}
{ b += length($0) + 1; if (b > max) { trunc = 1; exit } sub(/\r$/, "") }
/^[ \t]*$/ || /^[ \t]*#/ { next }
/^[^ \t]/ {
  blk = ""
  if ($0 ~ /^[{[]/) { print "@@flow"; next }
  if (!splitkey($0)) next
  k = unq(K)
  if (k == "mirrors") { blk = "m"; l1 = -1; if (V != "") print "| mirrors: @@inline"; else print "| mirrors:"; next }
  if (k == "configs") { blk = "c"; ci = -1; if (V != "") cflow = 1 }
  next
}
blk == "m" {
  match($0, /^ */); d = RLENGTH
  if (l1 < 0) l1 = d
  if (d <= l1) {
    l2 = -1; keep = 0
    if (!splitkey($0)) { out(substr($0, 1, d) "@@dropped"); next }
    if (V != "") out(substr($0, 1, d) K ": @@inline"); else out(substr($0, 1, d) K ":")
    next
  }
  if (l2 < 0) l2 = d
  if (d <= l2) {
    if ($0 ~ /^ *-([ \t]|$)/) { if (keep) out(clean($0)); next }
    keep = 0; ep = 0
    if (splitkey($0)) { k = unq(K); if (k == "endpoint" || k == "rewrite") keep = 1; ep = k == "endpoint" }
    if (keep) out(clean($0)); else out(substr($0, 1, d) "@@dropped")
    next
  }
  if (keep) out(clean($0))
  next
}
blk == "c" {
  if ($0 ~ /^ *-/) next
  match($0, /^ */); d = RLENGTH
  if (ci < 0) ci = d
  if (d == ci) nc++
  next
}
END { if (trunc) print "@@truncated"; if (many) print "@@many"; print "@@configs " (cflow ? "?" : nc + 0) }
`;

/**
 * `$1` "sudo" for a non-root user (registries.yaml is often root-only: it holds credentials), `$2`
 * the file. Prints `@@file PATH`, then `@@absent`, `@@unreadable`, or the filtered mirrors block
 * (each line after "| ") and `@@configs N` (`?` for a flow-style configs).
 *
 * The file's `configs:` block (auth: username, password, token; tls: key and cert paths) is only
 * COUNTED on the node, never printed. Of the `mirrors:` block the node prints the registry names
 * and, under each, only the `endpoint` and `rewrite` keys with what they hold (comments dropped, a
 * URL's user:password@ replaced up to the last `@` of its authority, as URL parsers split it
 * (docs/k3s-facts.md, "Which images a site needs"), so a password holding `@` shows nothing); any
 * other key is replaced by a `@@dropped` marker and a flow-style value it cannot filter by a
 * `@@inline` one. So whatever the file holds and however it is laid out, only those values are sent.
 */
export const REGISTRIES_SCRIPT = [
  'S=$1; F=$2; LC_ALL=C; export LC_ALL',
  `P='${AWK}'`,
  'rd() { if [ -r "$F" ]; then cat -- "$F"; elif [ "$S" = sudo ]; then sudo -n cat -- "$F" 2>/dev/null; else return 1; fi; }',
  'is() { [ -e "$F" ] || { [ "$S" = sudo ] && sudo -n test -e "$F" 2>/dev/null; }; }',
  'echo "@@file $F"',
  'if ! is; then echo "@@absent"; exit 0; fi',
  'if ! rd >/dev/null 2>&1; then echo "@@unreadable"; exit 0; fi',
  `rd | head -c ${REGISTRIES_MAX_BYTES + 1} | awk -v q="'" -v max=${REGISTRIES_MAX_BYTES} "$P"`,
].join('\n');

/** The script's $0: how a process listing tells it apart. */
export const REGISTRIES_SCRIPT_NAME = 'holdfast-registries';

/** registries.yaml beside the distro's config.yaml. */
export function registriesFileOf(distro: Distro): string {
  return path.posix.join(path.posix.dirname(distroProfile(distro).configFile), 'registries.yaml');
}

export function registriesArgv(sudo: boolean, file: string): string[] {
  return ['sh', '-c', REGISTRIES_SCRIPT, REGISTRIES_SCRIPT_NAME, sudo ? 'sudo' : '', file];
}

/**
 * One reading of registries.yaml, for every use of it on a node: what `inspect` shows, and the
 * registry names the embedded registry mirrors (core/node/embeddedRegistry.ts).
 */
export interface RegistriesRead {
  registries: NodeRegistries;
  /**
   * Every key under `mirrors`, unquoted, as the node sent it: also a mirror written in flow style
   * or in a file the full reading does not understand (k3s's embedded registry needs only the key).
   */
  mirrorNames: string[];
}

/** Mirror names kept at most (a real file lists a handful). */
const MAX_MIRROR_NAMES = 256;

/** The keys one level under each `mirrors:` the script sent (`K:` or `K: @@inline`; `@@dropped` has none). */
function mirrorNamesOf(block: readonly string[]): string[] {
  const names: string[] = [];
  let level = -1;
  for (const line of block) {
    const d = /^ */.exec(line)![0].length;
    if (d === 0) {
      level = -1;
      continue;
    }
    if (level < 0) level = d;
    if (d !== level || /^ *@@dropped$/.test(line)) continue;
    const key = line.slice(d).replace(/:( @@inline)?$/, '').replace(/^(["'])(.*)\1$/, '$2');
    if (key && !names.includes(key) && names.length < MAX_MIRROR_NAMES) names.push(key);
  }
  return names;
}

/** Why a file that is there could not be read, by whether sudo -n was tried. */
export function unreadableWhy(sudo: boolean): string {
  return sudo ? 'not readable even through sudo -n' : "root-only: connect as root, or let Holdfast use sudo -n (the node's --sudo option)";
}

/** Reads the script's answer. Pure: tested against the script run on real files. */
export function parseRegistriesAnswer(stdout: string, sudo: boolean, file: string, who = 'k3s'): RegistriesRead {
  const block: string[] = [];
  let state: 'absent' | 'unreadable' | null = null;
  let configs: number | null = null;
  let flow = false;
  const notes: string[] = [];
  for (const line of stdout.split('\n')) {
    if (line.startsWith('| ')) block.push(line.slice(2));
    else if (line === '@@absent') state = 'absent';
    else if (line === '@@unreadable') state = 'unreadable';
    else if (line === '@@flow') flow = true;
    else if (line === '@@many') notes.push('more than 4000 lines in the mirrors block: only the first were read');
    else if (line === '@@truncated') notes.push(`larger than ${REGISTRIES_MAX_BYTES} bytes: only the start was read`);
    else if (line.startsWith('@@configs ')) {
      const n = line.slice(10);
      configs = /^\d{1,6}$/.test(n) ? Number(n) : null;
    }
  }
  if (state === 'absent') return { registries: { file, state, mirrors: [], configs: null, notes: [] }, mirrorNames: [] };
  if (state === 'unreadable') {
    return { registries: { file, state, mirrors: [], configs: null, notes: [unreadableWhy(sudo)] }, mirrorNames: [] };
  }
  // JSON (YAML's flow style) cannot be cut into its mirrors and configs on the node: nothing was sent.
  if (flow) return { registries: { file, state: 'not-understood', mirrors: [], configs: null, notes: [...notes, 'written as JSON or in flow style: Holdfast reads block-style YAML only'] }, mirrorNames: [] };
  const parsed = parseMirrorsBlock(block, who);
  return {
    registries: { file, state: parsed.understood ? 'read' : 'not-understood', mirrors: parsed.mirrors, configs, notes: [...notes, ...parsed.notes] },
    mirrorNames: mirrorNamesOf(block),
  };
}

/** What the script needs to know of a node. */
export function registriesOptions(def: Pick<NodeDef, 'sudo'>, info: Pick<NodeInfo, 'distro'>): RegistriesOptions {
  return { sudo: def.sudo === true, file: registriesFileOf(info.distro), who: distroDisplayName(info.distro) };
}

/** A reading that did not happen (the exec failed, timed out or the connection dropped): `why` says so. */
export function registriesNotRead(file: string, why: string): RegistriesRead {
  return { registries: { file, state: 'unreadable', mirrors: [], configs: null, notes: [why] }, mirrorNames: [] };
}

/** Asks the node (one exec); never throws for what the node answers, only for a dropped connection. */
/** How to read a node's registries.yaml: through sudo or not, which file, and the distro's name for the notes. */
export interface RegistriesOptions {
  sudo: boolean;
  file: string;
  who?: string;
}

export async function readRegistries(ssh: Pick<SshConnection, 'exec'>, opts: RegistriesOptions): Promise<RegistriesRead> {
  try {
    const r = await ssh.exec(registriesArgv(opts.sudo, opts.file), { timeoutMs: 15_000 });
    if (r.code !== 0) return registriesNotRead(opts.file, `the read failed (exit ${r.code ?? 'by a signal'}${r.stderr.trim() ? `: ${r.stderr.trim().split('\n')[0]!.slice(0, 120)}` : ''})`);
    return parseRegistriesAnswer(r.stdout, opts.sudo, opts.file, opts.who);
  } catch (e) {
    if (e instanceof HoldfastError && (e.code === 'TIMEOUT' || e.code === 'REFUSED')) return registriesNotRead(opts.file, e.message);
    throw e;
  }
}
