// registries.yaml mirrors and rewrites (shared/registryMirrors): the block reader, Go's regexp
// replacement as containerd applies it, and where a node would pull an image it lacks. The
// expected names follow docs.k3s.io "Private Registry Configuration" and Go's regexp package.
import { describe, expect, it } from 'vitest';
import {
  compileGoPattern,
  goReplaceAll,
  missingPulls,
  normalizeEndpoint,
  parseMirrorsBlock,
  pullSources,
  rewritePath,
  type RegistryMirror,
} from '../../../src/shared/registryMirrors';

const block = (s: string) => s.replace(/^\n/, '').split('\n');
const re = (p: string) => {
  const c = compileGoPattern(p);
  if (!('re' in c)) throw new Error(`not compiled: ${c.problem}`);
  return c.re;
};
const mirror = (registry: string, endpoints: string[], rewrite: Record<string, string> = {}): RegistryMirror => ({
  registry,
  endpoints,
  rewrites: Object.entries(rewrite).map(([pattern, replacement]) => ({ pattern, replacement })),
});

describe('parseMirrorsBlock', () => {
  it('reads the layout of the k3s docs: block lists, quoted keys, comments, a wildcard', () => {
    const r = parseMirrorsBlock(
      block(`
mirrors:
  docker.io:
    endpoint:
      - "https://registry.example.com:5000" # the site mirror
      - https://mirror2.example.com
    rewrite:
      "^rancher/(.*)": "mirrorproject/rancher-images/$1"
      '^library/(.*)': mirror/library/$1
  "registry.local:5000":
    endpoint: ["http://registry.local:5000", 'https://other:443']
    rewrite: {"^(.*)$": "proj/$1"}
  "*":
    endpoint:
    - https://all.example.com
  quay.io:
`),
    );
    expect(r.understood).toBe(true);
    expect(r.notes).toEqual([]);
    expect(r.mirrors).toEqual([
      mirror('docker.io', ['https://registry.example.com:5000', 'https://mirror2.example.com'], {
        '^rancher/(.*)': 'mirrorproject/rancher-images/$1',
        '^library/(.*)': 'mirror/library/$1',
      }),
      mirror('registry.local:5000', ['http://registry.local:5000', 'https://other:443'], { '^(.*)$': 'proj/$1' }),
      mirror('*', ['https://all.example.com']),
      mirror('quay.io', []),
    ]);
  });

  it('an empty block, or mirrors with nothing under it, is no mirror', () => {
    expect(parseMirrorsBlock([])).toEqual({ mirrors: [], notes: [], understood: true });
    expect(parseMirrorsBlock(['mirrors:'])).toEqual({ mirrors: [], notes: [], understood: true });
  });

  it.each([
    ['mirrors:\n  a.io:\n    endpoint: &e ["x"]', 'anchors'],
    ['mirrors:\n  a.io:\n    endpoint: [\n      "x"]', 'several lines'],
    ['mirrors:\n  a.io:\n    endpoint:\n      - x\n  a.io:\n    endpoint:\n      - y', 'given twice'],
    ['mirrors:\n\ta.io:', 'tab'],
    ['mirrors:\n  a.io:\n    rewrite: |\n      x', 'block scalars'],
    ['mirrors:\n  a.io:\n      endpoint: [x]\n    rewrite: {}', 'indented deeper'],
  ])('says what it does not read, never guesses: %j', (text, why) => {
    const r = parseMirrorsBlock(text.split('\n'));
    expect(r.understood).toBe(false);
    expect(r.mirrors).toEqual([]);
    expect(r.notes.join(' ')).toContain(why);
  });

  it("the node's markers: a dropped key is a note, a flow-style mirror is named and skipped", () => {
    const r = parseMirrorsBlock(block(`
mirrors:
  docker.io:
    endpoint:
      - https://m.example.com
    @@dropped
  quay.io: @@inline
`));
    expect(r.understood).toBe(true);
    expect(r.mirrors).toEqual([mirror('docker.io', ['https://m.example.com'])]);
    expect(r.notes).toEqual([
      'a key other than endpoint/rewrite: ignored, as k3s does; its value stayed on the node',
      'mirror quay.io is written in flow style ({…}): not read',
    ]);
    expect(parseMirrorsBlock(['mirrors: @@inline']).understood).toBe(false);
  });

  it('a rewrite Holdfast will not evaluate keeps its text and says why', () => {
    const r = parseMirrorsBlock(block(`
mirrors:
  docker.io:
    endpoint: [https://m]
    rewrite:
      "^(a+)+$": "x"
      "^(.*)\\\\1$": "y"
`));
    expect(r.mirrors[0]!.rewrites).toEqual([
      { pattern: '^(a+)+$', replacement: 'x', problem: 'a repeated group that itself repeats or alternates: not evaluated by Holdfast (slow in JS)' },
      { pattern: '^(.*)\\1$', replacement: 'y', problem: "a backreference: Go's regexp has none, containerd skips it" },
    ]);
  });
});

describe('Go regexp as containerd runs it', () => {
  it('ReplaceAllString: every match, an empty match right after a match skipped (Go, not JS)', () => {
    expect(goReplaceAll(re('a*'), 'baaac', '-')).toBe('-b-c-');
    expect('baaac'.replace(/a*/g, '-')).toBe('-b--c-'); // what plain JS would have said
    expect(goReplaceAll(re('x*'), 'abc', '-')).toBe('-a-b-c-');
    expect(goReplaceAll(re('o'), 'foo/boo', '0')).toBe('f00/b00');
  });

  it('Expand: $1, ${1}, $name, $$; $1x is the group named "1x" (empty), not $1 then x', () => {
    const m = re('^(?P<org>[a-z]+)/(.*)$');
    expect(goReplaceAll(m, 'library/nginx', '$org-$2')).toBe('library-nginx');
    expect(goReplaceAll(m, 'library/nginx', '${1}x/$2')).toBe('libraryx/nginx');
    expect(goReplaceAll(m, 'library/nginx', '$1x/$2')).toBe('/nginx');
    expect(goReplaceAll(m, 'library/nginx', '$$1/$9/$')).toBe('$1//$');
  });

  it('flags and anchors: (?i) as a flag, \\A and \\z as the ends of the text', () => {
    expect(goReplaceAll(re('(?i)^LIBRARY/'), 'library/nginx', 'lib/')).toBe('lib/nginx');
    expect(goReplaceAll(re('\\Alibrary/(.*)\\z'), 'library/nginx', 'x/$1')).toBe('x/nginx');
  });

  it.each([
    ['(a|aa)*', 'repeated group'],
    ['(x+)*y', 'repeated group'],
    ['(?=a)b', 'lookaround'],
    ['a(?i)b', 'inline flags'],
    ['[[:alpha:]]+', 'POSIX'],
    ['\\p{Greek}', 'not evaluated'],
    ['a{1001}', 'over 1000'],
    ['(a', 'unclosed'],
    ['x'.repeat(257), 'longer than 256'],
    ['.*a.*b.*c.*d.*e.*f.*g', 'unbounded repeats'],
  ])('%j is not evaluated (%s)', (p, why) => {
    const c = compileGoPattern(p);
    expect('problem' in c && c.problem).toContain(why);
  });

  it('the first rewrite that changes the path is used; two that change it are both named', () => {
    expect(rewritePath('library/nginx', [{ pattern: '^rancher/(.*)', replacement: 'r/$1' }])).toEqual([]);
    expect(rewritePath('library/nginx', [{ pattern: '^library/(.*)', replacement: 'mirror/library/$1' }])).toEqual(['mirror/library/nginx']);
    expect(
      rewritePath('library/nginx', [
        { pattern: '^library/(.*)', replacement: 'a/$1' },
        { pattern: 'nginx$', replacement: 'web' },
      ]),
    ).toEqual(['a/nginx', 'library/web']);
  });
});

describe('where a node pulls an image it lacks (pullSources)', () => {
  const site = [
    mirror('docker.io', ['https://registry.example.com:5000', 'https://registry-1.docker.io'], { '^library/(.*)': 'mirror/library/$1' }),
    mirror('*', ['mirror.local:5000']),
  ];

  it('the docs example: docker.io/rancher/mirrored-pause:3.6 is asked of the mirror as mirrorproject/rancher-images/…', () => {
    expect(pullSources('docker.io/rancher/mirrored-pause:3.6', [mirror('docker.io', ['https://registry.example.com:5000'], { '^rancher/(.*)': 'mirrorproject/rancher-images/$1' })])).toEqual([
      { endpoint: 'https://registry.example.com:5000/v2', as: 'mirrorproject/rancher-images/mirrored-pause:3.6' },
      { endpoint: 'https://registry-1.docker.io/v2', as: 'rancher/mirrored-pause:3.6', default: true },
    ]);
  });

  it('mirror endpoints in order with the rewrite, the registry itself last as itself; an endpoint that is the default is not a mirror', () => {
    expect(pullSources('docker.io/library/nginx:1', site)).toEqual([
      { endpoint: 'https://registry.example.com:5000/v2', as: 'mirror/library/nginx:1' },
      { endpoint: 'https://registry-1.docker.io/v2', as: 'library/nginx:1', default: true },
    ]);
  });

  it('a digest stays a digest; the wildcard serves registries without their own entry', () => {
    const d = `sha256:${'ab'.repeat(32)}`;
    expect(pullSources(`docker.io/library/nginx@${d}`, site)![0]!.as).toBe(`mirror/library/nginx@${d}`);
    expect(pullSources('quay.io/org/app:2', site)).toEqual([
      { endpoint: 'https://mirror.local:5000/v2', as: 'org/app:2' },
      { endpoint: 'https://quay.io/v2', as: 'org/app:2', default: true },
    ]);
  });

  it('no mirror applies: null; missingPulls lists only what a mirror serves', () => {
    const only = [mirror('docker.io', ['https://m.example.com'])];
    expect(pullSources('quay.io/org/app:2', only)).toBeNull();
    expect(missingPulls(['quay.io/org/app:2', 'docker.io/library/redis:7'], only).map((p) => p.ref)).toEqual(['docker.io/library/redis:7']);
  });

  it('endpoints as k3s writes them into hosts.toml', () => {
    expect(normalizeEndpoint('registry.example.com:5000')).toBe('https://registry.example.com:5000/v2');
    expect(normalizeEndpoint('localhost:5000')).toBe('http://localhost:5000/v2');
    expect(normalizeEndpoint('https://docker.io/')).toBe('https://registry-1.docker.io/v2');
    expect(normalizeEndpoint('https://harbor.example.com/v2/dockerhub')).toBe('https://harbor.example.com/v2/dockerhub');
    expect(normalizeEndpoint('ftp://x')).toBeNull();
  });
});
