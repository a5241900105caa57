// The shell that reads a distro's config files on a node, once, for every probe that needs them
// (detect.ts: data-dir; disk/kubeletArgs.ts: kubelet-arg), built from the distro profiles in
// shared/distro.ts. k3s and RKE2 read config.yaml, then every `*.yaml` / `*.yml` (any case) in
// config.yaml.d in byte order of their names (k3s pkg/configfilearg). Only fixed words from the
// profiles go into the text; nothing user-supplied.
import { ASSUMED_DISTRO, DISTRO_ORDER, DISTRO_PROFILES, type DistroProfile, type KnownDistro } from '../../shared/distro';

const SAFE_WORD = /^[A-Za-z0-9_./+-]+$/;

/** A profile value about to be written into a script: it must need no quoting. */
function word(s: string): string {
  if (!SAFE_WORD.test(s)) throw new Error(`distro profile value ${JSON.stringify(s)} is not a plain shell word`);
  return s;
}

/**
 * `case "$<v>" in <distro>) <arm>;; … *) <assumed distro's arm>;; esac`: one arm per profile, the
 * assumed distro (k3s) taking every other word, as an undetected distro does everywhere.
 */
export function distroCase(v: string, arm: (p: DistroProfile) => string): string {
  const others = DISTRO_ORDER.filter((d) => d !== ASSUMED_DISTRO).map((d) => `${word(d)}) ${arm(DISTRO_PROFILES[d])};;`);
  return `case "$${v}" in ${[...others, `*) ${arm(DISTRO_PROFILES[ASSUMED_DISTRO])};;`].join(' ')} esac`;
}

/** The distro binaries, in the order the probe tries them, as shell words. */
export const DISTRO_WORDS: readonly KnownDistro[] = DISTRO_ORDER.map(word) as KnownDistro[];

/**
 * The opening of an awk program over one config file that sends only some keys: every line kept
 * in L[], and — for a JSON file (its first non-blank line starts with `{`) — the lines joined
 * into s, inside an open `END {` and `if (json) {` the caller goes on with.
 */
export const AWK_CONFIG_OPENING: readonly string[] = [
  '{ L[NR] = $0 }',
  'END {',
  '  first = ""',
  '  for (i = 1; i <= NR; i++) if (L[i] ~ /[^ \\t\\r]/) { first = L[i]; break }',
  '  if (first ~ /^[ \\t]*[{]/) {',
  '    s = ""; for (i = 1; i <= NR; i++) s = s L[i] " "',
];

/** Makes `$<v>` a distro word: any other word (or none) becomes the assumed distro's. */
export function knownDistroShell(v: string): string {
  return `case "$${v}" in ${DISTRO_WORDS.join('|')}) ;; *) ${v}=${word(ASSUMED_DISTRO)};; esac`;
}

/**
 * Lines that set `c` to the config file of the distro named in `$<v>` and print every config
 * file that exists: `@@cfg PATH` and its text through `filter` (a pipeline stage reading the file
 * on stdin), or `@@unreadable PATH`. `$S` must be "sudo" for a non-root user with `sudo -n` (only
 * `cat`, `stat` and `find` run through it). `reportUnreadableDir`: say `@@unreadable <c>.d/` when
 * the user can neither list the drop-in dir nor sudo, rather than skip it silently.
 */
export function configFilesShell(v: string, filter: string, opts: { reportUnreadableDir: boolean }): string[] {
  return [
    distroCase(v, (p) => `c=${word(p.configFile)}`),
    'ex() { [ -e "$1" ] || { [ "$S" = sudo ] && sudo -n stat -- "$1" >/dev/null 2>&1; }; }',
    'rd() { if [ -r "$1" ]; then cat -- "$1"; else sudo -n cat -- "$1" 2>/dev/null; fi; }',
    'ok() { [ -r "$1" ] || { [ "$S" = sudo ] && sudo -n cat -- "$1" >/dev/null 2>&1; }; }',
    'cfg() {',
    '  ex "$1" || return 0',
    `  if ok "$1"; then echo "@@cfg $1"; rd "$1" | head -c 262144 | ${filter}`,
    '  else echo "@@unreadable $1"; fi',
    '}',
    'cfg "$c"',
    ...(opts.reportUnreadableDir
      ? ['if [ "$S" != sudo ] && [ -d "$c.d" ] && ! { [ -r "$c.d" ] && [ -x "$c.d" ]; }; then echo "@@unreadable $c.d/"; fi']
      : []),
    'if [ -d "$c.d" ] && [ -r "$c.d" ] && [ -x "$c.d" ]; then ls -A "$c.d"',
    'elif [ "$S" = sudo ]; then sudo -n find "$c.d" -mindepth 1 -maxdepth 1 ! -type d -printf "%f\\n" 2>/dev/null | sort',
    'fi | head -n 200 | while IFS= read -r n; do',
    '  [ -d "$c.d/$n" ] && continue',
    '  case "$n" in *.[yY][aA][mM][lL]|*.[yY][mM][lL]) cfg "$c.d/$n";; esac',
    'done',
  ];
}
