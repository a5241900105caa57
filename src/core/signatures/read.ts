// Bounded reads of the files signatures come in: a file over its limit is refused by its size
// before any of it is read, and one that changes size while read is refused too.
import { open } from 'node:fs/promises';
import { limit, limitError, type LimitName } from '../limits';
import { HoldfastError } from '../errors';

/** The whole file, refused over the limit `name`; `what` names the file in errors. */
export async function readBounded(file: string, what: string, name: LimitName = 'signature.bytes'): Promise<Buffer> {
  let fh;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    throw new HoldfastError('NOT_FOUND', `${file}: cannot read ${what} (${(e as NodeJS.ErrnoException).code ?? String(e)}).`);
  }
  try {
    const { size } = await fh.stat();
    if (size > limit(name)) throw limitError(name, `${file}: ${what} of ${size.toLocaleString('en-US')} bytes is too large`);
    // One byte more than the size: a file that grew while read fills it and is refused.
    const buf = Buffer.alloc(size + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = (await fh.read(buf, n, buf.length - n, n)).bytesRead;
    if (n !== size) throw new HoldfastError('INVALID_INPUT', `${file}: ${what} changed while it was read.`);
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}
