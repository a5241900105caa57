// A small reader for OpenSSH client configuration (~/.ssh/config), enough to import the hosts a
// technician already reaches with `ssh ALIAS` as Holdfast nodes. It follows ssh_config(5): for
// each setting the FIRST value obtained wins (IdentityFile accumulates), exactly as ssh resolves
// it. What is supported is on parseSshConfig; `Match` blocks are not evaluated (their lines are
// skipped and reported in the notes).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { formatLimit, limit, limitError } from '../limits';
import os from 'node:os';
import path from 'node:path';
import { hostPatternListMatches, wildcardMatch } from '../../shared/hostPatterns';
import { nodeInputSchema } from '../../shared/contract';
import { HoldfastError } from '../errors';
import type { NodeDef, NodeInput } from '../../shared/domain/nodes';
import { logger } from '../log';
import type { RemedyOf } from '../../shared/remedy';

const log = logger('config');

export interface SshConfigNote {
  file: string;
  line: number;
  message: string;
}

/** One `Keyword args…` line with the block it sits in. */
export interface SshConfigDirective {
  /** Lower-cased keyword. */
  keyword: string;
  args: string[];
  file: string;
  line: number;
  /** Patterns of the enclosing Host block; null before any Host (applies to every host). */
  hostPatterns: string[] | null;
}

export interface ParsedSshConfig {
  directives: SshConfigDirective[];
  /** Concrete aliases (no wildcard, not negated) in the order they first appear. */
  aliases: { alias: string; file: string; line: number }[];
  notes: SshConfigNote[];
}

export interface SshConfigEnv {
  /** Home directory for `~` and the base of relative Include paths (`~/.ssh`). */
  home: string;
  /** Local user name (%u, and the remote user when the config sets none, as ssh does). */
  localUser: string;
  /** Local host name (%l). */
  localHost?: string;
}

export function defaultSshConfigEnv(): SshConfigEnv {
  return { home: os.homedir(), localUser: os.userInfo().username, localHost: os.hostname() };
}

const MAX_INCLUDE_DEPTH = limit('sshConfig.includeDepth');
const MAX_FILES = limit('sshConfig.files');
const MAX_FILE_BYTES = limit('sshConfig.fileBytes');

/** Reads one config file within sshConfig.fileBytes (a FIFO or /dev/zero must not be read forever). */
function readConfigFile(file: string): string {
  const st = statSync(file);
  if (!st.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: 'EINVAL' });
  if (st.size > MAX_FILE_BYTES) throw limitError('sshConfig.fileBytes', `${file} is ${st.size.toLocaleString('en-US')} bytes long`, 'INVALID_INPUT');
  return readFileSync(file, 'utf8');
}

/** Splits a config line's arguments: whitespace-separated, "quoted" words, `#word` ends the line. */
export function splitArgs(s: string): string[] | { error: string } {
  const out: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) break;
    if (s[i] === '#') break;
    let word = '';
    if (s[i] === '"') {
      const end = s.indexOf('"', i + 1);
      if (end < 0) return { error: 'unterminated quote' };
      word = s.slice(i + 1, end);
      i = end + 1;
    } else {
      while (i < s.length && !/\s/.test(s[i]!)) {
        if (s[i] === '"') {
          const end = s.indexOf('"', i + 1);
          if (end < 0) return { error: 'unterminated quote' };
          word += s.slice(i + 1, end);
          i = end + 1;
        } else word += s[i++];
      }
    }
    out.push(word);
  }
  return out;
}

/** A Host line's patterns against an alias (shared/hostPatterns: case-insensitive, `!` vetoes). */
export const hostMatches = (patterns: string[], alias: string): boolean => hostPatternListMatches(patterns, alias);

const isWildcard = (p: string) => p.includes('*') || p.includes('?') || p.startsWith('!');

function expandTilde(p: string, env: SshConfigEnv): string {
  if (p === '~') return env.home;
  if (p.startsWith('~/')) return path.join(env.home, p.slice(2));
  return p;
}

/** Paths an Include argument names: `~`, relative to ~/.ssh, `*`/`?` globs in any component. */
function includePaths(arg: string, env: SshConfigEnv): string[] {
  let p = expandTilde(arg, env);
  if (!path.isAbsolute(p)) p = path.join(env.home, '.ssh', p);
  const parts = p.split('/').filter(Boolean);
  let bases = ['/'];
  for (const part of parts) {
    const next: string[] = [];
    for (const b of bases) {
      if (!/[*?]/.test(part)) {
        next.push(path.join(b, part));
        continue;
      }
      let names: string[] = [];
      try {
        names = readdirSync(b);
      } catch (err) {
        log.debug('ssh config Include dir not readable; skipped', { dir: b, err });
        continue;
      }
      for (const n of names.sort()) if (!n.startsWith('.') && wildcardMatch(part, n)) next.push(path.join(b, n));
    }
    bases = next;
    // `Include /*/*/*` must not walk the whole file system.
    if (bases.length > MAX_FILES) throw limitError('sshConfig.files', `Include ${arg} matches more than ${formatLimit('sshConfig.files')} paths`, 'INVALID_INPUT');
  }
  return bases.filter((f) => {
    try {
      return statSync(f).isFile();
    } catch (err) {
      log.debug('ssh config Include match not a readable file; skipped', { file: f, err });
      return false;
    }
  });
}

/**
 * Parses config text (and what it Includes, read from disk). Problems with the content become
 * notes; only going over a limit throws (INVALID_INPUT naming it).
 *
 * Supported, as ssh_config(5) defines them:
 * - `Keyword value` and `Keyword=value`, keywords case-insensitive, "double-quoted" arguments,
 *   `#` comments (whole lines, and an unquoted word starting with `#` ends the line).
 * - `Host` blocks with `*` / `?` wildcards and `!negated` patterns; lines before the first
 *   `Host` apply to every host.
 * - `Include` (globs, `~`, relative to ~/.ssh, nested up to 16 deep, missing files ignored); an
 *   Include inside a Host block applies to that block only. Bounded (limits.ts 'sshConfig.*'):
 *   nesting past sshConfig.includeDepth is skipped with a note; more files than
 *   sshConfig.files (an Include loop fanning out is exponential) or a file larger than
 *   sshConfig.fileBytes is an INVALID_INPUT naming the limit.
 * - Tokens in HostName (%h %%), IdentityFile and UserKnownHostsFile (%h %n %p %r %u %d %l %%),
 *   and `~/` in paths.
 */
export function parseSshConfig(text: string, file: string, env: SshConfigEnv): ParsedSshConfig {
  const out: ParsedSshConfig = { directives: [], aliases: [], notes: [] };
  const seen = new Set<string>();
  let files = 1;
  const walk = (content: string, f: string, depth: number, block: string[] | null): void => {
    let current = block;
    let inMatch = false;
    let matchNoted = false;
    const lines = content.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const lineNo = i + 1;
      const raw = lines[i]!.trim();
      if (!raw || raw.startsWith('#')) continue;
      const m = /^([A-Za-z][A-Za-z0-9]*)(?:\s*=\s*|\s+)(.*)$/.exec(raw) ?? /^([A-Za-z][A-Za-z0-9]*)()$/.exec(raw);
      if (!m) {
        out.notes.push({ file: f, line: lineNo, message: `cannot read "${raw.slice(0, 60)}": skipped` });
        continue;
      }
      const keyword = m[1]!.toLowerCase();
      const args = splitArgs(m[2]!);
      if ('error' in args) {
        out.notes.push({ file: f, line: lineNo, message: `${m[1]}: ${args.error}: skipped` });
        continue;
      }
      if (keyword === 'host') {
        inMatch = false;
        current = args;
        for (const a of args) {
          if (isWildcard(a) || seen.has(a)) continue;
          seen.add(a);
          out.aliases.push({ alias: a, file: f, line: lineNo });
        }
        continue;
      }
      if (keyword === 'match') {
        inMatch = true;
        if (!matchNoted) {
          out.notes.push({ file: f, line: lineNo, message: `Match blocks are not evaluated: "Match ${args.join(' ')}" and its settings were ignored` });
          matchNoted = true;
        }
        continue;
      }
      if (inMatch) continue;
      if (keyword === 'include') {
        if (depth >= MAX_INCLUDE_DEPTH) {
          out.notes.push({ file: f, line: lineNo, message: `Include nested more than ${MAX_INCLUDE_DEPTH} deep: skipped` });
          continue;
        }
        for (const a of args) {
          for (const inc of includePaths(a, env)) {
            if (++files > MAX_FILES) {
              throw limitError('sshConfig.files', `${file} and its Includes are more than ${formatLimit('sshConfig.files')} files (an Include loop?)`, 'INVALID_INPUT');
            }
            let t: string;
            try {
              t = readConfigFile(inc);
            } catch (err) {
              if (err instanceof HoldfastError) throw err;
              log.debug('ssh config Include not readable; skipped', { file: inc, err });
              continue; // ssh ignores includes it cannot read
            }
            walk(t, inc, depth + 1, current);
          }
        }
        continue;
      }
      out.directives.push({ keyword, args, file: f, line: lineNo, hostPatterns: current });
    }
  };
  walk(text, file, 0, null);
  return out;
}

export function readSshConfigFile(file: string, env: SshConfigEnv): ParsedSshConfig {
  return parseSshConfig(readConfigFile(file), file, env);
}

/** The settings ssh would use for `ssh ALIAS` (the subset Holdfast needs). */
export interface ResolvedSshHost {
  alias: string;
  hostName: string;
  user: string | null;
  port: number | null;
  identityFiles: string[];
  proxyJump: string | null;
  proxyCommand: string | null;
  userKnownHostsFiles: string[];
  notes: string[];
}

/** Expands %-tokens as ssh does; unknown tokens are left alone and reported. */
export function expandTokens(value: string, t: Record<string, string>, notes: string[]): string {
  return value.replace(/%(.)/g, (whole, c: string) => {
    if (c === '%') return '%';
    const v = t[c];
    if (v === undefined) {
      notes.push(`token ${whole} in "${value}" is not supported: left as is`);
      return whole;
    }
    return v;
  });
}

export function resolveSshHost(parsed: ParsedSshConfig, alias: string, env: SshConfigEnv): ResolvedSshHost {
  const first = new Map<string, string[]>();
  const identity: string[] = [];
  for (const d of parsed.directives) {
    if (d.hostPatterns && !hostMatches(d.hostPatterns, alias)) continue;
    if (d.keyword === 'identityfile') {
      if (d.args[0]) identity.push(d.args[0]);
      continue;
    }
    if (!first.has(d.keyword)) first.set(d.keyword, d.args);
  }
  const notes: string[] = [];
  const one = (k: string) => first.get(k)?.[0] ?? null;
  const hostName = expandTokens(one('hostname') ?? alias, { h: alias }, notes);
  const portRaw = one('port');
  let port: number | null = null;
  if (portRaw !== null) {
    const n = Number(portRaw);
    if (Number.isInteger(n) && n >= 1 && n <= 65535) port = n;
    else notes.push(`Port "${portRaw}" is not a port number: ignored`);
  }
  const user = one('user');
  const tokens: Record<string, string> = {
    h: hostName,
    n: alias,
    p: String(port ?? 22),
    r: user ?? env.localUser,
    u: env.localUser,
    d: env.home,
    l: (env.localHost ?? 'localhost').split('.')[0]!,
    L: (env.localHost ?? 'localhost').split('.')[0]!,
  };
  const pathValue = (v: string) => expandTilde(expandTokens(v, tokens, notes), env);
  const identityFiles = identity.filter((v) => v.toLowerCase() !== 'none').map(pathValue);
  const pj = one('proxyjump');
  const pc = first.get('proxycommand');
  return {
    alias,
    hostName,
    user,
    port,
    identityFiles,
    proxyJump: pj && pj.toLowerCase() !== 'none' ? first.get('proxyjump')!.join(' ') : null,
    proxyCommand: pc && pc[0] && pc[0].toLowerCase() !== 'none' ? pc.join(' ') : null,
    userKnownHostsFiles: (first.get('userknownhostsfile') ?? []).filter((v) => v.toLowerCase() !== 'none').map(pathValue),
    notes,
  };
}

/** One hop of a ProxyJump value: `[user@]host[:port]` or `ssh://[user@]host[:port]`. */
export function parseJumpHop(hop: string): { user: string | null; host: string; port: number | null } | null {
  const s = hop.replace(/^ssh:\/\//, '');
  const m = /^(?:([^@]+)@)?(\[[^\]]+\]|[^:@]+)(?::(\d+))?$/.exec(s);
  if (!m) return null;
  return { user: m[1] ?? null, host: m[2]!.replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : null };
}

export interface SshImportOptions {
  /** Only aliases matching one of these ssh-style patterns (default: every concrete Host). */
  patterns?: string[];
  group?: string;
  /** known_hosts for every imported node (else the host's UserKnownHostsFile, else Holdfast's default). */
  knownHosts?: string;
  /** Nodes already configured: their names are not imported again, and they may serve as jump hosts. */
  existing: Pick<NodeDef, 'name'>[];
}

export interface SshImportPlan {
  nodes: NodeInput[];
  /** What was not imported and why; `remedy`: how to change the node that is there already (the CLI words it). */
  skipped: { alias: string; reason: string; remedy?: RemedyOf<'node-edit'> }[];
  /** Things worth knowing that did not stop an import (per alias, or about the file). */
  notes: string[];
}

/** The Holdfast nodes a parsed ssh config describes; validates every one, writes nothing. */
export function planSshImport(parsed: ParsedSshConfig, env: SshConfigEnv, opts: SshImportOptions): SshImportPlan {
  const plan: SshImportPlan = { nodes: [], skipped: [], notes: parsed.notes.map((n) => `${n.file}:${n.line}: ${n.message}`) };
  const existing = new Set(opts.existing.map((n) => n.name));
  const candidates = parsed.aliases.filter((a) => !opts.patterns?.length || opts.patterns.some((p) => hostMatches([p], a.alias)));
  const pending = new Map<string, { input: NodeInput; jumpVia: string | null }>();
  for (const { alias } of candidates) {
    if (existing.has(alias)) {
      plan.skipped.push({ alias, reason: `a node named "${alias}" is already configured`, remedy: { action: 'node-edit', node: alias } });
      continue;
    }
    const r = resolveSshHost(parsed, alias, env);
    for (const n of r.notes) plan.notes.push(`${alias}: ${n}`);
    if (r.proxyCommand) {
      plan.skipped.push({ alias, reason: `ProxyCommand is not supported (${r.proxyCommand})` });
      continue;
    }
    let jumpVia: string | null = null;
    if (r.proxyJump) {
      const hops = r.proxyJump.split(',');
      const hop = hops.length === 1 ? parseJumpHop(hops[0]!.trim()) : null;
      if (!hop) {
        plan.skipped.push({
          alias,
          reason: hops.length > 1 ? `ProxyJump through several hops (${r.proxyJump}) is not supported yet` : `ProxyJump "${r.proxyJump}" cannot be read`,
        });
        continue;
      }
      jumpVia = hop.host;
      if (hop.user || hop.port) plan.notes.push(`${alias}: ProxyJump ${r.proxyJump}: the jump node's own user and port are used`);
    }
    const input: NodeInput = {
      name: alias,
      host: r.hostName,
      port: r.port ?? 22,
      user: r.user ?? env.localUser,
      ...(r.identityFiles[0] ? { identity: r.identityFiles[0] } : {}),
      ...(opts.knownHosts ? { knownHosts: opts.knownHosts } : r.userKnownHostsFiles[0] ? { knownHosts: r.userKnownHostsFiles[0] } : {}),
      ...(opts.group ? { group: opts.group } : {}),
    };
    if (r.identityFiles.length > 1) plan.notes.push(`${alias}: ${r.identityFiles.length} IdentityFile lines: Holdfast uses the first, ${r.identityFiles[0]}`);
    const valid = nodeInputSchema.safeParse(input);
    if (!valid.success) {
      const issue = valid.error.issues[0]!;
      plan.skipped.push({ alias, reason: `cannot be a Holdfast node: ${issue.path.join('.') || 'input'}: ${issue.message}` });
      continue;
    }
    pending.set(alias, { input, jumpVia });
  }
  // A jump host must be a configured node or one imported here; drop chains that lead nowhere
  // (repeat until stable: dropping one node can strand another that jumps through it).
  for (let changed = true; changed; ) {
    changed = false;
    for (const [alias, p] of pending) {
      if (!p.jumpVia) continue;
      if (p.jumpVia === alias) {
        pending.delete(alias);
        plan.skipped.push({ alias, reason: 'ProxyJump through itself' });
        changed = true;
      } else if (!existing.has(p.jumpVia) && !pending.has(p.jumpVia)) {
        pending.delete(alias);
        plan.skipped.push({
          alias,
          reason: `ProxyJump ${p.jumpVia}: that host is neither a configured node nor imported here (unsupported for now: import or add ${p.jumpVia} too)`,
        });
        changed = true;
      }
    }
  }
  for (const [, p] of pending) plan.nodes.push(p.jumpVia ? { ...p.input, jump: p.jumpVia } : p.input);
  return plan;
}
