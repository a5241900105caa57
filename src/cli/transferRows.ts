// What `holdfast upload` and `holdfast import` show per node while they run: the progress core
// reports (src/core/import, src/core/upload), worded as one short row for the progress board.
import type { JobNodeProgress } from '../shared/domain/jobs';
import { plural } from '../shared/wording';
import { formatDuration } from '../shared/format';
import { humanSize } from './format';
import type { ProgressBoard, Row } from './progress';

export type NodePatch = Partial<Omit<JobNodeProgress, 'node'>>;

/** "42 s", "3 min 05 s", "2 h 10 min" (shared/format, as the app says it). */
export const duration = (seconds: number): string => formatDuration(Math.max(0, seconds));

/** The row for a node from everything reported about it so far. */
export function nodeRow(node: string, p: NodePatch): Row {
  const row = (phase: string, text: string, extra: Partial<Row> = {}): Row => ({ label: node, phase, text, ...extra });
  switch (p.phase) {
    case 'queued':
      return row('queued', 'queued (waiting for a free --parallel slot)');
    case 'checking':
      if (p.message === 'connecting') return row('connecting', 'connecting…', { busy: true });
      // The upload's own first step: the final name, a partial upload from an earlier run, free space.
      if (p.message === 'checking') return row('checking-dir', 'checking the images dir…', { busy: true });
      return row('checking-node', 'checking what the node already has…', { busy: true });
    case 'uploading': {
      // Announced before the upload has looked at the images dir, which it does first (a job's
      // row then says so in its message; its byte counts start at 0).
      if (!p.bytesTotal || p.bytesDone === undefined || p.message === 'checking the images dir') return row('checking-dir', 'checking the images dir…', { busy: true });
      const pct = Math.floor((100 * p.bytesDone) / p.bytesTotal);
      // Direct delivery sends blobs into containerd (its message says so), not a file.
      const verb = p.message?.startsWith('sending') ? 'sending' : 'uploading';
      const parts = [`${verb} ${pct}%`, `${humanSize(p.bytesDone)} of ${humanSize(p.bytesTotal)}`];
      if (p.rate) parts.push(`${humanSize(p.rate)}/s`);
      if (p.eta != null && p.eta > 0) parts.push(`ETA ${duration(p.eta)}`);
      return row('uploading', parts.join(' · '), { fraction: p.bytesDone / p.bytesTotal });
    }
    case 'verifying':
      // The node reads the whole file back for its SHA-256: seconds for a big archive, with no
      // byte count to show, so a spinner rather than a bar stuck at 100 %.
      if (p.message === 'reading every reference back') return row('verifying', 'reading every reference back…', { busy: true });
      return p.message === 'renaming' ? row('renaming', 'moving it into place…', { busy: true }) : row('verifying', 'verifying (sha256 on the node)…', { busy: true });
    case 'importing': {
      if (p.message?.startsWith('unpacking')) return row('importing', `${p.message}…`, { busy: true });
      // "<distro> imported 1 of 3 images" (core/usecases/import/run.ts): the node's distro, k3s or RKE2.
      const m = /^(\S+) imported (\d+) of (\d+)/.exec(p.message ?? '');
      if (m) return row('importing', `waiting for ${m[1]} to import (${m[2]} of ${plural(Number(m[3]), 'image')} so far)…`, { busy: true });
      return row('importing', p.message?.startsWith('waiting for ') ? `${p.message}…` : 'waiting for k3s to import the archive…', { busy: true });
    }
    case 'pinning':
      return row('pinning', `${p.message || 'making the pins durable'}…`, { busy: true });
    case 'removing':
      return row('removing', `${p.message || 'removing the archive safely'}…`, { busy: true });
    case 'done':
      return row('done', `done — ${p.message ?? ''}`, { mark: '✓' });
    default:
      return row('starting', 'starting…', { busy: true });
  }
}

/** The local inspection's row: how far the one streaming pass over the file has got. */
export function inspectionRow(name: string, bytesRead?: number, size?: number): Row {
  const row: Row = { label: '', phase: 'inspecting', text: `inspecting ${name}…`, busy: true };
  if (bytesRead === undefined || !size) return row;
  return { ...row, text: `inspecting ${name}… ${humanSize(bytesRead)} of ${humanSize(size)} read (${Math.floor((100 * bytesRead) / size)}%)` };
}

/** Every node's rows on one board; notices (why an upload starts over) become lasting lines. */
export class NodeRows {
  private readonly state = new Map<string, NodePatch>();

  constructor(private readonly board: ProgressBoard) {}

  update(node: string, patch: NodePatch): void {
    const prev = this.state.get(node) ?? {};
    const next = { ...prev, ...patch };
    this.state.set(node, next);
    if (patch.notice && patch.notice !== prev.notice) this.board.note(`${node}: ${patch.notice}`);
    this.board.set(node, nodeRow(node, next));
  }

  failed(node: string, message: string): void {
    this.board.set(node, { label: node, phase: 'failed', text: `FAILED — ${message}`, mark: '✗' });
  }
}
