// The audit log: one JSON line per change Holdfast makes to a node, appended and fsynced
// before the operation reports success. Kept locally in $HOLDFAST_HOME/audit.jsonl.
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AuditEntry } from '../../shared/domain';

export function localUser(): string {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {
    user = process.env.USER ?? 'unknown';
  }
  return `${user}@${os.hostname()}`;
}

export class AuditLog {
  readonly file: string;

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
}
