// The site's signature policy file (#48, shared/signaturePolicy.ts): `--policy FILE`, else
// policy.yaml in Holdfast's home when there is one. Read bounded (limits.ts signaturePolicy.bytes);
// a bad file is refused naming the file, the line and the fix. Key and trusted-root paths in it
// are relative to the policy file.
import { open } from 'node:fs/promises';
import path from 'node:path';
import { parseSignaturePolicy, PolicyError, type SignaturePolicy } from '../../shared/signaturePolicy';
import { HoldfastError } from '../errors';
import { limit, limitError } from '../limits';

export const POLICY_FILE_NAME = 'policy.yaml';

export interface LoadedPolicy {
  /** The policy file's absolute path. */
  file: string;
  policy: SignaturePolicy;
  /** A path as the policy writes it, made absolute against the policy file's folder. */
  resolve: (p: string) => string;
}

/** The policy's path: the one given, else the home's (which need not exist). */
export const policyPath = (home: string, given?: string): string => (given ? path.resolve(given) : path.join(home, POLICY_FILE_NAME));

async function readText(file: string, given: boolean): Promise<string | null> {
  const max = limit('signaturePolicy.bytes');
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // No policy in the home: imports verify what the flags ask, as before there was a policy.
    if (code === 'ENOENT' && !given) return null;
    throw new HoldfastError('INVALID_INPUT', `signature policy ${file} cannot be read (${code ?? (e as Error).message})`, { hint: code === 'ENOENT' ? 'Check the path given to --policy.' : 'Check the path and its permissions.' });
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw new HoldfastError('INVALID_INPUT', `signature policy ${file} is not a regular file`, { hint: 'Give the path of a policy file (YAML or JSON, kind SignaturePolicy).' });
    // One byte past the bound tells a file over it without reading all of it.
    const buf = Buffer.alloc(Math.min(st.size, max) + 1);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    if (bytesRead > max) throw limitError('signaturePolicy.bytes', `signature policy ${file} is too large`, 'INVALID_INPUT', 'Cover images by pattern rather than one rule each.');
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

/** The policy at `policyPath(home, given)`, or null when none is given and the home has none. */
export async function loadPolicy(home: string, given?: string): Promise<LoadedPolicy | null> {
  const file = policyPath(home, given);
  const text = await readText(file, given !== undefined);
  if (text === null) return null;
  try {
    const policy = await parseSignaturePolicy(text, file, limit('signaturePolicy.bytes'));
    const dir = path.dirname(file);
    return { file, policy, resolve: (p) => path.resolve(dir, p) };
  } catch (e) {
    if (!(e instanceof PolicyError)) throw e;
    throw new HoldfastError('INVALID_INPUT', `signature policy ${e.message}`, { hint: `Fix: ${e.fix}.` });
  }
}
