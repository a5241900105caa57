import { afterEach, describe, expect, it, vi } from 'vitest';
import { completeNode } from '../../../../../src/core/config/nodes';
import { HoldfastError } from '../../../../../src/core/errors';
import {
  computeDrift,
  DriftAccumulator,
  fleetCsv,
  fleetHtml,
  surveyFleet,
  parseCsv,
  parseDf,
  parseNodeCsv,
  BULK_MAX_BYTES,
  summarizeFleet,
  type FleetNodeResult,
  type FleetReport,
  type NodeProbe,
} from '../../../../../src/core/usecases/fleet';
import type { OpsContext } from '../../../../../src/core/usecases/inventory';
import type { ImageRef } from '../../../../../src/shared/domain/images';
import type { PinState } from '../../../../../src/shared/domain/pins';

const img = (name: string, pin: PinState, afterRestart: 'pinned' | 'unpinned' = pin === 'none' ? 'unpinned' : 'pinned', extra: Partial<ImageRef> = {}): ImageRef => ({
  name,
  digest: 'sha256:' + 'a'.repeat(64),
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId: 'sha256:' + 'b'.repeat(64),
  size: 1234,
  platforms: ['linux/amd64'],
  createdAt: null,
  // the labels the pin state is read from (shared/pinState)
  labels: pin === 'durable' ? { 'io.cri-containerd.pinned': 'pinned' } : pin === 'distro' ? { 'io.cri-containerd.pinned': 'pinned', 'io.cattle.k3s.pinned': 'pinned' } : {},
  pin,
  afterRestart,
  reason: 'because',
  archive: null,
  ...extra,
});

const ok = (node: string, images: ImageRef[], disk: FleetNodeResult['disk'] = { path: '/var/lib/rancher/k3s/agent/images', freeBytes: 50 * 1024 ** 3, totalBytes: 100 * 1024 ** 3, via: 'statvfs' }): FleetNodeResult => ({
  node,
  reachable: true,
  error: null,
  versions: { containerdVersion: '1.7.22', containerdRevision: 'abc', distro: 'k3s', distroVersion: 'v1.31.4+k3s1' },
  images,
  archives: [],
  disk,
});
const down = (node: string): FleetNodeResult => ({
  node,
  reachable: false,
  error: { code: 'UNREACHABLE', message: 'Cannot reach 10.0.0.9:22: connection refused.' },
  versions: null,
  images: null,
  archives: null,
  disk: null,
});

describe('computeDrift', () => {
  const nodes = [
    ok('a', [img('app:1', 'distro'), img('base:1', 'durable'), img('same:1', 'durable'), img('only-a:1', 'none')]),
    ok('b', [img('app:1', 'none'), img('base:1', 'durable'), img('same:1', 'distro')]),
    down('c'),
    ok('d', [img('app:1', 'durable'), img('same:1', 'durable')]),
  ];

  it('lists only names that differ, over reachable nodes, in node order', () => {
    expect(computeDrift(nodes)).toEqual([
      { name: 'app:1', presentOn: ['a', 'b', 'd'], missingOn: [], pinnedOn: ['a', 'd'], unpinnedOn: ['b'] },
      { name: 'base:1', presentOn: ['a', 'b'], missingOn: ['d'], pinnedOn: ['a', 'b'], unpinnedOn: [] },
      { name: 'only-a:1', presentOn: ['a'], missingOn: ['b', 'd'], pinnedOn: [], unpinnedOn: ['a'] },
    ]);
  });

  it('never counts an unreachable node as missing, and is order-independent when accumulated', () => {
    expect(computeDrift(nodes).flatMap((d) => [...d.missingOn, ...d.presentOn])).not.toContain('c');
    const acc = new DriftAccumulator();
    for (const n of [...nodes].reverse()) acc.add(n);
    expect(acc.entries(nodes.map((n) => n.node))).toEqual(computeDrift(nodes));
    expect(computeDrift([nodes[0]!])).toEqual([]); // one node cannot drift
  });
});

describe('summary', () => {
  it('flags unreachable, pins lost at the next start and low disk, with reasons', () => {
    const nodes = [
      ok('a', [img('x', 'distro', 'unpinned', { imageId: 'sha256:' + 'c'.repeat(64) }), img('y', 'durable'), img('z', 'none')]),
      ok('b', [img('x', 'distro')], { path: '/var/lib/rancher', freeBytes: 200 * 1024 ** 2, totalBytes: 10 * 1024 ** 3, via: 'df' }),
      ok('c', []),
      down('d'),
    ];
    const s = summarizeFleet(nodes, computeDrift(nodes));
    expect(s).toMatchObject({ nodes: 4, reachable: 3, unreachable: 1, losingPins: 1, lowDisk: 1 });
    expect(s.atRisk.map((r) => [r.node, r.reasons])).toEqual([
      ['a', ['1 image loses its pin at the next k3s start (as kubelet sees it): x']],
      ['b', ['low disk: 200 MiB free of 10 GiB at /var/lib/rancher']],
      ['d', ['unreachable: Cannot reach 10.0.0.9:22: connection refused.']],
    ]);
  });
});

describe('summary: one answer per image (issue #16)', () => {
  // The tag durable, the digest reference k3s added after its labels still k3s-pinned.
  const raced = [img('registry.local/app:3', 'durable'), img(`registry.local/app@sha256:${'a'.repeat(64)}`, 'distro', 'unpinned')];
  const on = (containerdVersion: string) => ({ ...ok('n3', raced), versions: { containerdVersion, containerdRevision: 'x', distro: 'k3s' as const, distroVersion: 'v1.35.1+k3s1' } });

  it('on containerd ≥ 1.7.10 the image is kept: no pin is lost and the node is not at risk (what the app and rm-archive say)', () => {
    const nodes = [on('2.1.9')];
    const s = summarizeFleet(nodes, computeDrift(nodes));
    expect(s.losingPins).toBe(0);
    expect(s.atRisk).toEqual([]);
  });

  it('on 1.7.3–1.7.9 it is not: every reference must carry the pin, and the report names the one that does not', () => {
    const nodes = [on('1.7.5')];
    const s = summarizeFleet(nodes, computeDrift(nodes));
    expect(s.losingPins).toBe(1);
    expect(s.atRisk[0]!.reasons).toEqual(['1 image loses its pin at the next k3s start (as kubelet sees it): registry.local/app:3']);
    expect(s.atRisk[0]!.losingImages).toEqual([
      expect.objectContaining({ refs: raced.map((r) => r.name), deciding: [raced[1]!.name], reason: expect.stringMatching(/loaded first/) }),
    ]);
  });

  it('the CSV gives each reference its image verdict next to its own fate', () => {
    const rows = parseCsv(fleetCsv({ nodes: [on('2.1.9')] }));
    expect(rows[0]!.slice(9, 11)).toEqual(['imageAfterRestart', 'imageReason']);
    expect(rows.slice(1).map((r) => [r[2], r[6], r[9]])).toEqual([
      ['registry.local/app:3', 'pinned', 'pinned'],
      [raced[1]!.name, 'unpinned', 'pinned'],
    ]);
    expect(fleetHtml({ generatedAt: 'now', summary: summarizeFleet([on('2.1.9')], []), nodes: [on('2.1.9')], drift: [] })).not.toContain('loses pin');
  });
});

describe('parseDf', () => {
  it('reads total and available from POSIX df output, names with spaces included', () => {
    const out = 'Filesystem     1024-blocks      Used Available Capacity Mounted on\n/dev/my disk     1000000    400000    600000      40% /var/lib\n';
    expect(parseDf(out)).toEqual({ totalBytes: 1000000 * 1024, freeBytes: 600000 * 1024 });
    expect(parseDf('garbage')).toBeNull();
  });
});

const hostileName = '<script>alert(1)</script>"\'&`';
function hostileReport(): FleetReport {
  const nodes = [
    ok('a', [img(`evil/${hostileName}:1`, 'distro', 'unpinned', { reason: `Reason <img src=x onerror=alert(1)> "q", comma` }), img('ok:1', 'durable')]),
    { ...down('b'), error: { code: 'UNREACHABLE' as const, message: '<b>bold</b> & "quoted"', hint: '<i>hint</i>' } },
    ok('c', []),
  ];
  nodes[0]!.archives = [{ path: `${hostileName}.tar`, kind: 'archive', compression: 'none', size: 1, mtime: '2026-01-01T00:00:00.000Z', images: [hostileName], imported: true, safeToRemove: false, reason: '<u>x</u>', cachedByK3s: true, removalTone: 'refused' }];
  const drift = computeDrift(nodes);
  return { generatedAt: '2026-01-01T00:00:00.000Z', summary: summarizeFleet(nodes, drift), nodes, drift };
}

describe('fleetHtml', () => {
  it('escapes every string and references nothing outside the file', () => {
    const page = fleetHtml(hostileReport());
    expect(page).not.toContain('<script');
    expect(page).not.toContain('<img');
    expect(page).not.toContain('<b>bold');
    expect(page).not.toContain('<u>x');
    expect(page).not.toContain('<i>hint');
    // (names may wrap after a `/`: the report's own <wbr>)
    expect(page.replaceAll('<wbr>', '')).toContain('&#60;script&#62;alert(1)&#60;/script&#62;&#34;&#39;&#38;&#96;');
    // No tag carries a src/href to anything but an in-page anchor; no external CSS either.
    expect(page).not.toMatch(/<[a-z][^>]*\s(?:src|srcset|action|formaction)\s*=/i);
    expect(page).not.toMatch(/<[a-z][^>]*\shref\s*=\s*"(?!#)/i);
    expect(page).not.toMatch(/https?:|<link|<script|<iframe|@import|url\(/i);
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain('<meta name="viewport"');
    expect(page).toContain('@media print');
  });

  it('puts the summary before the details', () => {
    const page = fleetHtml(hostileReport());
    const summary = page.indexOf('id="summary"');
    expect(summary).toBeGreaterThan(0);
    expect(summary).toBeLessThan(page.indexOf('id="details"'));
    expect(page.indexOf('Nodes at risk')).toBeLessThan(page.indexOf('Images that will lose their pin'));
    expect(page.indexOf('Images that will lose their pin')).toBeLessThan(page.indexOf('Drift across nodes'));
  });
});

describe('fleetCsv', () => {
  it('is RFC 4180 and parses back to one row per node × reference', () => {
    const r = hostileReport();
    const text = fleetCsv(r);
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual(['node', 'reachable', 'reference', 'digest', 'imageId', 'pin', 'afterRestart', 'reason', 'archive', 'imageAfterRestart', 'imageReason', 'siteNeed', 'atRisk', 'neededBy', 'signature']);
    expect(new Set(rows.map((x) => x.length))).toEqual(new Set([15]));
    expect(rows.slice(1).map((x) => [x[0], x[1], x[2], x[5], x[6]])).toEqual([
      ['a', 'true', `evil/${hostileName}:1`, 'distro', 'unpinned'],
      ['a', 'true', 'ok:1', 'durable', 'pinned'],
      ['b', 'false', '', '', ''],
      ['c', 'true', '', '', ''],
    ]);
    expect(rows[1]![7]).toBe('Reason <img src=x onerror=alert(1)> "q", comma');
    expect(rows[3]![7]).toBe('<b>bold</b> & "quoted"');
    expect(parseCsv('a,"multi\r\nline ""q""",c\r\n')).toEqual([['a', 'multi\r\nline "q"', 'c']]);
  });

  it('neutralises cells a spreadsheet would run as formulas (OWASP: a leading quote), keeping RFC 4180 quoting', () => {
    const formulas = ['=HYPERLINK("http://x","y")', "+1+cmd|' /C calc'!A0", '-2+3', '@SUM(A1:A2)', '\t=1+1', '\r=1+1'];
    const r: Pick<FleetReport, 'nodes'> = {
      nodes: [
        ok('=node', formulas.map((f, i) => img(`app${i}:1`, 'distro', 'unpinned', { reason: f, archive: f }))),
        { ...down('@down'), error: { code: 'UNREACHABLE', message: '=cmd|"/c calc"!A1' } },
      ],
    };
    const text = fleetCsv(r);
    const rows = parseCsv(text).slice(1);
    // Every text cell that started like a formula now starts with the quote; nothing else changed.
    // A leading tab or CR is shown as `\u0009` / `\u000d` (#49 item 19): no formula starts with that.
    const safe = formulas.map((f) => (f[0] === '\t' ? `\\u0009${f.slice(1)}` : f[0] === '\r' ? `\\u000d${f.slice(1)}` : `'${f}`));
    expect(safe.slice(4)).toEqual(['\\u0009=1+1', '\\u000d=1+1']);
    expect(rows.map((x) => x[7])).toEqual([...safe, `'=cmd|"/c calc"!A1`]);
    expect(rows.map((x) => x[8])).toEqual([...safe, '']);
    expect(rows.map((x) => x[0])).toEqual([...formulas.map(() => `'=node`), `'@down`]);
    // No cell of the file starts with a formula character (quoted cells start with a double quote).
    for (const row of text.split('\r\n')) for (const cell of row.split(',')) expect(cell).not.toMatch(/^[=+\-@\t]/);
    // Booleans and ordinary text are left alone; a cell with a quote or comma is still quoted.
    expect(rows[0]![1]).toBe('true');
    expect(rows[0]![2]).toBe('app0:1');
    expect(text).toContain(`"'=HYPERLINK(""http://x"",""y"")"`);
  });
});

describe('parseNodeCsv (add-bulk)', () => {
  it('reads the header, defaults empty cells and expands ~', () => {
    const r = parseNodeCsv('# site north\nname,host,port,user,identity,group\nedge-1,10.0.0.1,2222,admin,~/.ssh/k,north\n\nedge-2,10.0.0.2,,,,\n', { home: '/home/t', knownHosts: '/kh' });
    expect(r.problems).toEqual([]);
    expect(r.nodes).toEqual([
      { name: 'edge-1', host: '10.0.0.1', port: 2222, user: 'admin', identity: '/home/t/.ssh/k', group: 'north', knownHosts: '/kh' },
      { name: 'edge-2', host: '10.0.0.2', knownHosts: '/kh' },
    ]);
  });
  it('reports every problem with its line and accepts nothing partially', () => {
    const r = parseNodeCsv('host,name,colour\n');
    expect(r.problems).toEqual(['line 1: unknown column colour (allowed: name, host, port, user, identity, group)']);
    const bad = parseNodeCsv('name,host,port\nok,1.2.3.4,22\nbad name,1.2.3.5,22\nok,1.2.3.6,22\nx,1.2.3.7,99999\ny,1.2.3.8\n');
    expect(bad.problems).toEqual([
      expect.stringMatching(/^line 3: name: /),
      'line 4: "ok" is already on line 2',
      expect.stringMatching(/^line 5: port: /),
      'line 6: 2 fields, the header has 3',
    ]);
  });
});

describe('surveyFleet', () => {
  const ctx = {} as OpsContext;
  const defs = Array.from({ length: 10 }, (_, i) => completeNode({ name: `n${i}`, host: `10.0.0.${i}`, knownHosts: '/kh' }));
  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
    });

  it('bounds concurrency, streams results as nodes answer and keeps the input order in the report', async () => {
    let running = 0;
    let peak = 0;
    // n0 answers only once every other node has (no race against the clock): the slow one
    let othersDone = 0;
    let releaseN0!: () => void;
    const n0Released = new Promise<void>((r) => (releaseN0 = r));
    const probe: NodeProbe = async (def, signal) => {
      running++;
      peak = Math.max(peak, running);
      try {
        if (def.name === 'n0') await n0Released;
        else {
          await sleep(20, signal);
          if (++othersDone === defs.length - 1) releaseN0();
        }
        return ok(def.name, [img('app:1', def.name === 'n3' ? 'none' : 'distro')]);
      } finally {
        running--;
      }
    };
    const seen: string[] = [];
    const r = await surveyFleet(defs, { ctx, probe, concurrency: 3, onNode: (n) => seen.push(n.node) });
    expect(peak).toBe(3);
    expect(seen[seen.length - 1]).toBe('n0'); // the slow one arrives last…
    expect(r.nodes.map((n) => n.node)).toEqual(defs.map((d) => d.name)); // …but the report keeps input order
    expect(r.drift).toEqual([{ name: 'app:1', presentOn: defs.map((d) => d.name), missingOn: [], pinnedOn: defs.map((d) => d.name).filter((n) => n !== 'n3'), unpinnedOn: ['n3'] }]);
    expect(r.summary.reachable).toBe(10);
  });

  it('times a node out (connect + inventory), tells its probe to stop, and reports the others', async () => {
    let stopped = false;
    const probe: NodeProbe = async (def, signal) => {
      if (def.name === 'n1') {
        signal.addEventListener('abort', () => (stopped = true));
        await new Promise(() => undefined); // hangs forever, ignoring the signal
      }
      if (def.name === 'n2') throw new HoldfastError('AUTH_FAILED', 'denied');
      return ok(def.name, []);
    };
    // A probe that never settles: only the per-node deadline can end this call.
    const r = await surveyFleet(defs.slice(0, 4), { ctx, probe, timeoutMs: 150 });
    expect(stopped).toBe(true);
    expect(r.nodes[1]).toMatchObject({ node: 'n1', reachable: false, error: { code: 'TIMEOUT' }, images: null });
    expect(r.nodes[1]!.error!.message).toMatch(/did not answer within 0.15 s/);
    expect(r.nodes[2]).toMatchObject({ reachable: false, error: { code: 'AUTH_FAILED', message: 'denied' } });
    expect(r.summary).toMatchObject({ reachable: 2, unreachable: 2 });
  });

  it('cancels on abort: unanswered nodes are reported, nothing hangs', async () => {
    const ac = new AbortController();
    const probe: NodeProbe = async (def, signal) => {
      await sleep(def.name === 'n0' ? 5 : 10_000, signal);
      return ok(def.name, []);
    };
    const p = surveyFleet(defs.slice(0, 5), { ctx, probe, concurrency: 2, signal: ac.signal, onNode: () => ac.abort() });
    const r = await p;
    expect(r.nodes[0]!.reachable).toBe(true);
    for (const n of r.nodes.slice(1)) expect(n.error?.message).toMatch(/cancelled/);
  });
});

describe('surveyFleet through one bastion (its sshd drops set-ups beyond MaxStartups)', () => {
  afterEach(() => void vi.useRealTimers());
  const ctx = {} as OpsContext;
  const bastion = completeNode({ name: 'bastion', host: '192.0.2.1', knownHosts: '/kh' });
  const behind = Array.from({ length: 20 }, (_, i) => completeNode({ name: `site-${i}`, host: `10.1.0.${i}`, jump: 'bastion', knownHosts: '/kh' }));
  const direct = Array.from({ length: 5 }, (_, i) => completeNode({ name: `direct-${i}`, host: `10.2.0.${i}`, knownHosts: '/kh' }));

  it('sets up at most 8 connections through it at once, never holds back other nodes, and starts each deadline when its connection does', async () => {
    vi.useFakeTimers();
    const connecting = new Set<string>();
    let peakBehind = 0;
    const waves: Array<() => void> = [];
    const probe: NodeProbe = async (def, signal, _timeoutMs, connected) => {
      if (def.jump) {
        connecting.add(def.name);
        peakBehind = Math.max(peakBehind, connecting.size);
        // connects when the test says so (one wave at a time), then answers at once
        await new Promise<void>((resolve, reject) => {
          waves.push(resolve);
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
        connecting.delete(def.name);
        connected?.();
      }
      return ok(def.name, []);
    };
    const started: string[] = [];
    // Every wave takes 100 ms of the clock; the third starts 200 ms after the run did, beyond the
    // 150 ms deadline: only a deadline that starts at the node's own connection lets it answer.
    const run = surveyFleet([bastion, ...behind, ...direct], { ctx, probe, timeoutMs: 150, onStart: (n) => started.push(n) });
    await vi.advanceTimersByTimeAsync(0);
    expect(started.filter((n) => n.startsWith('direct-'))).toHaveLength(5);
    for (let wave = 0; waves.length > 0 || connecting.size > 0; wave++) {
      expect(connecting.size).toBe(Math.min(8, behind.length - 8 * wave));
      await vi.advanceTimersByTimeAsync(100);
      for (const go of waves.splice(0)) go();
      await vi.advanceTimersByTimeAsync(0);
    }
    const r = await run;
    expect(peakBehind).toBe(8);
    expect(r.summary).toMatchObject({ reachable: 26, unreachable: 0 });
  });

  it('a cancel reaches the nodes still queued for the bastion: reported cancelled, none connects afterwards', async () => {
    const ac = new AbortController();
    const calls: string[] = [];
    const probe: NodeProbe = async (def, signal) => {
      calls.push(def.name);
      await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      return ok(def.name, []);
    };
    const run = surveyFleet(behind, { ctx: {} as OpsContext, probe, signal: ac.signal, open: {} });
    await new Promise((r) => setImmediate(r));
    expect(calls).toHaveLength(8);
    ac.abort();
    const r = await run;
    expect(calls).toHaveLength(8);
    expect(r.nodes.every((n) => !n.reachable && /cancelled/.test(n.error?.message ?? ''))).toBe(true);
  });
});

describe('parseNodeCsv reads RFC 4180 (csv-parse, issue #14)', () => {
  it('a quoted field may hold a line break, a comma and doubled quotes; line numbers stay those of the file', () => {
    const text = 'name,host,identity\r\nedge-1,10.0.0.1,"/keys/site a,\r\nnorth"\r\n# comment\r\nedge-2,10.0.0.2,"/keys/say ""hi"""\r\n  \r\nbad name,10.0.0.3,\r\n';
    const r = parseNodeCsv(text, { knownHosts: '/kh' });
    expect(r.problems).toEqual([expect.stringMatching(/^line 7: name: /)]);
    const ok = parseNodeCsv(text.replace('bad name', 'edge-3'), { knownHosts: '/kh' });
    expect(ok.problems).toEqual([]);
    expect(ok.nodes.map((n) => [n.name, n.identity])).toEqual([
      ['edge-1', '/keys/site a,\r\nnorth'],
      ['edge-2', '/keys/say "hi"'],
      ['edge-3', undefined],
    ]);
  });

  it('malformed quoting and oversized input are problems, not crashes', () => {
    expect(parseNodeCsv('name,host\nedge-1,"10.0.0.1\n').problems).toEqual([expect.stringMatching(/^cannot read the CSV: /)]);
    expect(parseNodeCsv('name,host\n' + 'x'.repeat(BULK_MAX_BYTES)).problems).toEqual([expect.stringMatching(/larger than 4 MiB/)]);
  });
});
