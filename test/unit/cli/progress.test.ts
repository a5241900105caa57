// The progress board, replayed on a test terminal (test/support/screen.ts): what a person sees
// line by line on a TTY, and what a log gets otherwise. A hand-driven clock; no timers.
import { describe, expect, it } from 'vitest';
import { ProgressBoard, withoutProgress, type Row } from '../../../src/cli/progress';
import { duration, inspectionRow, NodeRows, nodeRow } from '../../../src/cli/transferRows';
import { uploadJobPatch } from '../../../src/core/usecases/upload/progress';
import { Screen } from '../../support/screen';

function tty(columns = 80, rows = 24) {
  let written = '';
  const stream = { isTTY: true, columns, rows, write: (s: string) => ((written += s), true) };
  return { stream, screen: () => new Screen(columns).write(written).text(), raw: () => written };
}

function clock() {
  let t = 1_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const up = (node: string, pct: number): Row => ({ label: node, phase: 'uploading', text: `uploading ${pct}%`, fraction: pct / 100 });

describe('progress board on a terminal', () => {
  it('gives every node a line of its own and redraws them in place', () => {
    const t = tty();
    const c = clock();
    const b = new ProgressBoard(t.stream, { now: c.now, timer: false });
    b.set('n1', up('n1', 10));
    b.set('n2', up('n2', 20));
    for (let i = 1; i <= 5; i++) {
      c.advance(200);
      b.set('n1', up('n1', 10 + i * 10));
      c.advance(200);
      b.set('n2', up('n2', 20 + i * 10));
    }
    const lines = t.screen();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^n1 {2}━+─* uploading 60%$/);
    expect(lines[1]).toMatch(/^n2 {2}━+─* uploading 70%$/);
    // In place: the cursor went back up over the two lines, not a carriage return per node.
    expect(t.raw()).toContain('\x1b[2A');
    b.close();
  });

  it('puts a note above the live lines, and close() leaves only the notes', () => {
    const t = tty();
    const c = clock();
    const b = new ProgressBoard(t.stream, { now: c.now, timer: false });
    b.set('inspect', inspectionRow('bundle.tar.zst', 412 * 1024 * 1024, 1024 * 1024 * 1024));
    expect(t.screen()).toEqual(['⠋ inspecting bundle.tar.zst… 412 MiB of 1 GiB read (40%)']);
    b.delete('inspect');
    b.note('bundle.tar.zst: oci archive, zstd, 1 GiB, 3 images');
    b.set('n1', nodeRow('n1', { phase: 'verifying', message: 'verifying SHA-256 on the node' }));
    b.set('n2', nodeRow('n2', { phase: 'importing', message: 'k3s imported 1 of 3 images' }));
    b.note('n2: the partial upload on n2 was 0 bytes: starting over');
    expect(t.screen()).toEqual([
      'bundle.tar.zst: oci archive, zstd, 1 GiB, 3 images',
      'n2: the partial upload on n2 was 0 bytes: starting over',
      'n1  ⠋ verifying (sha256 on the node)…',
      'n2  ⠋ waiting for k3s to import (1 of 3 images so far)…',
    ]);
    b.close();
    expect(t.screen()).toEqual(['bundle.tar.zst: oci archive, zstd, 1 GiB, 3 images', 'n2: the partial upload on n2 was 0 bytes: starting over']);
    // Whatever comes next starts at the beginning of a clean line.
    t.stream.write('holdfast: cancelling\n');
    expect(t.screen().at(-1)).toBe('holdfast: cancelling');
  });

  it('spins on rows that wait, and shows for how long', () => {
    const t = tty();
    const c = clock();
    const b = new ProgressBoard(t.stream, { now: c.now, timer: false });
    b.set('n1', nodeRow('n1', { phase: 'verifying' }));
    const frames = new Set<string>();
    for (let i = 0; i < 30; i++) {
      c.advance(100);
      b.tick();
      frames.add(t.screen()[0]!.slice(4, 5));
    }
    expect(frames.size).toBeGreaterThan(5);
    expect(t.screen()[0]).toMatch(/^n1 {2}. verifying \(sha256 on the node\)… 3 s$/);
  });

  it('cuts lines to the terminal width, so nothing wraps and the redraw stays in place', () => {
    const t = tty(40);
    const c = clock();
    const b = new ProgressBoard(t.stream, { now: c.now, timer: false });
    for (let i = 0; i < 3; i++) {
      b.set('a-node-with-a-long-name', { label: 'a-node-with-a-long-name', phase: 'p', text: 'x'.repeat(100) + i });
      b.set('n2', { label: 'n2', phase: 'p', text: 'y'.repeat(100) + i });
      c.advance(500);
    }
    const lines = t.screen();
    expect(lines).toHaveLength(2);
    for (const l of lines) expect([...l].length).toBeLessThan(40);
    expect(lines[1]).toMatch(/^n2 +yyy+…$/);
  });

  it('shows the unfinished rows and one line for the rest when they do not fit the screen', () => {
    const t = tty(80, 8);
    const c = clock();
    const b = new ProgressBoard(t.stream, { now: c.now, timer: false });
    for (let i = 1; i <= 12; i++) b.set(`n${i}`, i <= 4 ? { label: `n${i}`, phase: 'done', text: 'done', mark: '✓' } : up(`n${i}`, i));
    const lines = t.screen();
    expect(lines).toHaveLength(6);
    expect(lines.slice(0, 5).every((l) => /uploading/.test(l))).toBe(true);
    expect(lines[5]).toBe('… and 7 more (4 finished)');
  });

  it('stands aside while a question is asked on the terminal', async () => {
    const t = tty();
    const c = clock();
    const b = new ProgressBoard(t.stream, { now: c.now, timer: false });
    b.set('n1', up('n1', 5));
    await withoutProgress(async () => {
      expect(t.screen()).toEqual([]);
      c.advance(500);
      b.set('n1', up('n1', 50));
      b.tick();
      t.stream.write('Passphrase for /root/.ssh/id_ed25519: ');
      expect(t.screen()).toEqual(['Passphrase for /root/.ssh/id_ed25519:']);
      t.stream.write('\n');
    });
    expect(t.screen()).toEqual(['Passphrase for /root/.ssh/id_ed25519:', expect.stringMatching(/^n1 {2}━+─+ uploading 50%$/)]);
    b.close();
  });

  it('neutralises control characters a node name or message could carry', () => {
    const t = tty();
    const b = new ProgressBoard(t.stream, { timer: false });
    b.set('evil', { label: 'n\x1b[2J1', phase: 'p', text: 'ok\x07\rgone' });
    b.note('\x1b]0;title\x07note');
    // oxlint-disable-next-line no-control-regex -- escape sequences are what this matches
    expect(t.raw()).not.toMatch(/\x1b\[2J|\x1b\]0|\x07/);
    expect(t.screen()).toEqual(['\\u001b]0;title\\u0007note', 'n\\u001b[2J1    ok\\u0007\\u000dgone']);
    b.close();
  });
});

describe('progress board in a log (not a terminal)', () => {
  it('prints plain lines: one per phase, at most one per row every few seconds between', () => {
    let out = '';
    const c = clock();
    const b = new ProgressBoard({ isTTY: false, write: (s: string) => (out += s) }, { now: c.now, plainEveryMs: 5_000 });
    const rows = new NodeRows(b);
    rows.update('n1', { phase: 'checking', message: 'connecting' });
    rows.update('n2', { phase: 'checking', message: 'connecting' });
    rows.update('n1', { phase: 'uploading', message: 'uploading', bytesTotal: 100 * 1024 * 1024 });
    rows.update('n1', { notice: 'the partial upload on n1 was 0 bytes: starting over' });
    for (let i = 0; i <= 100; i += 5) {
      c.advance(1_000);
      rows.update('n1', uploadJobPatch({ phase: 'uploading', bytesDone: i * 1024 * 1024, bytesTotal: 100 * 1024 * 1024, rate: 1024 * 1024, eta: 100 - i }));
    }
    rows.update('n1', uploadJobPatch({ phase: 'verifying', bytesDone: 100 * 1024 * 1024, bytesTotal: 100 * 1024 * 1024, rate: 0, eta: 0 }));
    rows.failed('n2', 'k3s did not import it');
    rows.update('n1', { phase: 'done', state: 'succeeded', message: 'uploaded and imported' });
    b.close();
    // oxlint-disable-next-line no-control-regex -- escape sequences are what this matches
    expect(out).not.toMatch(/[\r\x1b]/);
    const lines = out.trimEnd().split('\n');
    expect(lines[0]).toBe('n1: connecting…');
    expect(lines[1]).toBe('n2: connecting…');
    expect(lines[2]).toBe('n1: checking the images dir…');
    expect(lines[3]).toBe('n1: the partial upload on n1 was 0 bytes: starting over');
    const uploading = lines.filter((l) => l.startsWith('n1: uploading'));
    // 21 byte updates over 21 "seconds": a line when the phase starts, then one every 5 s.
    expect(uploading.length).toBeGreaterThanOrEqual(4);
    expect(uploading.length).toBeLessThanOrEqual(6);
    expect(uploading[0]).toBe('n1: uploading 0% · 0 B of 100 MiB · 1 MiB/s · ETA 1 min 40 s');
    expect(lines.slice(-3)).toEqual(['n1: verifying (sha256 on the node)…', 'n2: FAILED — k3s did not import it', 'n1: done — uploaded and imported']);
  });
});

describe('row wording', () => {
  it('names each phase; counts say "image" for one', () => {
    expect(nodeRow('n1', { phase: 'importing', message: 'k3s imported 0 of 1 image' }).text).toBe('waiting for k3s to import (0 of 1 image so far)…');
    expect(nodeRow('n1', { phase: 'verifying', message: 'renaming' }).text).toBe('moving it into place…');
    expect(nodeRow('n1', { phase: 'verifying' })).toMatchObject({ busy: true, text: 'verifying (sha256 on the node)…' });
    expect(nodeRow('n1', { phase: 'uploading', bytesDone: 50, bytesTotal: 200, rate: 0, eta: null })).toMatchObject({ fraction: 0.25, text: 'uploading 25% · 50 B of 200 B' });
    expect(duration(42)).toBe('42 s');
    expect(duration(185)).toBe('3 min 05 s');
    expect(duration(7800)).toBe('2 h 10 min');
  });
});
