// Where the images dir is: <data-dir>/agent/images, data-dir from /etc/rancher/<distro>/config.yaml
// and config.yaml.d/*.yaml merged as k3s merges them. Parsed from the sample files in
// fixtures/distro-config (sources in its README), each both as a whole file and as the probe's
// own filter (detect.ts DATA_DIR_FILTER) sends it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeImagesDir, resolveImagesDir, type ConfigFileLines } from '../../../../src/core/node/distroConfig';
import { DATA_DIR_FILTER, PROBE_SCRIPT } from '../../../../src/core/node/detect';

const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'distro-config');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'hf-distrocfg-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The probe's filter, run by a real shell on the file, exactly as the node runs it. */
function probeFiltered(file: string): string[] {
  expect(PROBE_SCRIPT).toContain(DATA_DIR_FILTER);
  const out = execFileSync('sh', ['-c', `{ ${DATA_DIR_FILTER}; } < "$1"`, 'sh', file]).toString();
  return out === '' ? [] : out.replace(/\n$/, '').split('\n').map((l) => l.replace(/^\|/, ''));
}

const whole = (file: string): string[] => readFileSync(file, 'utf8').split('\n');

/** The same files as the probe reports them (`at` = the path on the node), read both ways. */
function both(files: { fixture?: string; text?: string; at: string }[]): [string, ConfigFileLines[]][] {
  const local = files.map((f, i) => {
    if (f.fixture) return path.join(FIXTURES, f.fixture);
    const p = path.join(tmp, `${i}-${path.basename(f.at)}`);
    writeFileSync(p, f.text!);
    return p;
  });
  return [
    ['whole files', files.map((f, i) => ({ path: f.at, lines: whole(local[i]!) }))],
    ['probe-filtered', files.map((f, i) => ({ path: f.at, lines: probeFiltered(local[i]!) }))],
  ];
}

const K3S = '/etc/rancher/k3s/config.yaml';
const RKE2 = '/etc/rancher/rke2/config.yaml';

describe('resolveImagesDir: the documented samples', () => {
  it.each(both([{ fixture: 'k3s-docs-basic.yaml', at: K3S }]))('k3s docs basic example (%s): the default', (_, files) => {
    expect(resolveImagesDir('k3s', files)).toEqual({
      imagesDir: '/var/lib/rancher/k3s/agent/images',
      dataDir: '/var/lib/rancher/k3s',
      from: 'default',
      file: null,
      notes: [],
    });
  });

  it.each(
    both([
      { fixture: 'k3s-docs-multi.config.yaml', at: K3S },
      { fixture: 'k3s-docs-multi.test1.yaml', at: `${K3S}.d/test1.yaml` },
      { fixture: 'k3s-docs-multi.test2.yaml', at: `${K3S}.d/test2.yaml` },
    ]),
  )('k3s docs multiple files (%s): no data-dir anywhere, the default', (_, files) => {
    expect(resolveImagesDir('k3s', files).imagesDir).toBe('/var/lib/rancher/k3s/agent/images');
  });

  it.each(
    both([
      { fixture: 'k3s-testdata.data.yaml', at: K3S },
      { fixture: 'k3s-testdata.01-data.yml', at: `${K3S}.d/01-data.yml` },
    ]),
  )("k3s's own parser test data (%s): one-letter keys other than d are not data-dir", (_, files) => {
    expect(resolveImagesDir('k3s', files)).toMatchObject({ from: 'default', notes: [] });
  });

  it.each(both([{ fixture: 'k3s-data-disk.yaml', at: K3S }]))('data-dir moved to a data disk (%s)', (_, files) => {
    const det = resolveImagesDir('k3s', files);
    expect(det).toEqual({
      imagesDir: '/var/lib/noctaya-data/k3s/agent/images',
      dataDir: '/var/lib/noctaya-data/k3s',
      from: 'config',
      file: K3S,
      notes: [],
    });
    expect(describeImagesDir('k3s', det)).toBe(`data-dir /var/lib/noctaya-data/k3s from ${K3S}`);
  });

  it.each(both([{ fixture: 'rke2-docs-basic.yaml', at: RKE2 }]))("RKE2 docs example (%s): RKE2's default", (_, files) => {
    const det = resolveImagesDir('rke2', files);
    expect(det).toMatchObject({ imagesDir: '/var/lib/rancher/rke2/agent/images', dataDir: '/var/lib/rancher/rke2', from: 'default' });
    expect(describeImagesDir('rke2', det)).toBe(`RKE2's default data-dir: none set in ${RKE2} or config.yaml.d/`);
  });

  it.each(
    both([
      { fixture: 'rke2-docs-basic.yaml', at: RKE2 },
      { fixture: 'rancher-50-rancher.json.yaml', at: `${RKE2}.d/50-rancher.yaml` },
    ]),
  )("Rancher's JSON drop-in (%s) sets it", (_, files) => {
    expect(resolveImagesDir('rke2', files)).toMatchObject({
      imagesDir: '/opt/rancher/rke2/agent/images',
      from: 'config',
      file: `${RKE2}.d/50-rancher.yaml`,
    });
  });

  it('the probe never sends the join tokens of these files', () => {
    const sent = probeFiltered(path.join(FIXTURES, 'rancher-50-rancher.json.yaml')).join('\n');
    expect(sent).toBe('{\n"data-dir": "/opt/rancher/rke2"');
    // One-line JSON (#49 item 18): once sent whole, token and all.
    const one = path.join(tmp, 'one-line.json.yaml');
    writeFileSync(one, '{"token":"K10-one-line-S3cret","server":"https://k3s:6443","data-dir":"/srv/k3s"}\n');
    expect(probeFiltered(one)).toEqual(['{', '"data-dir":"/srv/k3s"']);
    expect(probeFiltered(path.join(FIXTURES, 'k3s-docs-multi.config.yaml'))).toEqual([]);
  });
});

describe('resolveImagesDir: how k3s merges and how values are written', () => {
  const one = (text: string, distro: 'k3s' | 'rke2' = 'k3s') => both([{ text, at: K3S }]).map(([how, files]) => [how, resolveImagesDir(distro, files)] as const);

  it.each([
    ['data-dir: /srv/k3s\n', '/srv/k3s'],
    ['data-dir: "/srv/k3s"   # moved to the data disk\n', '/srv/k3s'],
    ["data-dir: '/srv/it''s k3s'\n", "/srv/it's k3s"],
    ['data-dir: /srv/k3s # moved\n', '/srv/k3s'],
    ['data-dir: /srv/k3s/\n', '/srv/k3s'],
    ['"data-dir": /srv/quoted-key\n', '/srv/quoted-key'],
    ['d: /srv/short-flag\n', '/srv/short-flag'],
    ['data-dir+: /srv/appended\n', '/srv/appended'],
    ['token: x\r\ndata-dir: /srv/crlf\r\n', '/srv/crlf'],
    ['{"token":"x","data-dir":"/srv/one-line-json"}\n', '/srv/one-line-json'],
    ['write-kubeconfig-mode: "0644"\ndata-dir: /srv/last\nnode-label:\n  - data-dir=/not/this\n', '/srv/last'],
  ])('%j → %s', (text, dataDir) => {
    for (const [how, det] of one(text)) expect(det, how).toMatchObject({ dataDir, from: 'config', notes: [] });
  });

  it.each([
    ['  data-dir: /nested/under/something\n'],
    ['# data-dir: /commented/out\n'],
    ['user-data-dir: /another/key\n'],
    ['data-dir:\n'],
    ['data-dir: ~\n'],
    ['data-dir: ""\n'],
  ])('%j → the default', (text) => {
    for (const [how, det] of one(text)) expect(det, how).toMatchObject({ from: 'default', notes: [] });
  });

  it.each([['data-dir: |\n  /srv/block\n'], ['data-dir: *anchor\n'], ['data-dir: [/srv/a]\n'], ['data-dir: "/srv/unterminated\n'], ['data-dir: relative/dir\n']])(
    '%j: not guessed; the default, with a note naming the file',
    (text) => {
      for (const [how, det] of one(text)) {
        expect(det.from, how).toBe('default');
        expect(det.notes.join(' '), how).toContain(K3S);
      }
    },
  );

  it('the last file that sets it wins; an empty value there means the default again', () => {
    const files = (last: string): ConfigFileLines[] => [
      { path: K3S, lines: ['data-dir: /a'] },
      { path: `${K3S}.d/10-b.yaml`, lines: ['data-dir: /b'] },
      { path: `${K3S}.d/20-c.yaml`, lines: [last] },
    ];
    expect(resolveImagesDir('k3s', files('node-label: [x]'))).toMatchObject({ dataDir: '/b', file: `${K3S}.d/10-b.yaml` });
    expect(resolveImagesDir('k3s', files('data-dir: /c'))).toMatchObject({ dataDir: '/c', file: `${K3S}.d/20-c.yaml` });
    expect(resolveImagesDir('k3s', files('data-dir:'))).toMatchObject({ dataDir: '/var/lib/rancher/k3s', from: 'default' });
  });

  it('a file the SSH user cannot read is named in a note; what could be read still counts', () => {
    const det = resolveImagesDir('rke2', [
      { path: RKE2, lines: ['data-dir: /data/rke2'] },
      { path: `${RKE2}.d/99-secret.yaml`, lines: null },
    ]);
    expect(det).toMatchObject({ dataDir: '/data/rke2', from: 'config' });
    expect(det.notes).toEqual([`${RKE2}.d/99-secret.yaml could not be read by the SSH user, so a data-dir it may set is not known.`]);
  });

  it('no distro binary answered: k3s is assumed, and said', () => {
    const det = resolveImagesDir('unknown', []);
    expect(det).toMatchObject({ imagesDir: '/var/lib/rancher/k3s/agent/images', from: 'default' });
    expect(det.notes).toEqual(['Neither k3s nor rke2 answered --version, so k3s is assumed.']);
  });
});
