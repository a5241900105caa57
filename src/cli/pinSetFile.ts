// A pin set file as `pinset show` and `guard` read it: bounded (limits.ts pinSet.bytes), parsed and
// checked by shared/pinSet.ts, and resolved against a node's inventory from the service. A bad file
// is a usage error naming the field and the fix.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { HoldfastError } from '../core/errors';
import { limit, limitError } from '../core/limits';
import type { LostPinKind } from '../shared/domain/lostPins';
import { parsePinSet, PinSetError, resolvePinSet, type PinSet, type PinSetResolution } from '../shared/pinSet';
import type { NeedsReport } from '../shared/needs';
import type { Cli } from './context';
import { terminalSafe as safe } from './format';

export async function readPinSetFile(file: string): Promise<PinSet> {
  return (await loadPinSetFile(file)).set;
}

/** The pin set and the sha256 of the file's bytes (what guard records it kept: `sha256:<hex>`). */
export async function loadPinSetFile(file: string): Promise<{ set: PinSet; digest: string }> {
  const max = limit('pinSet.bytes');
  const shown = safe(file);
  let text: string;
  let digest: string;
  try {
    const fh = await open(path.resolve(file), 'r');
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new HoldfastError('INVALID_INPUT', `--pin-set ${shown} is not a regular file`, { hint: 'Give the path of a pin set file (YAML or JSON).' });
      // One byte past the bound tells a file over it without reading all of it.
      const buf = Buffer.alloc(Math.min(st.size, max) + 1);
      const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
      if (bytesRead > max) throw limitError('pinSet.bytes', `--pin-set ${shown} is too large`, 'INVALID_INPUT', 'Split the site into several pin sets, or name images by pattern.');
      text = buf.subarray(0, bytesRead).toString('utf8');
      digest = `sha256:${createHash('sha256').update(buf.subarray(0, bytesRead)).digest('hex')}`;
    } finally {
      await fh.close();
    }
  } catch (e) {
    if (e instanceof HoldfastError) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    throw new HoldfastError('INVALID_INPUT', `--pin-set ${shown} cannot be read (${code ?? (e as Error).message})`, { hint: code === 'ENOENT' ? 'Check the path.' : 'Check the path and its permissions.' });
  }
  try {
    return { set: await parsePinSet(text, path.basename(file), max), digest };
  } catch (e) {
    if (!(e instanceof PinSetError)) throw e;
    throw new HoldfastError('INVALID_INPUT', `pin set ${shown}: ${safe(e.message)}`, { hint: `Fix: ${safe(e.fix)}.` });
  }
}

/**
 * The pin set against the node as it is now: its references, needs and lost pins (one inventory).
 * `lost`: every reference whose durable pin Holdfast made is gone (the set's and their images' others).
 */
export async function resolveOnNode(cli: Cli, node: string, set: PinSet): Promise<{ resolution: PinSetResolution; lost: ReadonlyMap<string, LostPinKind>; needs: NeedsReport }> {
  const report = await cli.call('images.report', { node });
  const resolution = resolvePinSet(set.spec, { refs: report.images, neededMissing: report.needs.missing.map((m) => m.ref), lost: report.lost });
  return { resolution, lost: new Map(report.lost.map((l) => [l.ref, l.kind])), needs: report.needs };
}
