// The kubelet settings a node runs with for image GC, eviction and credential verification, read
// from where k3s takes them (config.yaml and its drop-ins, the process command lines, kubelet
// config files: docs/k3s-facts.md, "kubelet's max-age GC"; the order is on KUBELET_ARGS_SCRIPT).
// The config files hold join tokens and command lines may too, so only `kubelet-arg` entries,
// the arguments Holdfast reads and those kubelet config fields leave the node. Parsing is pure
// (tested against recorded output).
import { distroDisplayName, distroProfile } from '../../shared/distro';
import type { Distro } from '../../shared/domain/nodes';
import type { KubeletArg } from '../../shared/gcPolicy';
import { AWK_CONFIG_OPENING, configFilesShell, DISTRO_WORDS, knownDistroShell } from '../node/distroShell';

// awk: a YAML file's kubelet-arg blocks (key line and what follows until the next top-level key),
// or, for a JSON file, each "kubelet-arg": [...] member on one line.
const CONFIG_AWK = [
  ...AWK_CONFIG_OPENING,
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

// The arguments Holdfast reads, as they appear in argv: a --kubelet-arg value (k3s/RKE2) or
// kubelet's own flag.
const WANTED = '(image-gc-|image-maximum-gc-age|eviction-hard|feature-gates|config(-dir)?(=|$))';

// awk over one process's argv (one per line): k3s/RKE2 server|agent or kubelet. Of k3s/RKE2 only
// the --kubelet-arg values Holdfast reads; of kubelet only those flags (plus the value after a
// flag given without `=`).
const PROC_AWK = [
  'NR == 1 { n = $0; sub(/.*\\//, "", n); if (n == "kubelet") k = "kubelet"; else if (n == d) k = "distro"; else exit; next }',
  'NR == 2 && k == "distro" { if ($0 != "server" && $0 != "agent") exit; print "@@proc " d " " $0; next }',
  'NR == 2 && k == "kubelet" { print "@@proc kubelet" }',
  'pend { print "|" $0; pend = 0; next }',
  'k == "distro" && /^-+kubelet-arg$/ { ka = 1; next }',
  `k == "distro" && ka { ka = 0; if ($0 ~ /^-*${WANTED}/) print "|" $0; next }`,
  `k == "distro" && /^-+kubelet-arg=-*${WANTED}/ { print "|" $0; next }`,
  `k == "kubelet" && /^-+${WANTED}/ { print "|" $0; pend = ($0 !~ /=/) }`,
].join('\n');

/** The kubelet config fields Holdfast reads (KubeletConfiguration, top level). */
const KCFG_FIELDS = 'imageMaximumGCAge|imageGCHighThresholdPercent|imageGCLowThresholdPercent|imagePullCredentialsVerificationPolicy|preloadedImagesVerificationAllowlist|featureGates|evictionHard';

// awk over a kubelet config file (YAML or JSON): the top-level fields Holdfast reads, each with
// the indented lines under it; a JSON file whole, on one line.
const KCFG_AWK = [
  '{ L[NR] = $0 }',
  'END {',
  '  first = ""',
  '  for (i = 1; i <= NR; i++) if (L[i] ~ /[^ \\t\\r]/) { first = L[i]; break }',
  '  if (first ~ /^[ \\t]*[{]/) { s = ""; for (i = 1; i <= NR; i++) s = s L[i] " "; print "@@json"; print "|" s; exit }',
  '  blk = 0',
  '  for (i = 1; i <= NR; i++) {',
  '    l = L[i]',
  `    if (l ~ /^[^ \\t#-]/) { blk = (l ~ /^["\\047]?(${KCFG_FIELDS})["\\047]?[ \\t]*:/); if (blk) print "|" l; continue }`,
  '    if (blk) print "|" l',
  '  }',
  '}',
].join('\n');

// Shell functions: kc FILE prints `@@kcfg FILE` and its fields (or @@kunreadable / @@kmissing);
// kd DIR prints `@@kdir DIR` and kc of each `*.conf` under it, subdirectories too, in path order
// (kubelet walks the dir; k3s copies a `config-dir=` dir into 20-cli-config-dir/ under its own).
const KCFG_SHELL = [
  `KA='${KCFG_AWK}'`,
  'kc() {',
  '  if [ -r "$1" ] && [ -f "$1" ]; then echo "@@kcfg $1"; head -c 262144 -- "$1" | awk "$KA"',
  '  elif [ "$S" = sudo ] && sudo -n cat -- "$1" >/dev/null 2>&1; then echo "@@kcfg $1"; sudo -n cat -- "$1" 2>/dev/null | head -c 262144 | awk "$KA"',
  '  elif [ -e "$1" ] || { [ "$S" = sudo ] && sudo -n stat -- "$1" >/dev/null 2>&1; }; then echo "@@kunreadable $1"',
  '  else echo "@@kmissing $1"; fi',
  '}',
  'kd() {',
  '  echo "@@kdir $1"',
  '  if [ -d "$1" ] && [ -r "$1" ] && [ -x "$1" ]; then find "$1" -name "*.conf" ! -type d 2>/dev/null',
  '  elif [ "$S" = sudo ]; then sudo -n find "$1" -name "*.conf" ! -type d 2>/dev/null',
  '  fi | sort | head -n 200 | while IFS= read -r f; do kc "$f"; done',
  '}',
];

/**
 * Reads the kubelet args, from where k3s takes them:
 *   1. /etc/rancher/<distro>/config.yaml, then config.yaml.d/*.yaml|yml in byte order
 *      (`kubelet-arg:` replaces what earlier files set, `kubelet-arg+:` appends);
 *   2. the running k3s/RKE2 process's command line (`--kubelet-arg=…`; k3s execs its
 *      k3s-server with the original argv, so /proc/<pid>/cmdline is what the unit started);
 *   3. a separate kubelet process (RKE2 runs one) with the flags themselves;
 *   4. kubelet config files: the one `config=` names, and the drop-in dir's `*.conf` files in
 *      name order (`config-dir=`, else `<data-dir>/agent/etc/kubelet.conf.d`, which k3s and RKE2
 *      pass as --config-dir). docs/k3s-facts.md, "kubelet's max-age GC".
 * kubelet applies its config file, then the drop-ins, then its flags (the last occurrence of a
 * flag wins): the args come out in that order.
 *
 * One round trip (a second only for a config file or dir a flag names); nothing user-supplied
 * goes into its text ($1 is "sudo" or "", $2 the detected distro, both fixed words; the data dir
 * and named paths are quoted arguments).
 */
export const KUBELET_ARGS_SCRIPT = [
  'S=$1; D=$2; R=$3; LC_ALL=C; export LC_ALL',
  // An unknown word reads as the assumed distro (k3s), for the config files and the processes alike.
  knownDistroShell('D'),
  ...KCFG_SHELL,
  // files mode: only the kubelet config file (f:PATH) and drop-in dir (d:PATH) a flag names.
  'if [ "$4" = files ]; then shift 4; for a in "$@"; do case "$a" in f:*) kc "${a#f:}";; d:*) kd "${a#d:}";; esac; done; exit 0; fi',
  `CA='${CONFIG_AWK}'`,
  `PA='${PROC_AWK}'`,
  ...configFilesShell('D', 'awk "$CA"', { reportUnreadableDir: false }),
  // comm (the executable's name: k3s-server, k3s-agent, rke2, kubelet) picks the few processes worth reading.
  'for p in /proc/[0-9]*; do',
  '  c2=; read -r c2 < "$p/comm" 2>/dev/null || continue',
  `  case "$c2" in ${DISTRO_WORDS.map((d) => `${d}*`).join('|')}|kubelet) ;; *) continue;; esac`,
  '  tr "\\000" "\\n" < "$p/cmdline" 2>/dev/null | head -n 4096 | awk -v d="$D" "$PA"',
  'done',
  // The drop-in dir k3s and RKE2 pass to their kubelet as --config-dir.
  'if [ -n "$R" ]; then kd "$R/agent/etc/kubelet.conf.d"; fi',
  'exit 0',
].join('\n');

/** The drop-in dir k3s and RKE2 give their kubelet (--config-dir), under the data dir. */
export const kubeletDropInDir = (dataDir: string): string => `${dataDir.replace(/\/+$/, '')}/agent/etc/kubelet.conf.d`;

/** The script's argv: fixed words, then the data dir as a plain argument (never in the text). */
export function kubeletArgsArgv(sudo: boolean, distro: Distro, dataDir = ''): string[] {
  return ['sh', '-c', KUBELET_ARGS_SCRIPT, 'holdfast-kubelet-args', sudo ? 'sudo' : '', distroProfile(distro).id, dataDir];
}

/** The second read: a kubelet config file and drop-in dir that a flag names (paths as arguments). */
export function kubeletFilesArgv(sudo: boolean, distro: Distro, paths: { file: string | null; dir: string | null }): string[] {
  return [
    ...kubeletArgsArgv(sudo, distro, ''),
    'files',
    ...(paths.file ? [`f:${paths.file}`] : []),
    ...(paths.dir ? [`d:${paths.dir}`] : []),
  ];
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
  /**
   * The kubelet config file and drop-in dir the flags name (`config=`, `config-dir=`) that the
   * first read did not cover: the caller reads them (kubeletFilesArgv) and parses both outputs.
   */
  unread: { file: string | null; dir: string | null };
}

/** The flags (and kubelet config fields) the GC policy reads; the rest is dropped. */
const READ_FLAGS = /^(image-gc-(high|low)-threshold|eviction-hard|image-maximum-gc-age|feature-gates|imagePullCredentialsVerificationPolicy|preloadedImagesVerificationAllowlist)$/;

/** A KubeletConfiguration field → the flag it stands for (fields with no flag keep their name). */
const FIELD_FLAG: Record<string, string> = {
  imageMaximumGCAge: 'image-maximum-gc-age',
  imageGCHighThresholdPercent: 'image-gc-high-threshold',
  imageGCLowThresholdPercent: 'image-gc-low-threshold',
  imagePullCredentialsVerificationPolicy: 'imagePullCredentialsVerificationPolicy',
  preloadedImagesVerificationAllowlist: 'preloadedImagesVerificationAllowlist',
};

/** A field's value as a flag's: scalars as written, lists comma-joined, maps as their flags write them. */
function fieldArg(field: string, value: unknown, source: string): KubeletArg | null {
  if (Object.hasOwn(FIELD_FLAG, field)) {
    if (typeof value === 'string' || typeof value === 'number') return { flag: FIELD_FLAG[field]!, value: String(value), source };
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return { flag: FIELD_FLAG[field]!, value: value.join(','), source };
    return null;
  }
  if ((field === 'featureGates' || field === 'evictionHard') && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => typeof v === 'string' || typeof v === 'boolean');
    if (field === 'featureGates') return { flag: 'feature-gates', value: entries.map(([k, v]) => `${k}=${String(v)}`).join(','), source };
    return { flag: 'eviction-hard', value: entries.map(([k, v]) => `${k}<${String(v)}`).join(','), source };
  }
  return null;
}

/**
 * The fields of a kubelet config file as the script printed them: top-level `key: value`, a
 * block or flow list, a block or flow map of scalars (YAML), or one JSON object. What is not
 * one of those is said, never guessed.
 */
export function kubeletConfigFields(lines: readonly string[], json: boolean, source: string, notes: string[]): KubeletArg[] {
  const out: KubeletArg[] = [];
  const push = (field: string, value: unknown) => {
    const a = fieldArg(field, value, source);
    if (a) out.push(a);
    else notes.push(`${field} in ${source} is not a value Holdfast can read.`);
  };
  if (json) {
    try {
      const obj = JSON.parse(lines.join(' ')) as unknown;
      if (typeof obj === 'object' && obj !== null && !Array.isArray(obj)) {
        for (const [k, v] of Object.entries(obj)) if (Object.hasOwn(FIELD_FLAG, k) || k === 'featureGates' || k === 'evictionHard') push(k, v);
      }
    } catch {
      notes.push(`${source} is not JSON Holdfast can read.`);
    }
    return out;
  }
  let cur: { field: string; items: string[] | null; map: Record<string, string> | null } | null = null;
  const flush = () => {
    if (!cur) return;
    if (cur.items) push(cur.field, cur.items);
    else if (cur.map) push(cur.field, cur.map);
    cur = null;
  };
  for (const raw of lines) {
    const l = raw.replace(/\r$/, '');
    const key = /^["']?([A-Za-z]+)["']?\s*:(.*)$/.exec(l);
    if (key) {
      flush();
      const field = key[1]!;
      const rest = key[2]!.replace(/(^|\s)#.*$/, '').trim();
      if (!rest) {
        cur = { field, items: null, map: null };
        continue;
      }
      if (rest.startsWith('[')) {
        const items = flowList(rest);
        if (items) push(field, items);
        else notes.push(`${field} in ${source} is not a value Holdfast can read.`);
      } else if (rest.startsWith('{')) {
        const map: Record<string, string> = {};
        for (const part of rest.slice(1, -1).split(',')) {
          const m = /^\s*["']?([^"':]+)["']?\s*:\s*(.+?)\s*$/.exec(part);
          if (m) map[m[1]!] = unquote(m[2]!);
        }
        push(field, map);
      } else if (/^[&*!|>]/.test(rest)) notes.push(`${field} in ${source} is not a value Holdfast can read.`);
      else push(field, unquote(rest));
      continue;
    }
    if (!cur || !l.trim() || l.trim().startsWith('#')) continue;
    const c: { field: string; items: string[] | null; map: Record<string, string> | null } = cur;
    const item = /^\s+-\s+(.*)$/.exec(l) ?? /^-\s+(.*)$/.exec(l);
    const entry = /^\s+["']?([^"':]+)["']?\s*:\s*(.+?)\s*$/.exec(l);
    if (item) (c.items ??= []).push(unquote(item[1]!));
    else if (entry) (c.map ??= {})[entry[1]!] = unquote(entry[2]!);
  }
  flush();
  return out;
}

type SectionKind = 'cfg' | 'unreadable' | 'proc' | 'kcfg' | 'kunreadable' | 'kmissing' | 'kdir';
/** One `@@kind name` block of the output, with its `|` lines. */
type Section = { kind: SectionKind; name: string; lines: string[]; json: boolean };
/** What the parse says about itself as it goes: notes for the reader, and the places read. */
type Reading = { notes: string[]; read: string[] };

function parseSections(output: string): Section[] {
  const sections: Section[] = [];
  for (const line of output.split('\n')) {
    const cfg = /^@@(cfg|unreadable|kcfg|kunreadable|kmissing|kdir) (\/.*)$/.exec(line);
    const proc = /^@@proc (.+)$/.exec(line);
    if (cfg) sections.push({ kind: cfg[1] as SectionKind, name: cfg[2]!, lines: [], json: false });
    else if (proc) sections.push({ kind: 'proc', name: proc[1]!, lines: [], json: false });
    else if (line === '@@json' && sections.length) sections[sections.length - 1]!.json = true;
    else if (line.startsWith('|') && sections.length) sections[sections.length - 1]!.lines.push(line.slice(1));
  }
  return sections;
}

/** The distro's config files: k3s merges kubelet-arg across files (later replaces, `+` appends). */
function configFileArgs(sections: Section[], r: Reading): KubeletArg[] {
  let fromConfig: KubeletArg[] = [];
  for (const s of sections.filter((x) => x.kind === 'cfg' || x.kind === 'unreadable')) {
    if (s.kind === 'unreadable') {
      r.notes.push(`${s.name} could not be read by the SSH user, so kubelet arguments it may set are not known.`);
      continue;
    }
    r.read.push(s.name);
    for (const set of s.json ? jsonSettings(s.lines) : yamlSettings(s.lines)) {
      if (!set.values) {
        r.notes.push(`The kubelet-arg value in ${s.name} is not a list Holdfast can read; its GC and eviction settings are not known.`);
        continue;
      }
      const parsed = set.values.map(splitFlag).filter((f): f is { flag: string; value: string } => f !== null).map((f) => ({ ...f, source: s.name }));
      fromConfig = set.append ? [...fromConfig, ...parsed] : parsed;
    }
  }
  return fromConfig;
}

/** The running processes: the distro's own --kubelet-arg values, then a separate kubelet's flags. */
function processArgs(sections: Section[], who: string, r: Reading): KubeletArg[] {
  const flags: KubeletArg[] = [];
  const procs = sections.filter((x) => x.kind === 'proc');
  const distroProc = procs.find((p) => p.name !== 'kubelet');
  if (distroProc) {
    const where = `the ${distroProc.name} command line`;
    r.read.push(where);
    for (const l of distroProc.lines) {
      const v = l.replace(/^--?kubelet-arg=/, '');
      const f = splitFlag(v);
      if (f && !/^-+kubelet-arg$/.test(l)) flags.push({ ...f, source: where });
    }
  }
  const kubelet = procs.find((p) => p.name === 'kubelet');
  if (kubelet) {
    const where = "the kubelet process's command line";
    r.read.push(where);
    const ls = kubelet.lines;
    for (let i = 0; i < ls.length; i++) {
      const l = ls[i]!;
      const f = splitFlag(l);
      if (f) flags.push({ ...f, source: where });
      else if (/^-+(image-gc-[a-z-]*|image-maximum-gc-age|eviction-hard|feature-gates|config|config-dir)$/.test(l) && i + 1 < ls.length) {
        flags.push({ flag: l.replace(/^-+/, ''), value: ls[++i]!, source: where });
      }
    }
  }
  if (!distroProc && !kubelet) r.notes.push(`No running ${who} process was found, so only its config files were read (flags given to the service itself are not known).`);
  return flags;
}

/**
 * kubelet config files: the one `config=` names, the drop-in dir `config-dir=` names, then the
 * distro's own drop-in dir. k3s and RKE2 (v1.32+, k3s #2116) copy the first two into their own
 * (10-cli-config.conf, 20-cli-config-dir/) and pass only that one to kubelet: read last, it
 * has the final word; on older releases the named ones are what kubelet reads. Only the fields
 * Holdfast reads came off the node.
 */
function kubeletConfigArgs(sections: Section[], flags: KubeletArg[], r: Reading): { args: KubeletArg[]; unread: KubeletArgsResult['unread'] } {
  const lastFlag = (flag: string) => flags.findLast((a) => a.flag === flag)?.value.trim() || null;
  const file = lastFlag('config');
  const namedDir = lastFlag('config-dir');
  const ownDir = sections.find((x) => x.kind === 'kdir')?.name ?? null;
  const { fileSections, dirFiles } = kubeletFileSections(sections);
  const args: KubeletArg[] = [];
  const readFile = (name: string) => {
    const s = fileSections.get(name)!;
    if (s.kind === 'kunreadable') r.notes.push(`The kubelet config file ${name} could not be read by the SSH user, so settings it may hold are not known.`);
    else if (s.kind === 'kmissing') r.notes.push(`The kubelet config file ${name} that a flag names does not exist.`);
    else {
      r.read.push(name);
      args.push(...kubeletConfigFields(s.lines, s.json, name, r.notes));
    }
  };
  if (file && fileSections.has(file)) readFile(file);
  for (const dir of new Set([namedDir, ownDir])) if (dir && dirFiles.has(dir)) for (const name of dirFiles.get(dir)!) readFile(name);
  return { args, unread: { file: file && !fileSections.has(file) ? file : null, dir: namedDir && !dirFiles.has(namedDir) ? namedDir : null } };
}

/** The kubelet config file sections by name, and the files listed under each drop-in dir. */
function kubeletFileSections(sections: Section[]): { fileSections: Map<string, Section>; dirFiles: Map<string, string[]> } {
  const fileSections = new Map<string, Section>();
  let inDir: string | null = null;
  const dirFiles = new Map<string, string[]>();
  for (const s of sections) {
    if (s.kind === 'kdir') {
      inDir = s.name;
      dirFiles.set(s.name, []);
    } else if (s.kind === 'kcfg' || s.kind === 'kunreadable' || s.kind === 'kmissing') {
      fileSections.set(s.name, s);
      if (inDir && s.name.startsWith(`${inDir}/`)) dirFiles.get(inDir)!.push(s.name);
    } else inDir = null;
  }
  return { fileSections, dirFiles };
}

/**
 * The script's output (and, when the flags named a config file or dir it did not read, the
 * second read's): the kubelet args in the order kubelet applies them.
 */
export function parseKubeletArgs(stdout: string, distro: Distro, files = ''): KubeletArgsResult {
  const sections = parseSections(`${stdout}\n${files}`);
  const r: Reading = { notes: [], read: [] };
  const flags = [...configFileArgs(sections, r), ...processArgs(sections, distroDisplayName(distro), r)];
  const fromFiles = kubeletConfigArgs(sections, flags, r);
  return { args: [...fromFiles.args, ...flags].filter((a) => READ_FLAGS.test(a.flag)), notes: r.notes, read: r.read, unread: fromFiles.unread };
}
