// Issue #49 item 19: control and bidi characters a node supplies (image names, file names, error
// output) are neutralised by ONE rule (shared/visibleControls) in every output: the terminal, the
// CSV and HTML fleet reports and the app. Each is checked on what it really produces.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { visibleControls } from '../../../src/shared/visibleControls';
import { table, terminalSafe } from '../../../src/cli/format';
import { computeDrift, fleetCsv, fleetHtml, parseCsv, summarizeFleet, type FleetNodeResult, type FleetReport } from '../../../src/core/usecases/fleet';
import type { ImageRef } from '../../../src/shared/domain/images';
import { RefText } from '../../../src/renderer/components/RefText';
import { breakable } from '../../../src/renderer/components/Breakable';
import { ErrorCallout } from '../../../src/renderer/components/ErrorCallout';

const ESC = '\u001b';
/** Each hostile piece, and how it must show. */
const HOSTILE: [string, string][] = [
  [`${ESC}]0;pwned\u0007`, '\\u001b]0;pwned\\u0007'], // OSC 0: retitle the window
  [`${ESC}[2J`, '\\u001b[2J'], // clear the screen
  [`${ESC}]8;;https://evil.example/${ESC}\\click${ESC}]8;;${ESC}\\`, '\\u001b]8;;https://evil.example/\\u001b\\click\\u001b]8;;\\u001b\\'], // OSC 8 link
  ['\u009b2J\u009d0;t\u009c', '\\u009b2J\\u009d0;t\\u009c'], // C1: 8-bit CSI, OSC, ST
  ['\u202a\u202b\u202c\u202d\u202e', '\\u202a\\u202b\\u202c\\u202d\\u202e'], // embeddings, overrides
  ['\u2066\u2067\u2068\u2069', '\\u2066\\u2067\\u2068\\u2069'], // isolates
  ['one\ntwo\rthree', 'one\\u000atwo\\u000dthree'],
];
const BIDI_NAME = 'evil.io/bidi\u202egnp.exe:1';
const BIDI_SHOWN = 'evil.io/bidi\\u202egnp.exe:1';
// Everything the rule neutralises; line feeds and CR are checked per output (CSV and HTML have their own).
// oxlint-disable-next-line no-control-regex -- matching control characters is the point
const RAW = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const img = (name: string, reason = 'because'): ImageRef => ({
  name,
  digest: 'sha256:' + 'a'.repeat(64),
  mediaType: 'application/vnd.oci.image.manifest.v1+json',
  imageId: 'sha256:' + 'b'.repeat(64),
  size: 1234,
  platforms: ['linux/amd64'],
  createdAt: null,
  labels: {},
  pin: 'none',
  afterRestart: 'unpinned',
  reason,
  archive: null,
});

function hostileReport(): FleetReport {
  const nodes: FleetNodeResult[] = [
    {
      node: 'edge1',
      reachable: true,
      error: null,
      versions: { containerdVersion: '1.7.22', containerdRevision: 'abc', distro: 'k3s', distroVersion: 'v1.31.4+k3s1' },
      images: [img(BIDI_NAME), ...HOSTILE.map(([raw], i) => img(`evil.io/x${i}${raw}:1`, `reason ${raw}`))],
      archives: [],
      disk: null,
    },
    { node: 'edge2', reachable: false, error: { code: 'UNREACHABLE', message: `refused ${HOSTILE.map(([raw]) => raw).join(' ')}` }, versions: null, images: null, archives: null, disk: null },
  ];
  const drift = computeDrift(nodes);
  return { generatedAt: '2026-01-01T00:00:00.000Z', summary: summarizeFleet(nodes, drift), nodes, drift };
}

describe('the rule', () => {
  it.each(HOSTILE)('%j shows as %s', (raw, shown) => {
    expect(visibleControls(`a${raw}b`)).toBe(`a${shown}b`);
  });
  it('keepLines keeps line feeds and tabs only; the result is valid JSON text, equal to the input', () => {
    expect(visibleControls('a\n\tb\r\u202e', { keepLines: true })).toBe('a\n\tb\\u000d\\u202e');
    expect(JSON.parse(`"${visibleControls(BIDI_NAME)}"`)).toBe(BIDI_NAME);
    expect(visibleControls('plain café ✓ 日本')).toBe('plain café ✓ 日本');
  });
});

describe('every output', () => {
  it('terminal: terminalSafe is the shared rule, and a table cell shows the escapes', () => {
    for (const [raw, shown] of HOSTILE) expect(terminalSafe(raw)).toBe(shown);
    const out = table(['REFERENCE'], [[BIDI_NAME], ...HOSTILE.map(([raw]) => [`x${raw}`])]);
    expect(out).not.toMatch(RAW);
    expect(out).toContain(BIDI_SHOWN);
    expect(out.split('\n').filter((l) => l.trim()).length).toBe(2 + HOSTILE.length); // header + rows: nothing split
  });

  it('CSV: no raw control or bidi character, one record per row, the escapes in the fields', () => {
    const text = fleetCsv(hostileReport());
    expect(text).not.toMatch(RAW);
    // CR and LF only as record ends: every name stays on its own line.
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    const rows = parseCsv(text);
    expect(rows).toHaveLength(1 + 1 + HOSTILE.length + 1);
    expect(rows[1]![2]).toBe(BIDI_SHOWN);
    HOSTILE.forEach(([, shown], i) => {
      expect(rows[2 + i]![2]).toBe(`evil.io/x${i}${shown}:1`);
      expect(rows[2 + i]![7]).toBe(`reason ${shown}`);
    });
    expect(rows.at(-1)![7]).toContain('\\u001b]0;pwned');
  });

  it('HTML report: no raw control or bidi character; the names show their escapes', () => {
    // <wbr> marks where a long name may wrap (after a `/`): no text of its own.
    const page = fleetHtml(hostileReport()).replace(/<wbr>/g, '');
    expect(page).not.toMatch(RAW);
    expect(page).not.toContain('\r');
    expect(page).toContain(BIDI_SHOWN);
    expect(page).toContain('evil.io/x6one\\u000atwo\\u000dthree:1');
    expect(page).toContain('\\u001b]8;;https://evil.example/');
  });

  it('app: a reference and a path render their escapes, never the characters', () => {
    const ref = renderToStaticMarkup(createElement(RefText, { name: BIDI_NAME }));
    expect(ref).not.toMatch(RAW);
    expect(ref.replace(/<[^>]+>/g, '')).toBe(BIDI_SHOWN);
    for (const [raw, shown] of HOSTILE) {
      const path = renderToStaticMarkup(createElement('code', null, breakable(`images/x${raw}.tar`)));
      expect(path).not.toMatch(RAW);
      expect(path.replace(/<[^>]+>/g, '')).toBe(`images/x${shown}.tar`);
    }
    // An error quoting a node's stderr: escapes shown, the message's own line feed kept.
    const error = { code: 'UNREACHABLE' as const, message: `ctr failed:\n${HOSTILE.slice(0, 6).map(([raw]) => raw).join(' ')}`, hint: `see ${BIDI_NAME}` };
    const callout = renderToStaticMarkup(createElement(ErrorCallout, { error }));
    expect(callout).not.toMatch(RAW);
    expect(callout).toContain(`ctr failed:\n${HOSTILE.slice(0, 6).map(([, shown]) => shown).join(' ')}`);
    expect(callout).toContain(`see ${BIDI_SHOWN}`);
  });
});
