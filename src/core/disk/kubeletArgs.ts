// The kubelet flags a node sets for image GC and eviction, from where k3s takes them:
//   1. /etc/rancher/<distro>/config.yaml, then config.yaml.d/*.yaml|yml in byte order
//      (`kubelet-arg:` replaces what earlier files set, `kubelet-arg+:` appends);
//   2. the running k3s/RKE2 process's command line (`--kubelet-arg=…`; k3s execs its
//      k3s-server with the original argv, so /proc/<pid>/cmdline is what the unit started);
//   3. a separate kubelet process (RKE2 runs one) with the flags themselves.
// kubelet takes the last occurrence of a flag, so they apply in that order.
//
// One fixed script reads them in one round trip; nothing user-supplied goes into it ($1 is
// "sudo" or "", $2 the detected distro, both fixed words). The config files hold join tokens and
// command lines may too, so only `kubelet-arg` entries and image-gc/eviction-hard arguments
// leave the node. Parsing is pure (tested against recorded output).
import { distroDisplayName, distroProfile } from '../../shared/distro';
import type { Distro } from '../../shared/domain';
import type { KubeletArg } from '../../shared/gcPolicy';
import { configFilesShell, DISTRO_WORDS, knownDistroShell } from '../node/distroShell';

// awk: a YAML file's kubelet-arg blocks (key line and what follows until the next top-level key),
// or, for a JSON file, each "kubelet-arg": [...] member on one line.
const CONFIG_AWK = [
  '{ L[NR] = $0 }',
  'END {',
  '  first = ""',
  '  for (i = 1; i <= NR; i++) if (L[i] ~ /[^ \\t\\r]/) { first = L[i]; break }',
  '  if (first ~ /^[ \\t]*[{]/) {',
  '    s = ""; for (i = 1; i <= NR; i++) s = s L[i] " "',
  '    print "@@json"',
  '    while (match(s, /"kubelet-arg[+]?"[ \\t]*:[ \\t]*\\[[^]]*\\]/)) { print "|" substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH) }',
  '    exit',
  '  }',
  '  blk = 0',
  '  for (i = 1; i <= NR; i++) {',
  '    l = L[i]',
  '    if (l ~ /^[^ \\t#-]/) { blk = (l ~ /^["\\047]?kubelet-arg["\\047]?[+]?[ \\t]*:/); if (blk) print "|" l; continue }',
  '    if (blk) print "|" l',
  '  }',
  '}',
].join('\n');

// awk over one process's argv (one per line): k3s/RKE2 server|agent or kubelet, and only the
// arguments about image GC and eviction (plus the value after a flag given without `=`).
const PROC_AWK = [
  'NR == 1 { n = $0; sub(/.*\\//, "", n); if (n == "kubelet") k = "kubelet"; else if (n == d) k = "distro"; else exit; next }',
  'NR == 2 && k == "distro" { if ($0 != "server" && $0 != "agent") exit; print "@@proc " d " " $0; next }',
  'NR == 2 && k == "kubelet" { print "@@proc kubelet" }',
  'pend { print "|" $0; pend = 0; next }',
  '/image-gc-|eviction-hard/ { print "|" $0; pend = ($0 ~ /^-+(image-gc-[a-z-]*|eviction-hard)$/) }',
].join('\n');

export const KUBELET_ARGS_SCRIPT = [
  'S=$1; D=$2; LC_ALL=C; export LC_ALL',
  // An unknown word reads as the assumed distro (k3s), for the config files and the processes alike.
  knownDistroShell('D'),
  `CA='${CONFIG_AWK}'`,
  `PA='${PROC_AWK}'`,
  ...configFilesShell('D', 'awk "$CA"', { reportUnreadableDir: false }),
  // comm (the executable's name: k3s-server, k3s-agent, rke2, kubelet) picks the few processes worth reading.
  'for p in /proc/[0-9]*; do',
  '  c2=; read -r c2 < "$p/comm" 2>/dev/null || continue',
  `  case "$c2" in ${DISTRO_WORDS.map((d) => `${d}*`).join('|')}|kubelet) ;; *) continue;; esac`,
  '  tr "\\000" "\\n" < "$p/cmdline" 2>/dev/null | head -n 4096 | awk -v d="$D" "$PA"',
  'done',
  'exit 0',
].join('\n');

/** The script's argv: fixed words only. */
export function kubeletArgsArgv(sudo: boolean, distro: Distro): string[] {
  return ['sh', '-c', KUBELET_ARGS_SCRIPT, 'holdfast-kubelet-args', sudo ? 'sudo' : '', distroProfile(distro).id];
}

/** YAML/JSON scalar as k3s would read it (quotes removed). */
function unquote(s: string): string {
  const t = s.trim();
  if (t.startsWith('"') && t.endsWith('"') && t.length >= 2) {
    try {
      return JSON.parse(t) as string;
    } catch {
      return t.slice(1, -1);
    }
  }
  if (t.startsWith("'") && t.endsWith("'") && t.length >= 2) return t.slice(1, -1).replace(/''/g, "'");
  return t.replace(/\s+#.*$/, '');
}

/** `[a, "b,c", 'd']` → items (commas inside quotes kept). */
function flowList(s: string): string[] | null {
  const t = s.trim();
  if (!t.startsWith('[') || !t.endsWith(']')) return null;
  const items: string[] = [];
  let cur = '';
  let q: string | null = null;
  for (const ch of t.slice(1, -1)) {
    if (q) {
      cur += ch;
      if (ch === q) q = null;
    } else if (ch === '"' || ch === "'") {
      q = ch;
      cur += ch;
    } else if (ch === ',') {
      items.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur.trim()) items.push(cur);
  return items.map(unquote).filter((x) => x !== '');
}

/** One kubelet-arg setting of a config file. */
interface Setting {
  append: boolean;
  values: string[] | null;
}

function yamlSettings(lines: string[]): Setting[] {
  const out: Setting[] = [];
  let cur: Setting | null = null;
  for (const raw of lines) {
    const l = raw.replace(/\r$/, '');
    const key = /^["']?kubelet-arg["']?(\+?)\s*:(.*)$/.exec(l);
    if (key) {
      const rest = key[2]!.replace(/(^|\s)#.*$/, '').trim();
      cur = { append: key[1] === '+', values: [] };
      out.push(cur);
      if (rest) {
        // Anchors, aliases, tags, block scalars and flow maps are not read, never guessed.
        cur.values = /^[&*!|>{]/.test(rest) ? null : rest.startsWith('[') ? flowList(rest) : [unquote(rest)];
        cur = null;
      }
      continue;
    }
    if (!cur || !cur.values) continue;
    const item = /^\s*-\s+(.*)$/.exec(l) ?? /^\s*-()$/.exec(l);
    if (item) {
      const v = unquote(item[1] ?? '');
      if (v) cur.values.push(v);
    } else if (l.trim() && !l.trim().startsWith('#')) {
      cur.values = null; // something Holdfast does not read (block scalars, anchors…)
    }
  }
  return out;
}

function jsonSettings(lines: string[]): Setting[] {
  const out: Setting[] = [];
  for (const l of lines) {
    try {
      const obj = JSON.parse(`{${l}}`) as Record<string, unknown>;
      for (const [k, v] of Object.entries(obj)) {
        out.push({ append: k.endsWith('+'), values: Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : null });
      }
    } catch {
      out.push({ append: false, values: null });
    }
  }
  return out;
}

/** `image-gc-high-threshold=90` (leading dashes allowed) → flag and value. */
function splitFlag(s: string): { flag: string; value: string } | null {
  const m = /^-*([a-z][a-z0-9-]*)=(.*)$/.exec(s.trim());
  return m ? { flag: m[1]!, value: m[2]! } : null;
}

export interface KubeletArgsResult {
  args: KubeletArg[];
  notes: string[];
  /** Which places were read, for the source line ("config.yaml, k3s server's command line"). */
  read: string[];
}

export function parseKubeletArgs(stdout: string, distro: Distro): KubeletArgsResult {
  const who = distroDisplayName(distro);
  type Section = { kind: 'cfg' | 'unreadable' | 'proc'; name: string; lines: string[]; json: boolean };
  const sections: Section[] = [];
  for (const line of stdout.split('\n')) {
    const cfg = /^@@(cfg|unreadable) (\/.*)$/.exec(line);
    const proc = /^@@proc (.+)$/.exec(line);
    if (cfg) sections.push({ kind: cfg[1] as 'cfg' | 'unreadable', name: cfg[2]!, lines: [], json: false });
    else if (proc) sections.push({ kind: 'proc', name: proc[1]!, lines: [], json: false });
    else if (line === '@@json' && sections.length) sections[sections.length - 1]!.json = true;
    else if (line.startsWith('|') && sections.length) sections[sections.length - 1]!.lines.push(line.slice(1));
  }
  const notes: string[] = [];
  const read: string[] = [];
  // Config files: k3s merges kubelet-arg across files (later replaces, `+` appends).
  let fromConfig: KubeletArg[] = [];
  for (const s of sections.filter((x) => x.kind !== 'proc')) {
    if (s.kind === 'unreadable') {
      notes.push(`${s.name} could not be read by the SSH user, so kubelet arguments it may set are not known.`);
      continue;
    }
    read.push(s.name);
    for (const set of s.json ? jsonSettings(s.lines) : yamlSettings(s.lines)) {
      if (!set.values) {
        notes.push(`The kubelet-arg value in ${s.name} is not a list Holdfast can read; its GC and eviction settings are not known.`);
        continue;
      }
      const parsed = set.values.map(splitFlag).filter((f): f is { flag: string; value: string } => f !== null).map((f) => ({ ...f, source: s.name }));
      fromConfig = set.append ? [...fromConfig, ...parsed] : parsed;
    }
  }
  const args = [...fromConfig];
  // The running processes: the distro's own --kubelet-arg values, then a separate kubelet's flags.
  const procs = sections.filter((x) => x.kind === 'proc');
  const distroProc = procs.find((p) => p.name !== 'kubelet');
  if (distroProc) {
    const where = `the ${distroProc.name} command line`;
    read.push(where);
    for (const l of distroProc.lines) {
      const v = l.replace(/^--?kubelet-arg=/, '');
      const f = splitFlag(v);
      if (f && !/^-+kubelet-arg$/.test(l)) args.push({ ...f, source: where });
    }
  }
  const kubelet = procs.find((p) => p.name === 'kubelet');
  if (kubelet) {
    const where = "the kubelet process's command line";
    read.push(where);
    const ls = kubelet.lines;
    for (let i = 0; i < ls.length; i++) {
      const l = ls[i]!;
      const f = splitFlag(l);
      if (f) args.push({ ...f, source: where });
      else if (/^-+(image-gc-[a-z-]*|eviction-hard)$/.test(l) && i + 1 < ls.length) {
        args.push({ flag: l.replace(/^-+/, ''), value: ls[++i]!, source: where });
      }
    }
  }
  if (!distroProc && !kubelet) notes.push(`No running ${who} process was found, so only its config files were read (flags given to the service itself are not known).`);
  return { args: args.filter((a) => /^(image-gc-(high|low)-threshold|eviction-hard)$/.test(a.flag)), notes, read };
}
