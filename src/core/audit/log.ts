// The audit log: one JSON line per change Holdfast makes to a node, appended and fsynced
// before the operation reports success. Kept locally in $HOLDFAST_HOME/audit.jsonl.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuditEntry } from '../../shared/domain/audit';
import { applyAuditEntry, type PinRecord } from '../../shared/lostPins';
import { withFileLock } from '../config/lock';
import { errnoClause, HoldfastError } from '../errors';
import { limit, nameLimit } from '../limits';
import { logger } from '../log';

const log = logger('audit');

export function localUser(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch (err) {
    log.debug('os.userInfo() failed; using $USER', { err });
    user = process.env.USER ?? 'unknown';
  }
  return `${user}@${os.hostname()}`;
}

/** Bytes read from the audit log at a time. */
const LEDGER_CHUNK = 4 * 1024 * 1024;

/** What durablePins() has read so far: the log is append-only, so only new bytes are read next time. */
interface PinLedger {
  dev: number;
  ino: number;
  offset: number;
  byNode: Map<string, Map<string, PinRecord>>;
}

/** What to do about an audit log Holdfast cannot read: the pins it made cannot be followed until then. */
const UNREADABLE_HINT =
  'Move it aside (Holdfast then starts a new log) or repair it; until then Holdfast cannot tell which pins it made were lost.';

export class AuditLog {
  readonly file: string;
  private ledger: PinLedger | null = null;
  private ledgerRead: Promise<unknown> = Promise.resolve();

  private readonly readChunkBytes: number;
  private readonly lineBytes: number;
  private readonly listBytes: number;

  /**
   * readChunkBytes: how much of the log is read at a time (default 4 MiB); lineBytes, listBytes:
   * the limits audit.lineBytes and audit.listBytes (tests use small ones).
   */
  constructor(home: string, opts: { readChunkBytes?: number; lineBytes?: number; listBytes?: number } = {}) {
    this.file = path.join(home, 'audit.jsonl');
    this.readChunkBytes = Math.max(1, opts.readChunkBytes ?? LEDGER_CHUNK);
    this.lineBytes = opts.lineBytes ?? limit('audit.lineBytes');
    this.listBytes = opts.listBytes ?? limit('audit.listBytes');
  }

  async append(entry: Omit<AuditEntry, 'time' | 'user'> & Partial<Pick<AuditEntry, 'time' | 'user'>>): Promise<AuditEntry> {
    const full: AuditEntry = { time: new Date().toISOString(), user: localUser(), ...entry };
    // Under the file's lock, like every write in $HOLDFAST_HOME: O_APPEND alone keeps small lines
    // whole on local disks, but not a long entry (many references) on every file system.
    await withFileLock(this.file, async () => {
      const fh = await fs.open(this.file, 'a', 0o600);
      try {
        // One write per entry.
        await fh.write(JSON.stringify(full) + '\n');
        await fh.sync();
      } finally {
        await fh.close();
      }
    });
    return full;
  }

  /**
   * Refuses (REFUSED, nothing changed yet) when an entry could not be appended: the log is not a
   * regular file (a directory, a device such as /dev/full), cannot be opened for appending, or its
   * disk has less than audit.freeBytes free. Called before a change to a node, which is never made
   * when it could not be recorded.
   */
  async assertWritable(): Promise<void> {
    const refuse = (why: string, cause?: unknown) =>
      new HoldfastError('REFUSED', `nothing was changed: the audit log ${this.file} cannot be written (${why})`, {
        hint: 'Every change is recorded there. Make it a writable file (move aside what is in its place, free space on its disk), then run the command again.',
        ...(cause === undefined ? {} : { cause }),
      });
    // stat, not open, first: opening a FIFO for writing would wait for a reader.
    const st = await fs.stat(this.file).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null; // absent, or a link to nothing: created below
      throw refuse(errnoClause(e), e);
    });
    if (st && !st.isFile()) throw refuse(st.isDirectory() ? 'it is a directory' : 'it is not a regular file');
    try {
      await (await fs.open(this.file, 'a', 0o600)).close();
    } catch (e) {
      const target = await fs.readlink(this.file).catch(() => null);
      throw refuse(target === null ? errnoClause(e) : `it is a link to ${target}, which cannot be created: ${errnoClause(e)}`, e);
    }
    const disk = await fs
      .realpath(this.file)
      .then((real) => fs.statfs(path.dirname(real)))
      .catch(() => null);
    const free = disk ? disk.bavail * disk.bsize : Infinity;
    if (free < limit('audit.freeBytes')) throw refuse(`its disk is full: ${Math.floor(free / 1024)} KiB free, under ${nameLimit('audit.freeBytes')}`);
  }

  /**
   * append() for a change already made on a node: when the entry cannot be written, the error
   * says the change WAS applied (`done`) and what the log is missing (`missing`), never just the
   * system's ENOSPC or EISDIR.
   */
  async record(entry: Parameters<AuditLog['append']>[0], done: string, missing: string): Promise<AuditEntry> {
    try {
      return await this.append(entry);
    } catch (e) {
      throw new HoldfastError('INTERNAL', `the change WAS made: ${done}; but the audit log ${this.file} could not record it (${errnoClause(e)})`, {
        hint: `Not recorded: ${missing}. Make the log writable again (free space on its disk, or move aside what is in its place).`,
        cause: e,
      });
    }
  }

  /** Newest first, at most audit.listBytes of them (see recent()). */
  async list(node?: string): Promise<AuditEntry[]> {
    return (await this.recent(node)).entries;
  }

  /**
   * The newest entries (of `node`, or all), newest first. The log is read line by line and only
   * its newest audit.listBytes of entries are kept; `omitted` counts the older ones left out.
   * Lines that do not parse (a torn last line after a crash) are skipped.
   */
  async recent(node?: string): Promise<{ entries: AuditEntry[]; omitted: number }> {
    // The lines kept, not their parsed entries (several times larger): parsed once at the end.
    let kept: string[] = [];
    let first = 0; // kept[first…] are kept; the ones before it are dropped
    let dropped = 0;
    let bytes = 0;
    const nodeField = node === undefined ? null : `"node":${JSON.stringify(node)}`;
    const fh = await this.open();
    if (!fh) return { entries: [], omitted: 0 };
    try {
      await this.eachLine(fh, 0, (line) => {
        // Parsed only once kept to the end (a log of years makes a lot of garbage otherwise);
        // a line naming the node anywhere else is dropped then.
        if (!line.trim() || (nodeField && !line.includes(nodeField))) return;
        kept.push(line);
        bytes += line.length;
        while (bytes > this.listBytes && first < kept.length - 1) bytes -= kept[first++]!.length;
        // Dropped entries are let go in batches, so that dropping stays linear.
        if (first > 1024 && first * 2 > kept.length) {
          dropped += first;
          kept = kept.slice(first);
          first = 0;
        }
      });
    } finally {
      await fh.close();
    }
    const entries: AuditEntry[] = [];
    for (let i = kept.length - 1; i >= first; i--) {
      try {
        const e = JSON.parse(kept[i]!) as AuditEntry;
        if (!node || e.node === node) entries.push(e);
      } catch (err) {
        log.debug('unparsable audit line skipped', { file: this.file, err });
      }
    }
    return { entries, omitted: dropped + first };
  }

  /**
   * The durable pins Holdfast made on `node` and has not released (for lost-pin detection).
   * Cheap on every listing: the first call reads the log once, later calls read only the lines
   * appended since (a log that shrank or was replaced is read again from the start). A torn
   * last line is left for the next call. A log that cannot be read is an error, never "no pins".
   */
  durablePins(node: string): Promise<PinRecord[]> {
    const run = this.ledgerRead.then(() => this.readLedger());
    this.ledgerRead = run.catch((err: unknown) => log.debug('audit ledger read failed (the caller gets the error)', { err }));
    return run.then((byNode) => [...(byNode.get(node)?.values() ?? [])]);
  }

  private applyLine(l: PinLedger, line: string): void {
    // Only pin and unpin entries matter; skip the others without parsing them.
    if (!line.includes('"action":"pin"') && !line.includes('"action":"unpin"')) return;
    let e: AuditEntry;
    try {
      e = JSON.parse(line) as AuditEntry;
    } catch (err) {
      log.debug('unparsable audit line skipped while following pins', { err });
      return;
    }
    if (typeof e.node !== 'string') return;
    let active = l.byNode.get(e.node);
    if (!active) l.byNode.set(e.node, (active = new Map()));
    applyAuditEntry(active, e);
  }

  private async readLedger(): Promise<Map<string, Map<string, PinRecord>>> {
    const fh = await this.open();
    if (!fh) {
      this.ledger = null;
      return new Map();
    }
    try {
      const st = await fh.stat().catch((e: unknown) => Promise.reject(this.unreadable(e)));
      let l = this.ledger;
      if (!l || l.dev !== st.dev || l.ino !== st.ino || st.size < l.offset) {
        l = { dev: st.dev, ino: st.ino, offset: 0, byNode: new Map() };
        this.ledger = l;
      }
      const ledger = l;
      // Only whole lines count: a torn last line is read again next time.
      ledger.offset = await this.eachLine(fh, ledger.offset, (line) => this.applyLine(ledger, line));
      return ledger.byNode;
    } finally {
      await fh.close();
    }
  }

  /** The log opened for reading; null when there is none yet. */
  private async open(): Promise<fs.FileHandle | null> {
    try {
      // A regular file only: /dev/full reads as endless zeros, and opening a FIFO waits for a writer.
      const st = await fs.stat(this.file);
      if (!st.isFile()) throw this.unreadable(null, st.isDirectory() ? 'it is a directory' : 'it is not a regular file');
      return await fs.open(this.file, 'r');
    } catch (e) {
      if (e instanceof HoldfastError) throw e;
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw this.unreadable(e);
    }
  }

  private unreadable(e: unknown, why = errnoClause(e)): HoldfastError {
    return new HoldfastError('INTERNAL', `cannot read the audit log ${this.file}: ${why}`, { hint: UNREADABLE_HINT, ...(e ? { cause: e } : {}) });
  }

  /**
   * Each whole line of the log from byte `from`, in order, read in bounded chunks (a log of years
   * is never held in memory); returns the byte after the last whole line. A line longer than
   * audit.lineBytes is an error: that is not a line Holdfast wrote, and skipping it could hide a pin.
   */
  private async eachLine(fh: fs.FileHandle, from: number, onLine: (line: string) => void): Promise<number> {
    const chunk = Buffer.alloc(this.readChunkBytes);
    let carry: Buffer[] = []; // the start of the line under way, from earlier chunks
    let carryBytes = 0;
    let pos = from;
    let done = from; // the byte after the last whole line
    for (;;) {
      let bytesRead: number;
      try {
        ({ bytesRead } = await fh.read(chunk, 0, chunk.length, pos));
      } catch (e) {
        throw this.unreadable(e);
      }
      if (bytesRead === 0) return done;
      let start = 0;
      for (let nl = chunk.indexOf(10, 0); nl >= 0 && nl < bytesRead; nl = chunk.indexOf(10, start)) {
        this.checkLine(done, carryBytes + nl - start);
        // A line ends at a '\n' byte, which no UTF-8 character contains: each line decodes whole.
        const line = carry.length ? Buffer.concat([...carry, chunk.subarray(start, nl)]).toString('utf8') : chunk.toString('utf8', start, nl);
        carry = [];
        carryBytes = 0;
        done = pos + nl + 1;
        start = nl + 1;
        onLine(line);
      }
      if (start < bytesRead) {
        carryBytes += bytesRead - start;
        this.checkLine(done, carryBytes);
        carry.push(Buffer.from(chunk.subarray(start, bytesRead)));
      }
      pos += bytesRead;
    }
  }

  private checkLine(at: number, bytes: number): void {
    if (bytes <= this.lineBytes) return;
    throw new HoldfastError('INTERNAL', `cannot read the audit log ${this.file}: its line at byte ${at.toLocaleString('en-US')} is over ${nameLimit('audit.lineBytes')}`, {
      hint: `Holdfast writes no line that long: the file was damaged or replaced. ${UNREADABLE_HINT}`,
    });
  }
}
