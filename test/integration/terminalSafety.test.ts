// Names a node controls reach the technician's terminal harmless (issue #11, item 4): an archive
// in the images dir whose file name carries escape sequences (retitle the window, clear the
// screen, an 8-bit CSI) and a line break that would fake an extra output line. The human output
// shows them as visible \uXXXX escapes; --json still carries the exact name.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeImageArchive } from '../../lab/fixtures';
import { emulateK3sStart } from '../../lab/k3s';
import { startLab, type Lab } from '../../lab/lab';
import { runCli, tempHome } from './support';

// OSC 0 (window title) ended by BEL, ED (clear screen), an 8-bit CSI (U+009B), a bidi override
// and a line feed followed by text that would look like a line of Holdfast's own.
const EVIL = 'evil\u001b]0;owned\u0007\u001b[2J\u009b31m\u202e\nFAKE: all pins durable.tar';
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let lab: Lab;
let home: string;

beforeAll(async () => {
  lab = await startLab({ nodes: ['ts1'] });
  const n = lab.node('ts1');
  await writeImageArchive(path.join(n.hostImagesDir, EVIL), { format: 'docker', images: [{ name: 'docker.io/lab/evil:1' }] });
  await emulateK3sStart(n);
  home = tempHome();
  const add = await runCli(['node', 'add', 'ts1', '--host', n.host, '--port', String(n.port), '--identity', lab.clientKey, '--known-hosts', lab.knownHosts], { HOLDFAST_HOME: home });
  expect(add.code).toBe(0);
});

afterAll(async () => {
  await lab?.stop();
});

function expectHarmless(text: string): void {
  expect(text).not.toMatch(CONTROL);
  // The fake line never starts a line of its own.
  expect(text.split('\n').some((l) => l.startsWith('FAKE'))).toBe(false);
  expect(text).toContain('evil\\u001b]0;owned\\u0007\\u001b[2J\\u009b31m\\u202e\\u000aFAKE: all pins durable.tar');
}

describe('node-controlled names on the terminal', () => {
  it('holdfast archives: the table and the reason lines', async () => {
    const r = await runCli(['archives', 'ts1'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
    expectHarmless(r.stdout);
  });

  it('--json keeps the exact name (escaped only as JSON escapes it)', async () => {
    const r = await runCli(['archives', 'ts1', '--json'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(CONTROL);
    const archives = (JSON.parse(r.stdout) as { archives: { path: string }[] }).archives;
    expect(archives.map((a) => a.path)).toContain(EVIL);
  });

  it('rm-archive: the check\'s lines and the one-line error (stderr)', async () => {
    const r = await runCli(['rm-archive', 'ts1', EVIL, '--dry-run'], { HOLDFAST_HOME: home });
    expect(r.code).toBe(3);
    expectHarmless(r.stdout);
    expectHarmless(r.stderr);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});
