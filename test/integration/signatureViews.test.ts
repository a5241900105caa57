// What `holdfast import --key` recorded shows in every view (#48): on a clean lab node
// (containerd 2.x), one image verified and one imported with --allow-unsigned; explain,
// inspect's JSON, CSV and HTML, `inspect --openmetrics` and `metrics --local` must each give
// the verdicts containerd holds (labels are labels on every line: importVerify covers 1.7).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labelsOf, type LabNodeHandle } from '../../lab';
import type { SigningFixtures } from '../../lab/signing';
import { parseCsv } from '../../src/core/usecases/fleet/csv';
import { SIGNATURE_LABELS } from '../../src/shared/domain/labels';
import { layoutOf, startSignedSite, tarOf as tar, type SignedSite } from './signedSite';
import { runCli } from './support';

let site: SignedSite;
let fx: SigningFixtures;
let n: LabNodeHandle;
let fpA: string;
const cli = (args: string[]) => site.cli(args);

beforeAll(async () => {
  site = await startSignedSite('sv1');
  ({ fx, n, fpA } = site);
}, 400_000);

afterAll(async () => {
  await site?.stop();
});

/** The name an image gets on the node: its layout tag under lab.local. */
const named = (repo: string): string => `lab.local/${repo}:1`;

/** The layout keeping `repos`, each named lab.local/<repo>:1 (signedSite layoutOf). */
const archive = (repos: string[]): string => layoutOf(site, Object.fromEntries(repos.map((r) => [r, named(r)])));

describe('what was verified, in every view', () => {
  /** One sample of an exposition text (its HELP and TYPE lines first); undefined when absent. */
  const sample = (text: string, series: string): number | undefined => {
    const name = series.replace(/\{.*$/, '');
    expect(text).toContain(`# TYPE ${name} gauge\n`);
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('one verified and one --allow-unsigned image: explain, inspect JSON/CSV/HTML and the metrics say so', async () => {
    const file = await tar(archive(['bundle', 'unsigned']));
    const r = await cli(['import', 'sv1', file, '--direct', '--key', fx.keys.a.pub, '--allow-unsigned']);
    expect(r.code, r.stderr).toBe(0);
    // What containerd holds: the verdicts on the images themselves.
    expect(await labelsOf(n, named('bundle'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'true', [SIGNATURE_LABELS.by]: fpA });
    // (its reason, "no signature", holds a space, which the lab's reading of `ctr images ls` splits: inspect's JSON has it below)
    expect(await labelsOf(n, named('unsigned'))).toMatchObject({ [SIGNATURE_LABELS.verified]: 'false' });
    const at = (await labelsOf(n, named('bundle')))[SIGNATURE_LABELS.at]!;

    const out = { csv: path.join(site.dir, 'sv1.csv'), html: path.join(site.dir, 'sv1.html'), prom: path.join(site.dir, 'sv1.prom') };
    const inspected = await cli(['inspect', 'sv1', '--json', '--csv', out.csv, '--html', out.html, '--openmetrics', out.prom]);
    expect(inspected.code, inspected.stderr).toBe(0);
    const images = (JSON.parse(inspected.stdout) as { nodes: { images: { name: string; signature: { verified: boolean; at: string } | null }[] }[] }).nodes[0]!.images;
    expect(images.find((i) => i.name === named('bundle'))!.signature).toEqual({ verified: true, by: fpA, format: 'bundle', at });
    const refused = images.find((i) => i.name === named('unsigned'))!.signature;
    expect(refused).toEqual({ verified: false, reason: 'no signature', at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    const signed = `signed by key ${fpA.slice(0, 8)}…, verified ${at.slice(0, 10)}`;
    const unsigned = `not verified: no signature (${refused!.at.slice(0, 10)})`;

    const explained = await cli(['explain', 'sv1', named('unsigned')]);
    expect(explained.code, explained.stderr).toBe(0);
    expect(explained.stdout.split('\n').filter((l) => l.startsWith('Signature'))).toEqual([`Signature      ${unsigned}`]);

    const rows = parseCsv(readFileSync(out.csv, 'utf8'));
    const col = rows[0]!.indexOf('signature');
    expect(col).toBe(rows[0]!.length - 1);
    expect(rows.filter((x) => x[2] === named('bundle')).map((x) => x[col])).toEqual([signed]);
    expect(rows.filter((x) => x[2] === named('unsigned')).map((x) => x[col])).toEqual([unsigned]);
    const page = readFileSync(out.html, 'utf8');
    for (const sentence of [signed, unsigned]) expect(page).toContain(sentence);

    // The series count references: each image has its tag and its digest reference, both carrying
    // the verdict (CRI's own sha256:<id> records are not counted). No cluster tells the lab node
    // what it needs, so the digest references, which show an air-gap import, make both needed.
    const refs = images.map((i) => i.name).filter((x) => !x.startsWith('sha256:'));
    expect(refs.sort()).toEqual([named('bundle'), `lab.local/bundle@${fx.images.bundle.digest}`, `lab.local/unsigned@${fx.images.unsigned.digest}`, named('unsigned')].sort());
    expect(images.filter((i) => i.signature?.verified === true).map((i) => i.name).sort()).toEqual([named('bundle'), `lab.local/bundle@${fx.images.bundle.digest}`].sort());
    const expected = { holdfast_images_verified: 2, holdfast_images_unverified: 2, holdfast_needed_images_unverified: 2 };
    const fleet = readFileSync(out.prom, 'utf8');
    const local = await runCli(['metrics', '--local', '--name', 'sv1', '--socket', n.hostSocket, '--images-dir', n.hostImagesDir], { HOLDFAST_HOME: site.home }, 120_000);
    expect(local.code, local.stderr).toBe(0);
    for (const [name, value] of Object.entries(expected)) {
      expect([name, sample(fleet, `${name}{node="sv1"}`)]).toEqual([name, value]);
      expect([name, sample(local.stdout, name)]).toEqual([name, value]);
    }
  });
});
