// The audit log: one JSON line per change Holdfast makes to a node, appended and fsynced
// before the operation reports success. Kept locally in $HOLDFAST_HOME/audit.jsonl.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuditEntry } from '../../shared/domain';
import { applyAuditEntry, type PinRecord } from '../../shared/lostPins';

export function localUser(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    user = process.env.USER ?? 'unknown';
  }
  return `${user}@${os.hostname()}`;
}

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

  constructor(home: string) {
    this.file = path.join(home, 'audit.jsonl');
  }

  async append(entry: Omit<AuditEntry, 'time' | 'user'> & Partial<Pick<AuditEntry, 'time' | 'user'>>): Promise<AuditEntry> {
    const full: AuditEntry = { time: new Date().toISOString(), user: localUser(), ...entry };
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const fh = await fs.open(this.file, 'a', 0o600);
    try {
      // One write per entry: O_APPEND keeps concurrent writers' lines whole.
      await fh.write(JSON.stringify(full) + '\n');
      await fh.sync();
    } finally {
      await fh.close();
    }
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
      } catch {
        // skip
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
    this.ledgerRead = run.catch(() => undefined);
    return run.then((byNode) => [...(byNode.get(node)?.values() ?? [])]);
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
      if (st.size > l.offset) {
        const buf = Buffer.alloc(st.size - l.offset);
        const { bytesRead } = await fh.read(buf, 0, buf.length, l.offset);
        const end = buf.lastIndexOf(0x0a, bytesRead - 1);
        if (end >= 0) {
          for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
            // Only pin and unpin entries matter; skip the others without parsing them.
            if (!line.includes('"action":"pin"') && !line.includes('"action":"unpin"')) continue;
            let e: AuditEntry;
            try {
              e = JSON.parse(line) as AuditEntry;
            } catch {
              continue;
            }
            if (typeof e.node !== 'string') continue;
            let active = l.byNode.get(e.node);
            if (!active) l.byNode.set(e.node, (active = new Map()));
            applyAuditEntry(active, e);
          }
          l.offset += end + 1;
        }
      }
      return l.byNode;
    } finally {
      await fh.close();
    }
  }
}
