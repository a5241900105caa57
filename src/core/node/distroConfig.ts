// Where a node's images dir is: `<data-dir>/agent/images`, data-dir from the distro's config
// files if they set it, else the distro's default (k3s /var/lib/rancher/k3s, RKE2
// /var/lib/rancher/rke2). The containerd socket does not follow data-dir.
// Only the top-level data-dir key is read, by a line parser — there is no YAML library among
// the dependencies, and nothing else in these files matters here (they hold join tokens: the
// probe sends only the lines that can be data-dir, see detect.ts). The files' order and the
// syntax read are on resolveImagesDir and settingsIn.
import path from 'node:path';
import { distroDisplayName, distroProfile } from '../../shared/distro';
import { IMAGES_SUBDIR, type Distro, type ImagesDirDetection } from '../../shared/domain/nodes';
import { logger } from '../log';

const log = logger('node');

/** One config file as the probe saw it: the lines that can hold data-dir, or null if unreadable. */
export interface ConfigFileLines {
  path: string;
  lines: string[] | null;
}

type Found = { value: string } | { unreadable: true };

const YAML_KEY = /^(?:data-dir|d|"data-dir"|"d"|'data-dir'|'d')\+?[ \t]*:(?:[ \t]+(.*))?$/;
const JSON_LINE = /^\s*"(?:data-dir|d)\+?"\s*:\s*("(?:[^"\\]|\\.)*"|null)\s*,?\s*$/;
const NULLS = new Set(['', '~', 'null', 'Null', 'NULL']);

/** A YAML scalar at the end of a line: its value, or undefined when it is not a simple one. */
function yamlScalar(raw: string): string | undefined {
  const s = raw.trim();
  if (s.startsWith('"')) {
    const m = /^("(?:[^"\\]|\\.)*")(.*)$/.exec(s);
    if (!m || !/^(?:\s+#.*)?$/.test(m[2]!)) return undefined;
    try {
      return JSON.parse(m[1]!) as string; // YAML's double-quoted escapes include JSON's
    } catch (err) {
      log.debug('double-quoted value not understood', { err });
      return undefined;
    }
  }
  if (s.startsWith("'")) {
    const m = /^'((?:[^']|'')*)'(.*)$/.exec(s);
    if (!m || !/^(?:\s+#.*)?$/.test(m[2]!)) return undefined;
    return m[1]!.replace(/''/g, "'");
  }
  // A plain scalar ends at " #" (a comment); these first characters start something else.
  const plain = s.replace(/(^|\s)#.*$/, '').trim();
  if (/^[[{&*!|>%@`]/.test(plain)) return undefined;
  return NULLS.has(plain) ? '' : plain;
}

/**
 * The data-dir settings in one file, in order. `data-dir` is also spelled by its short flag name
 * `d`. A `+` suffix (append) on a string flag still ends with the appended value winning, so it is
 * read as a plain setting. YAML: a key at column 0 with a plain, 'single' or "double" quoted
 * scalar and an optional # comment. JSON (Rancher writes its drop-ins as JSON): a one-line object,
 * or one "key": "value" per line as MarshalIndent writes. Anything else (block scalars, anchors,
 * flow values) is reported as unreadable, never guessed.
 */
function settingsIn(lines: string[]): Found[] {
  const clean = lines.map((l) => l.replace(/\r$/, ''));
  const first = clean.find((l) => l.trim() !== '')?.trim() ?? '';
  const out: Found[] = [];
  if (first.startsWith('{')) {
    // JSON: either the whole object on this line, or one member per line.
    if (first.endsWith('}')) {
      try {
        const obj = JSON.parse(first) as Record<string, unknown>;
        for (const [k, v] of Object.entries(obj)) {
          if (!/^(?:data-dir|d)\+?$/.test(k)) continue;
          out.push(typeof v === 'string' ? { value: v } : v === null ? { value: '' } : { unreadable: true });
        }
        return out;
      } catch (err) {
        log.debug('distro config JSON not parsable; data-dir unreadable', { err });
        return [{ unreadable: true }];
      }
    }
    for (const l of clean) {
      if (!/"(?:data-dir|d)\+?"\s*:/.test(l)) continue;
      const m = JSON_LINE.exec(l);
      out.push(m ? { value: (JSON.parse(m[1]!) as string | null) ?? '' } : { unreadable: true });
    }
    return out;
  }
  for (const l of clean) {
    const m = YAML_KEY.exec(l);
    if (!m) continue;
    const v = yamlScalar(m[1] ?? '');
    out.push(v === undefined ? { unreadable: true } : { value: v });
  }
  return out;
}

/** The config file the distro reads first (drop-ins are in `${it}.d`). */
export function configFileOf(distro: Distro): string {
  return distroProfile(distro).configFile;
}

/** `<data-dir>/agent/images`. */
export function imagesDirOf(dataDir: string): string {
  return path.posix.join(dataDir, IMAGES_SUBDIR);
}

/**
 * The images dir k3s/RKE2 uses on a node, from its config files (as read, in k3s's order).
 * k3s and RKE2 read /etc/rancher/<distro>/config.yaml, then every `*.yaml` / `*.yml` (any case)
 * in config.yaml.d in byte order of their names; for a key set more than once the last value
 * wins (k3s pkg/configfilearg; docs "Multiple Config Files"). Not read: --data-dir /
 * K3S_DATA_DIR given to the service itself, and --config / K3S_CONFIG_FILE pointing at another
 * file.
 */
export function resolveImagesDir(distro: Distro, files: ConfigFileLines[]): ImagesDirDetection {
  const dataDirDefault = distroProfile(distro).dataDirDefault;
  const notes: string[] = [];
  if (distro === 'unknown') notes.push('Neither k3s nor rke2 answered --version, so k3s is assumed.');
  let last: { value: string; file: string } | null = null;
  let lastUnreadable: string | null = null;
  for (const f of files) {
    if (f.lines === null) {
      notes.push(`${f.path} could not be read by the SSH user, so a data-dir it may set is not known.`);
      continue;
    }
    for (const s of settingsIn(f.lines)) {
      if ('value' in s) {
        last = { value: s.value, file: f.path };
        lastUnreadable = null;
      } else {
        lastUnreadable = f.path;
      }
    }
  }
  const fallback = (): ImagesDirDetection => ({
    imagesDir: imagesDirOf(dataDirDefault),
    dataDir: dataDirDefault,
    from: 'default',
    file: null,
    notes,
  });
  if (lastUnreadable) {
    notes.push(`The data-dir in ${lastUnreadable} is not a plain value Holdfast can read; the default is used. Give --images-dir if it differs.`);
    return fallback();
  }
  if (!last || last.value === '') return fallback(); // unset, or set empty: the distro's default
  if (!last.value.startsWith('/')) {
    notes.push(`The data-dir "${last.value}" in ${last.file} is not an absolute path; the default is used. Give --images-dir if it differs.`);
    return fallback();
  }
  const dataDir = path.posix.normalize(last.value).replace(/(.)\/+$/, '$1');
  return { imagesDir: imagesDirOf(dataDir), dataDir, from: 'config', file: last.file, notes };
}

/** "data-dir /data/k3s from /etc/rancher/k3s/config.yaml" / "RKE2's default data-dir: none set in …" (each path once). */
export function describeImagesDir(distro: Distro, det: ImagesDirDetection): string {
  const why =
    det.from === 'config'
      ? `data-dir ${det.dataDir} from ${det.file}`
      : `${distroDisplayName(distro)}'s default data-dir: none set in ${configFileOf(distro)} or ${path.posix.basename(configFileOf(distro))}.d/`;
  return [why, ...det.notes].join(' ');
}
