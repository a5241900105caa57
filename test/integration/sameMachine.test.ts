// The same machine added twice under two names (issue #49 item 8): once directly, once through
// another node as a jump host. Each lab node has its own sshd host key, so two entries that lead
// to one lab node present the same key: `node ls` says so from known_hosts, and `inspect` counts
// the machine once in its totals, names both entries, and keeps each entry's own row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLab, type Lab } from '../../lab';
import type { FleetReport } from '../../src/shared/fleet';
import { addLabNode, runCli, tempHome } from './support';

describe('one lab node configured twice (m1, and m1-again through m2), beside another (m2)', () => {
  let lab: Lab;
  let home: string;

  const cli = async (args: string[]) => {
    const r = await runCli(args, { HOLDFAST_HOME: home });
    if (r.code !== 0) throw new Error(`holdfast ${args.join(' ')} exited ${r.code}\n${r.stderr}${r.stdout}`);
    return r;
  };

  beforeAll(async () => {
    lab = await startLab({ nodes: ['m1', 'm2'] });
    home = tempHome();
    await addLabNode(lab, lab.node('m1'), home);
    await addLabNode(lab, lab.node('m2'), home);
    // the same machine again, reached another way: through m2 as its jump host
    await addLabNode(lab, lab.node('m1'), home, { name: 'm1-again', extra: ['--jump', 'm2'] });
  });

  afterAll(async () => {
    await lab?.stop();
  });

  it('inspect: the machine counts once in the totals, both entries are named, each keeps its row', async () => {
    const report = JSON.parse((await cli(['inspect', '--json'])).stdout) as FleetReport;
    expect(report.nodes.map((n) => n.node)).toEqual(['m1', 'm2', 'm1-again']);
    const key = report.nodes[0]!.versions!.hostKey!;
    expect(key).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
    expect(report.nodes[2]!.versions!.hostKey).toBe(key);
    expect(report.nodes[1]!.versions!.hostKey).not.toBe(key);
    expect(report.summary).toMatchObject({ nodes: 2, reachable: 2, unreachable: 0, sameMachine: [{ nodes: ['m1', 'm1-again'], hostKey: key }] });
    const again = report.summary.atRisk.find((r) => r.node === 'm1-again');
    expect(again?.reasons).toContain(`m1 and m1-again are one machine (the same SSH host key ${key}): counted once in the totals`);

    const text = await cli(['inspect']);
    expect(text.stdout).toContain('2 of 2 nodes reachable');
    expect(text.stdout).toContain(`Same machine: m1 and m1-again are one machine (the same SSH host key ${key}): counted once in these totals.`);
  });

  it('node ls warns from the keys known_hosts records, without connecting', async () => {
    const report = JSON.parse((await cli(['inspect', 'm1', '--json'])).stdout) as FleetReport;
    const key = report.nodes[0]!.versions!.hostKey!;
    // node ls does not connect: nodes.json and the keys known_hosts records are all it reads
    const r = await cli(['node', 'ls']);
    expect(r.stdout).toContain(`warning: m1 and m1-again are one machine (the same SSH host key ${key}): inspect counts it once; to keep one entry: holdfast node rm m1-again`);
    expect(r.stdout).not.toMatch(/m2 and|and m2 /);
    // two distinct machines: nothing to warn about
    await cli(['node', 'rm', 'm1-again']);
    expect((await cli(['node', 'ls'])).stdout).not.toContain('warning:');
  });
});
