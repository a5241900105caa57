// Parsers for numeric flags, shared by the commands: a value that is not what the flag wants is
// refused at once, commander naming the flag and the value, before anything connects or reads an archive (the contract checks the
// bounds again for every transport, in words a person reading a CLI flag would not recognise).
import { InvalidArgumentError } from 'commander';

/** A whole number ≥ 1 (--parallel, --concurrency). */
export function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('It wants a whole number ≥ 1.');
  return n;
}

/** A number of seconds > 0 (--timeout). */
export function positiveSeconds(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('It wants a number of seconds > 0.');
  return n;
}
