// `-o json` prints what docs/cli.md's Output table says (#47 item 3): for each command, the
// top-level fields its JSON has (`?`: only when it applies). Each row is checked against what the
// real printer (src/cli/output.ts, with the command's own shaping) emits for a typed fixture:
// every emitted field is documented, every documented field without `?` is always there.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { archivesJson } from '../../../src/cli/commands/archives';
import { sshImportJson } from '../../../src/cli/commands/node/bulk';
import { pinSetShowJson } from '../../../src/cli/commands/pinset';
import type { PolicyShowJson } from '../../../src/cli/commands/policy';
import type { GuardRunJson } from '../../../src/cli/commands/guard';
import type { PruneOutcome } from '../../../src/cli/commands/prune';
import type { NodeVerifyOutcome } from '../../../src/shared/signatures';
import { buildProgram } from '../../../src/cli/main';
import { printedAsJson } from '../../../src/cli/output';
import { summarizeFleet } from '../../../src/core/usecases/fleet/summary';
import type { DiskPicture } from '../../../src/shared/diskPicture';
import type { LostPin } from '../../../src/shared/domain/lostPins';
import type { NodeDef } from '../../../src/shared/domain/nodes';
import type { PinPlan } from '../../../src/shared/domain/pins';
import type { NeedsReport } from '../../../src/shared/needs';
import { explainReference } from '../../../src/shared/explain';
import { explainInWords } from '../../../src/cli/commands/explain';
import type { FleetReport } from '../../../src/shared/fleet';
import { resolveGcPolicy } from '../../../src/shared/gcPolicy';
import { planPrune } from '../../../src/shared/prunePlan';
import { rke2ListsNotice } from '../../../src/shared/rke2Lists';
import { imagesWhere } from '../../../src/cli/remedyText';
import { resolvePinSet } from '../../../src/shared/pinSet';
import { EDGE1_ARCHIVES, EDGE1_AUDIT, EDGE1_IMAGES } from '../../doubles/catalog';
import { imageRef } from '../../support/imageRef';

const NODE = 'edge-01';
const quiet = { out: () => undefined, err: () => undefined };

const LOST: LostPin = {
  node: NODE,
  kind: 'label-removed',
  ref: 'docker.io/library/nginx:1.27',
  imageId: null,
  pinnedAt: '2026-01-01T00:00:00Z',
  pinnedBy: 'tech',
  summary: 'Its durable pin label was removed.',
  causes: ['someone ran ctr images label'],
  remedy: { kind: 'repin', text: 'Pin it again.' },
  stillPinnedVia: null,
};
const NEEDS: NeedsReport = { basis: 'provenance', sources: [], noSource: 'no kubectl', notes: [], missing: [], atRisk: 0 };
const NODE_DEF: NodeDef = {
  name: NODE,
  host: '10.0.0.7',
  port: 22,
  user: 'root',
  identity: '/home/tech/.ssh/id_ed25519',
  knownHosts: '/home/tech/.ssh/known_hosts',
  socket: '/run/k3s/containerd/containerd.sock',
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  imagesDirSource: 'detected',
  namespace: 'k8s.io',
  group: 'site-a',
  sudo: true,
  jump: 'bastion',
  auth: 'publickey',
};
const PLAN: PinPlan = { node: NODE, action: 'pin', changes: [{ ref: 'docker.io/library/nginx:1.27', imageId: null, before: {}, after: { 'io.cri-containerd.pinned': 'pinned' } }], unchanged: [], warnings: ['x'] };
const DISK: DiskPicture = {
  node: NODE,
  takenAt: '2026-01-01T00:00:00Z',
  fileSystems: [],
  imagefs: null,
  policy: resolveGcPolicy([]),
  criPinning: 'any',
  images: null,
  summary: null,
  forecast: null,
  containers: null,
  notes: [],
};
const SET = { images: ['docker.io/library/nginx:1.27', 'registry.local/app/missing:1'], needed: false, patterns: ['docker.io/library/*'] };
const GUARD: GuardRunJson = {
  node: NODE,
  pinSet: 'site',
  pinSetDigest: `sha256:${'0'.repeat(64)}`,
  dryRun: false,
  time: '2026-01-01T00:00:00Z',
  fixed: [{ ref: 'docker.io/library/nginx:1.27', restored: 'label-removed' }],
  durable: ['docker.io/library/nginx:1.27'],
  missing: ['registry.local/app/missing:1'],
  unverified: [{ ref: 'registry.local/app/unsigned:1', reason: 'never verified' }],
  unmatched: [],
  warnings: ['x'],
};
const FLEET: FleetReport = { generatedAt: '2026-01-01T00:00:00Z', summary: summarizeFleet([], []), nodes: [], drift: [] };
const PRUNE: PruneOutcome[] = [
  { node: NODE, ok: true, plan: planPrune(NODE, [], { sizes: {}, byImage: {} }) },
  { node: 'edge-02', ok: false, error: { code: 'UNREACHABLE', message: 'no route to host', hint: 'Check the network.' } },
];
const VERIFY: NodeVerifyOutcome[] = [
  {
    node: NODE,
    ok: true,
    dryRun: false,
    recorded: 2,
    images: [{ name: 'docker.io/library/nginx:1.27', refs: ['docker.io/library/nginx:1.27'], digest: 'sha256:' + '1'.repeat(64), signature: { verified: false, refusal: { kind: 'no-signature' }, reason: 'no signature', at: '2026-01-01T00:00:00Z' } }],
  },
  { node: 'edge-02', ok: false, error: { code: 'UNREACHABLE', message: 'no route to host' } },
];

/** What each documented command prints, as the command shapes it, for a representative result. */
const RESULTS: Record<string, () => unknown> = {
  images: () => [...EDGE1_IMAGES, imageRef('docker.io/library/lost:1', { lostPin: LOST, imagePinnedNow: false, imagePinnedAfterRestart: false })],
  'images --lost': () => [LOST],
  archives: () => archivesJson(NODE, EDGE1_ARCHIVES, rke2ListsNotice(NODE, 'rke2', [], imagesWhere(NODE))),
  explain: () => explainInWords(explainReference({ node: NODE, ref: EDGE1_IMAGES[0]!.name, images: EDGE1_IMAGES, needs: NEEDS, lost: [LOST], archives: EDGE1_ARCHIVES, mode: 'any' })!),
  inspect: () => FLEET,
  disk: () => DISK,
  pin: () => PLAN,
  'pinset show': () => pinSetShowJson(NODE, 'site', resolvePinSet(SET, { refs: EDGE1_IMAGES, neededMissing: [] }), PLAN),
  'policy show': (): PolicyShowJson => ({
    node: NODE,
    group: 'plant-a',
    policy: { file: '/etc/holdfast/policy.yaml', name: 'site' },
    rules: [{ name: 'apps', groups: ['plant-a'], images: ['registry.local/app/**'], keys: [{ path: 'site.pub', file: '/etc/holdfast/site.pub', fingerprint: 'ab'.repeat(32) }], identities: [], trustedRoot: null, allowUnsigned: false }],
  }),
  guard: () => GUARD,
  unpin: () => ({ ...PLAN, action: 'unpin' }),
  prune: () => PRUNE,
  verify: () => VERIFY,
  log: () => EDGE1_AUDIT,
  'node ls': () => [NODE_DEF],
  'node import-ssh-config': () => sshImportJson(false, { nodes: [], skipped: [{ alias: 'old', reason: 'already a node' }], notes: [] }, [NODE_DEF]),
};

interface Row {
  commands: string[];
  fields: { name: string; optional: boolean }[];
}

/** The rows of the table in docs/cli.md's Output section: | `cmd`, `cmd` | kind | `field`, `field?` |. */
function documented(): Row[] {
  const doc = readFileSync(path.resolve(import.meta.dirname, '../../../docs/cli.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Output\n'), doc.indexOf('\n## ', doc.indexOf('\n## Output\n') + 1));
  const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
  return section
    .split('\n')
    .map((l) => l.trim().split('|').slice(1, -1))
    .filter((cells) => cells.length === 3 && cells[0]!.includes('`'))
    .map(([commands, , fields]) => ({
      commands: ticked(commands!),
      fields: ticked(fields!).map((f) => ({ name: f.replace(/\?$/, ''), optional: f.endsWith('?') })),
    }));
}

/** The JSON the real printer writes for `result`, parsed back. */
function printed(result: unknown): unknown {
  const out: string[] = [];
  expect(printedAsJson({ io: { out: (s) => out.push(s) }, output: 'json' }, result)).toBe(true);
  expect(out).toHaveLength(1);
  return JSON.parse(out[0]!);
}

/** The objects whose keys are the top-level fields: an array's elements, or the object itself. */
function tops(json: unknown): Record<string, unknown>[] {
  const all = Array.isArray(json) ? json : [json];
  return all.filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null && !Array.isArray(o));
}

/** Every command, as its words (`node ls`), that has --json. */
function withJson(cmd: Command, words: string[] = []): string[] {
  const here = cmd.options.some((o) => o.long === '--json') ? [words.join(' ')] : [];
  return [...here, ...cmd.commands.flatMap((c) => withJson(c, [...words, c.name()]))];
}

describe('docs/cli.md documents each command’s JSON', () => {
  const rows = documented();

  it('has a row for every command with --json, and a fixture for every row', async () => {
    const rowCommands = rows.flatMap((r) => r.commands);
    expect(rowCommands.toSorted()).toEqual(Object.keys(RESULTS).toSorted());
    const base = new Set(rowCommands.map((c) => c.replace(/ --\S+$/, '')));
    expect(withJson(await buildProgram(quiet, ['--help'])).toSorted()).toEqual([...base].toSorted());
  });

  for (const row of rows) {
    for (const command of row.commands) {
      it(`${command}: the documented fields are the printed ones`, () => {
        const objects = tops(printed(RESULTS[command]?.()));
        expect(objects.length, `${command}: the fixture prints something`).toBeGreaterThan(0);
        const emitted = new Set(objects.flatMap((o) => Object.keys(o)));
        expect([...emitted].filter((k) => !row.fields.some((f) => f.name === k)), `${command}: printed but not documented`).toEqual([]);
        for (const f of row.fields.filter((x) => !x.optional)) {
          expect(
            objects.every((o) => Object.hasOwn(o, f.name)),
            `${command}: ${f.name} is documented as always there`,
          ).toBe(true);
        }
      });
    }
  }
});
