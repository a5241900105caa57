// The audit log: one JSON line per change Holdfast makes to a node, appended and fsynced
// before the operation reports success. Kept locally in $HOLDFAST_HOME/audit.jsonl.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuditEntry } from '../../shared/domain';
import { applyAuditEntry, type PinRecord } from '../../shared/lostPins';
import { withFileLock } from '../config/lock';
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

/** Bytes read from the audit log at a time when following its pins. */
const LEDGER_CHUNK = 4 * 1024 * 1024;

/** What durablePins() has read so far: the log is append-only, so only new bytes are read next time. */
interface PinLedger {
  dev: number;
  ino: number;
  offset: number;
  byNode: Map<string, Map<string, PinRecord>>;
}

export class AuditLog {
  readonly file: string;
  private ledger: PinLedger | null = null;
  private ledgerRead: Promise<unknown> = Promise.resolve();

  private readonly readChunkBytes: number;

  /** readChunkBytes: how much of the log durablePins() reads at a time (default 4 MiB). */
  constructor(home: string, opts: { readChunkBytes?: number } = {}) {
    this.file = path.join(home, 'audit.jsonl');
    this.readChunkBytes = Math.max(1, opts.readChunkBytes ?? LEDGER_CHUNK);
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

  /** Newest first; lines that do not parse (a torn last line after a crash) are skipped. */
  async list(node?: string): Promise<AuditEntry[]> {
    let text: string;
    try {
      text = await fs.readFile(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    const out: AuditEntry[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      try {
        const e = JSON.parse(line) as AuditEntry;
        if (!node || e.node === node) out.push(e);
      } catch (err) {
        // skip
        log.debug('unparsable audit line skipped', { file: this.file, err });
      }
    }
    return out.reverse();
  }

  /**
   * The durable pins Holdfast made on `node` and has not released (for lost-pin detection).
   * Cheap on every listing: the first call reads the log once, later calls read only the lines
   * appended since (a log that shrank or was replaced is read again from the start). A torn
   * last line is left for the next call.
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
    let fh: fs.FileHandle;
    try {
      fh = await fs.open(this.file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        this.ledger = null;
        return new Map();
      }
      throw e;
    }
    try {
      const st = await fh.stat();
      let l = this.ledger;
      if (!l || l.dev !== st.dev || l.ino !== st.ino || st.size < l.offset) {
        l = { dev: st.dev, ino: st.ino, offset: 0, byNode: new Map() };
        this.ledger = l;
      }
      // In bounded chunks: a log of years is read once without holding it all in memory.
      const chunk = Buffer.alloc(Math.min(this.readChunkBytes, Math.max(1, st.size - l.offset)));
      let pending = '';
      let pos = l.offset;
      while (pos < st.size) {
        const { bytesRead } = await fh.read(chunk, 0, Math.min(chunk.length, st.size - pos), pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
        const text = pending + chunk.subarray(0, bytesRead).toString('latin1');
        const end = text.lastIndexOf('\n');
        if (end < 0) {
          pending = text;
          continue;
        }
        pending = text.slice(end + 1);
        for (const line of text.slice(0, end).split('\n')) this.applyLine(l, Buffer.from(line, 'latin1').toString('utf8'));
        l.offset = pos - Buffer.byteLength(pending, 'latin1');
      }
      return l.byNode;
    } finally {
      await fh.close();
    }
  }
}
