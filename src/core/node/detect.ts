// What runs on a node, found in one probe round trip: the machine, the distro from
// `k3s --version` / `rke2 --version` output, and where its images dir is (the data-dir of its
// config files). Parsing is pure, so it is tested against recorded real output.
import { DISTRO_ORDER, DISTRO_PROFILES } from '../../shared/distro';
import type { Distro, ImagesDirDetection, NodeInfo } from '../../shared/domain/nodes';
import { resolveImagesDir, type ConfigFileLines } from './distroConfig';
import { AWK_CONFIG_OPENING, configFilesShell, DISTRO_WORDS } from './distroShell';

/**
 * `k3s --version` prints e.g.
 *   k3s version v1.31.6+k3s1 (6ab750f9)
 *   go version go1.22.12
 * and `rke2 --version`
 *   rke2 version v1.31.6+rke2r1 (0b3cf7a9d2fd6b6c6ff5e3ab2cfb3a3a0a4e8c44)
 *   go version go1.22.12 X:boringcrypto
 */
export function parseDistroVersion(distro: Exclude<Distro, 'unknown'>, output: string): string | null {
  return DISTRO_PROFILES[distro].versionLine.exec(output)?.[1] ?? null;
}

/**
 * awk over one config file: only what can set data-dir (`d` is its short name) leaves the node,
 * never another key's value (config files hold join tokens). YAML: a top-level `data-dir:` / `d:`
 * line, quoted or not. JSON (the first non-blank line starts with `{`; one line or many): `{`,
 * then each `"data-dir": <string or plain scalar>` member on its own line, as distroConfig.ts reads
 * one member a line; a value that is neither (an object, an array) is cut off after the colon, so
 * it reads as unreadable. A key cannot match inside a JSON string: there every `"` is escaped.
 */
export const DATA_DIR_AWK = [
  ...AWK_CONFIG_OPENING,
  '    print "{"',
  '    while (match(s, /"(data-dir|d)[+]?"[ \\t\\r]*:[ \\t\\r]*("([^"\\\\]|\\\\.)*"|[A-Za-z0-9.+-]*)/)) { print substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH) }',
  '    exit',
  '  }',
  '  for (i = 1; i <= NR; i++) if (L[i] ~ /^["\\047]?(data-dir|d)["\\047]?[+]?[ \\t]*:/) print L[i]',
  '}',
].join('\n');

/** The pipeline stage each config file's text goes through on the node: what of it is sent. */
export const DATA_DIR_FILTER = `awk '${DATA_DIR_AWK}' | head -n 64 | sed "s/^/|/"`;

/**
 * One fixed script, one round trip: `uname -m`; `@@k3s` or `@@rke2` and that binary's
 * `--version` output; then the distro's config files (config.yaml, then config.yaml.d/*.yaml|yml
 * in byte order, as k3s merges them), each as `@@cfg PATH` followed by only the lines that can
 * set data-dir, each prefixed by `|` (the files hold join tokens: nothing else leaves the node),
 * or `@@unreadable PATH`. `$1` is "sudo" for a non-root user with `sudo -n` (only `cat`, `stat`
 * and `find` are run through it, as for the images dir); nothing else is passed in.
 */
export const PROBE_SCRIPT = [
  'S=$1; LC_ALL=C; export LC_ALL',
  'uname -m',
  // The fastest SHA-256 program the node has (openssl: ~1 GB/s with SHA extensions, sha256sum
  // ~200 MB/s), and whether it can hash a file while it is being written (upload/followHash.ts).
  // Builtins only: no process is started for this line.
  'h=; for p in openssl sha256sum; do if command -v "$p" >/dev/null 2>&1; then h=$p; break; fi; done',
  'f=; if command -v tail >/dev/null 2>&1 && command -v head >/dev/null 2>&1 && command -v mkfifo >/dev/null 2>&1 && command -v mktemp >/dev/null 2>&1; then f=follow; fi',
  'echo "@@hash $h $f"',
  'd=',
  `for b in ${DISTRO_WORDS.join(' ')}; do for p in "$b" "/usr/local/bin/$b"; do`,
  // `command -v` is a shell builtin: a missing candidate costs no process (a node's shell may take
  // tens of ms per fork), only one that exists is run.
  '  if command -v "$p" >/dev/null 2>&1 && out=$("$p" --version 2>/dev/null); then echo "@@$b"; echo "$out"; d=$b; break 2; fi',
  'done; done',
  // `$d` is empty when no binary answered: the assumed distro's config is read.
  ...configFilesShell('d', DATA_DIR_FILTER, { reportUnreadableDir: true }),
  'exit 0',
].join('\n');

/** The probe's argv: a fixed script and one fixed flag word, never anything user-supplied. */
export function probeArgv(sudo: boolean): string[] {
  return ['sh', '-c', PROBE_SCRIPT, 'holdfast-probe', sudo ? 'sudo' : ''];
}

/** How the node computes SHA-256 (see the probe's `@@hash` line). */
export interface HashTools {
  /** The fastest SHA-256 program found; null: none seen (verification then tries sha256sum). */
  hasher: 'openssl' | 'sha256sum' | null;
  /** tail, head, mkfifo and mktemp exist: a file can be hashed as it grows, during its upload. */
  follow: boolean;
}

export const NO_HASH_TOOLS: HashTools = { hasher: null, follow: false };

export function parseHashLine(line: string): HashTools | null {
  const m = /^@@hash ?(openssl|sha256sum)? ?(follow)?\s*$/.exec(line);
  if (!m) return null;
  return { hasher: (m[1] as HashTools['hasher'] | undefined) ?? null, follow: m[1] !== undefined && m[2] === 'follow' };
}

export interface ProbeResult {
  machine: string;
  hashTools: HashTools;
  distro: Distro;
  distroVersion: string | null;
  imagesDir: ImagesDirDetection;
}

export function parseProbe(stdout: string): ProbeResult {
  const [machine = '', ...rest] = stdout.split('\n');
  // Config file sections start at the first @@cfg / @@unreadable line.
  const files: ConfigFileLines[] = [];
  const head: string[] = [];
  let hashTools = NO_HASH_TOOLS;
  for (const line of rest) {
    const m = /^@@(cfg|unreadable) (\/.*)$/.exec(line);
    const h = files.length === 0 && head.length === 0 ? parseHashLine(line) : null;
    if (h) hashTools = h;
    else if (m) files.push({ path: m[2]!, lines: m[1] === 'cfg' ? [] : null });
    else if (files.length === 0) head.push(line);
    else if (line.startsWith('|')) files[files.length - 1]!.lines?.push(line.slice(1));
  }
  const text = head.join('\n');
  let distro: Distro = 'unknown';
  let distroVersion: string | null = null;
  for (const d of DISTRO_ORDER) {
    const at = text.indexOf(`@@${d}\n`);
    if (at >= 0) {
      distro = d;
      distroVersion = parseDistroVersion(d, text.slice(at));
      break;
    }
  }
  return { machine: machine.trim(), hashTools, distro, distroVersion, imagesDir: resolveImagesDir(distro, files) };
}

/** What a node runs (NodeSession.detect): containerd's answer to Version and the probe's findings. */
export function nodeInfoOf(containerd: { version: string; revision: string }, probe: Pick<ProbeResult, 'distro' | 'distroVersion'> & Partial<Pick<ProbeResult, 'imagesDir'>>): NodeInfo {
  return {
    containerdVersion: containerd.version,
    containerdRevision: containerd.revision,
    distro: probe.distro,
    distroVersion: probe.distroVersion,
    ...(probe.imagesDir ? { imagesDir: probe.imagesDir } : {}),
  };
}
