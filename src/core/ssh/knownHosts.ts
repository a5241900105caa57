// OpenSSH known_hosts: parsing, host lookup, fingerprints, appending. Format (sshd(8)
// "SSH_KNOWN_HOSTS FILE FORMAT"), one entry per line:
//   [@revoked|@cert-authority] hostpatterns keytype base64-key [comment]
// hostpatterns is a comma list of names/addresses, `[host]:port` for ports other than 22,
// `*` / `?` wildcards and `!` negation (a matching negated pattern makes the whole line not
// apply, even if another pattern matches), or one hashed name `|1|base64(salt)|base64(hmac)`
// where hmac = HMAC-SHA1(key = salt, data = the name as it would be written in plain form).
// Names are compared case-insensitively (ssh lower-cases the host name it looks up).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { hostPatternListMatches, wildcardMatch } from '../../shared/hostPatterns';
import { HoldfastError } from '../errors';

export type KnownHostMarker = 'revoked' | 'cert-authority' | null;

export interface KnownHostEntry {
  /** 1-based line number in the file (for "check line N" hints). */
  line: number;
  marker: KnownHostMarker;
  /** The host field exactly as written (a comma list or a `|1|…` hash). */
  hosts: string;
  hashed: boolean;
  keyType: string;
  /** Raw public key blob (what the SSH server sends, what fingerprints are computed over). */
  keyBlob: Buffer;
  comment?: string;
}

const HASH_MAGIC = '|1|';
const KEY_TYPE_RE = /^[A-Za-z0-9@._+-]+$/;

/** Parse known_hosts text. Comments, blank and malformed lines are skipped, as ssh does. */
export function parseKnownHosts(text: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = (lines[i] ?? '').replace(/\r$/, '');
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/[ \t]+/);
    let marker: KnownHostMarker = null;
    if (fields[0]?.startsWith('@')) {
      const m = fields.shift();
      if (m === '@revoked') marker = 'revoked';
      else if (m === '@cert-authority') marker = 'cert-authority';
      else continue; // unknown marker: ssh ignores the line
    }
    const [hosts, keyType, keyB64, ...rest] = fields;
    if (!hosts || !keyType || !keyB64 || !KEY_TYPE_RE.test(keyType)) continue;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(keyB64)) continue;
    const keyBlob = Buffer.from(keyB64, 'base64');
    if (keyBlob.length === 0 || blobKeyType(keyBlob) === null) continue;
    const entry: KnownHostEntry = {
      line: i + 1,
      marker,
      hosts,
      hashed: hosts.startsWith(HASH_MAGIC),
      keyType,
      keyBlob,
    };
    if (rest.length) entry.comment = rest.join(' ');
    entries.push(entry);
  }
  return entries;
}

/** The name ssh looks up: `host` for port 22, `[host]:port` otherwise; lower-cased. */
export function knownHostsName(host: string, port: number): string {
  const h = host.toLowerCase();
  return port === 22 ? h : `[${h}]:${port}`;
}

/**
 * Entries whose host field matches host:port, in file order, including `@revoked` ones (the
 * caller must refuse a revoked key). `@cert-authority` lines are left out: Holdfast does not
 * verify host certificates.
 */
export function lookupHostKeys(text: string, host: string, port: number): KnownHostEntry[] {
  const name = knownHostsName(host, port);
  return parseKnownHosts(text).filter((e) => e.marker !== 'cert-authority' && hostFieldMatches(e.hosts, name));
}

/** Does a known_hosts host field (hashed, or a pattern list) match the lookup name? */
export function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith(HASH_MAGIC)) return hashedMatches(field, name);
  return hostPatternListMatches(field.split(','), name);
}

function hashedMatches(field: string, name: string): boolean {
  const parts = field.slice(HASH_MAGIC.length).split('|');
  if (parts.length !== 2 || !parts[0] || !parts[1]) return false;
  const salt = Buffer.from(parts[0], 'base64');
  const expected = Buffer.from(parts[1], 'base64');
  if (salt.length === 0 || expected.length !== 20) return false;
  const actual = createHmac('sha1', salt).update(name).digest();
  return timingSafeEqual(actual, expected);
}

/** OpenSSH match_pattern (shared/hostPatterns). */
export { wildcardMatch as globMatch };

/** `SHA256:<unpadded base64 of sha256(blob)>`, exactly as `ssh-keygen -lf` prints it. */
export function hostKeyFingerprint(keyBlob: Buffer): string {
  return `SHA256:${createHash('sha256').update(keyBlob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type string embedded at the start of an SSH public key blob, or null if malformed. */
export function blobKeyType(keyBlob: Buffer): string | null {
  if (keyBlob.length < 4) return null;
  const len = keyBlob.readUInt32BE(0);
  if (len === 0 || len > 64 || keyBlob.length < 4 + len) return null;
  const t = keyBlob.subarray(4, 4 + len).toString('latin1');
  return KEY_TYPE_RE.test(t) ? t : null;
}

/**
 * One known_hosts line (no trailing newline) in the plain form ssh writes:
 * `host keytype base64` or `[host]:port keytype base64`.
 */
export function formatKnownHostsLine(host: string, port: number, keyType: string, keyBlob: Buffer): string {
  // Refuse anything that would change the line's meaning: separators, pattern characters,
  // markers, comments or line breaks smuggled in through the host name.
  if (!host || !/^[A-Za-z0-9._:%-]+$/.test(host)) {
    throw new HoldfastError('INVALID_INPUT', `Cannot record a host key for the host name "${host}".`);
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new HoldfastError('INVALID_INPUT', `Cannot record a host key for port ${port}.`);
  }
  if (!KEY_TYPE_RE.test(keyType)) {
    throw new HoldfastError('INVALID_INPUT', `Cannot record a host key of type "${keyType}".`);
  }
  if (keyBlob.length === 0) throw new HoldfastError('INVALID_INPUT', 'Cannot record an empty host key.');
  return `${knownHostsName(host, port)} ${keyType} ${keyBlob.toString('base64')}`;
}

/**
 * Append one line to a known_hosts file: the file is created 0600 (its missing parent
 * directories 0700) when absent; the line goes out in a single O_APPEND write followed by fsync,
 * with a leading newline if the file did not end with one.
 */
export async function appendKnownHost(file: string, line: string): Promise<void> {
  if (line.includes('\n') || line.includes('\r')) {
    throw new HoldfastError('INVALID_INPUT', 'A known_hosts line cannot contain a line break.');
  }
  await fsp.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const fh = await fsp.open(file, 'a+', 0o600);
  try {
    const { size } = await fh.stat();
    let prefix = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      await fh.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    await fh.write(`${prefix}${line}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
