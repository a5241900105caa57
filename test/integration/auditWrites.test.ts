// A change is never made that the audit log cannot record, and one whose record fails afterwards
// says so (#51). With the log unwritable — a directory in its place, a link to /dev/full, a link
// to nowhere — pin and rm-archive refuse before touching the node (exit 3, cause and fix). When
// the write fails after the change (the log became /dev/full meanwhile: ENOSPC), the error says
// the change WAS made and what the log is missing: for a removal, the archive's SHA-256.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emulateK3sStart, labelsOf, startLab, writeImageArchive, type Lab, type LabNodeHandle } from '../../lab';
import { addLabNode, runCli, sha256File, tempHome, type CliResult } from './support';

const CRI = 'io.cri-containerd.pinned';
const K3S = 'io.cattle.k3s.pinned';

let lab: Lab;
let n: LabNodeHandle;
let home: string;
let logFile: string;

/** The real CLI on this test's home. */
const cli = (args: string[]): Promise<CliResult> => runCli(args, { HOLDFAST_HOME: home });

const refusal = (why: string) => `holdfast: nothing was changed: the audit log ${logFile} cannot be written (${why})`;

/** Puts `make` in place of the audit log for the length of `fn`, the real log kept aside. */
async function withLogReplaced<T>(make: () => void, fn: () => Promise<T>): Promise<T> {
  const aside = `${logFile}.aside`;
  if (existsSync(logFile)) renameSync(logFile, aside);
  make();
  try {
    return await fn();
  } finally {
    rmSync(logFile, { recursive: true, force: true });
    if (existsSync(aside)) renameSync(aside, logFile);
  }
}

beforeAll(async () => {
  lab = await startLab({ nodes: ['aw1'] });
  n = lab.node('aw1');
  home = tempHome();
  logFile = path.join(home, 'audit.jsonl');
  await addLabNode(lab, n, home);
  for (const name of ['a', 'b']) await writeImageArchive(path.join(n.hostImagesDir, `${name}.tar`), { format: 'oci', images: [{ name: `docker.io/library/aw-${name}:1.0` }] });
  await emulateK3sStart(n);
});

afterAll(async () => {
  await lab?.stop();
});

describe('an audit log that cannot be read', () => {
  it('images --lost is an error naming the log, never "no durable pin is lost": a directory, a 700 MiB line of NULs', async () => {
    const cases: [string, () => void, string][] = [
      ['a directory', () => mkdirSync(logFile), `cannot read the audit log ${logFile}: it is a directory`],
      [
        'a sparse line of NULs',
        () => {
          writeFileSync(logFile, '');
          truncateSync(logFile, 700 * 1024 * 1024);
        },
        `cannot read the audit log ${logFile}: its line at byte 0 is over the limit audit.lineBytes (16 MiB)`,
      ],
    ];
    for (const [what, make, message] of cases) {
      const r = await withLogReplaced(make, () => cli(['images', 'aw1', '--lost']));
      expect(r.code, `${what}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`holdfast: ${message} — `);
      expect(r.stderr).toContain('Move it aside (Holdfast then starts a new log)');
      expect(r.stdout).not.toContain('is lost');
    }
  });
});

describe('an audit log that cannot be written', () => {
  it('refuses pin before changing the node: a directory, a link to /dev/full, a link to nowhere', async () => {
    const cases: [string, () => void, string][] = [
      ['a directory', () => mkdirSync(logFile), 'it is a directory'],
      ['a link to /dev/full', () => symlinkSync('/dev/full', logFile), 'it is not a regular file'],
      ['a link to nowhere', () => symlinkSync('/nonexistent-hf/audit.jsonl', logFile), 'it is a link to /nonexistent-hf/audit.jsonl, which cannot be created: it does not exist'],
    ];
    for (const [what, make, why] of cases) {
      const r = await withLogReplaced(make, () => cli(['pin', 'aw1', '--archive', 'a.tar']));
      expect(r.code, `${what}: ${r.stderr}`).toBe(3);
      expect(r.stderr).toContain(refusal(why));
      expect(r.stderr).toContain('Make it a writable file');
      expect(await labelsOf(n, 'docker.io/library/aw-a:1.0'), `${what}: still pinned by k3s only`).toHaveProperty(K3S);
    }
  });

  it('refuses rm-archive before removing anything (a link to /dev/full, a directory)', async () => {
    const pinned = await cli(['pin', 'aw1', '--archive', 'a.tar']);
    expect(pinned.code, pinned.stderr).toBe(0);
    for (const [make, why] of [
      [() => symlinkSync('/dev/full', logFile), 'it is not a regular file'],
      [() => mkdirSync(logFile), 'it is a directory'],
    ] as const) {
      const r = await withLogReplaced(make, () => cli(['rm-archive', 'aw1', 'a.tar']));
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain(refusal(why));
      expect(existsSync(path.join(n.hostImagesDir, 'a.tar'))).toBe(true);
    }
  });

  it('a write that fails after the change says the change WAS made and what is not recorded', async () => {
    if (!existsSync(logFile)) writeFileSync(logFile, '');
    const before = readFileSync(logFile, 'utf8');
    const pin = await whileLogHeld(['pin', 'aw1', '--archive', 'b.tar'], async () => !(K3S in (await labelsOf(n, 'docker.io/library/aw-b:1.0'))));
    expect(pin.code, pin.stderr).toBe(1);
    expect(pin.stderr).toMatch(
      new RegExp(`^holdfast: the change WAS made: pinned \\d+ references? on aw1; but the audit log ${logFile.replace(/[.]/g, '\\.')} could not record it \\(the disk is full\\) — Not recorded: the pin of [^\\n]*docker\\.io/library/aw-b:1\\.0`),
    );
    expect(await labelsOf(n, 'docker.io/library/aw-b:1.0')).toHaveProperty(CRI, 'pinned');

    const archive = path.join(n.hostImagesDir, 'b.tar');
    const sha = await sha256File(archive);
    const size = statSync(archive).size;
    const rm = await whileLogHeld(['rm-archive', 'aw1', 'b.tar'], async () => !existsSync(archive));
    expect(rm.code, rm.stderr).toBe(1);
    expect(rm.stderr).toContain(`holdfast: the change WAS made: removed b.tar from aw1; but the audit log ${logFile} could not record it (the disk is full)`);
    expect(rm.stderr).toContain(`Not recorded: its removal and its SHA-256, ${sha} (${size} bytes).`);
    expect(readFileSync(logFile, 'utf8')).toBe(before);
  });
});

/**
 * Runs the CLI while the test holds the audit log's lock (as another Holdfast would), so the
 * command's append waits; once `changed` says the node was changed, the log is replaced by a link
 * to /dev/full and the lock let go: the append that follows fails with ENOSPC, after the change.
 */
async function whileLogHeld(args: string[], changed: () => Promise<boolean>): Promise<CliResult> {
  const lock = `${logFile}.lock`;
  mkdirSync(lock);
  // Fresh, so the command never takes it for a crashed process's (config/lock.ts: stale after 10 s).
  const keep = setInterval(() => utimesSync(lock, new Date(), new Date()), 1000);
  const run = cli(args);
  const aside = `${logFile}.aside`;
  try {
    const deadline = Date.now() + 120_000;
    while (!(await changed())) {
      if (Date.now() > deadline) throw new Error(`holdfast ${args.join(' ')} did not change the node`);
      await new Promise((r) => setTimeout(r, 100));
    }
    renameSync(logFile, aside);
    symlinkSync('/dev/full', logFile);
  } finally {
    clearInterval(keep);
    rmSync(lock, { recursive: true, force: true });
  }
  const r = await run;
  rmSync(logFile, { force: true });
  renameSync(aside, logFile);
  return r;
}
