// The signature policy (#48 item 8): what parses, every bad input as an error naming the line,
// the field and the fix, which rules apply to a node by group and to an image by pattern, and how
// the policy merges with the flags (flags add requirements, never loosen a rule).
import { describe, expect, it } from 'vitest';
import type { SignatureOptions } from '../../../src/shared/importOptions';
import { imageRequirements, isKeyless, parseSignaturePolicy, policyRules, PolicyError, ruleAppliesTo, ruleCovers, withPolicy, type SignaturePolicy } from '../../../src/shared/signaturePolicy';

const MAX = 1024 * 1024;
const head = 'apiVersion: holdfast/v1\nkind: SignaturePolicy\nmetadata: {name: site}\n';

async function error(text: string, max = MAX): Promise<PolicyError> {
  try {
    await parseSignaturePolicy(text, '/etc/site/policy.yaml', max);
  } catch (e) {
    if (e instanceof PolicyError) return e;
    throw e;
  }
  throw new Error('parsed');
}

const SITE = `${head}spec:
  rules:
    - name: apps
      groups: [plant-a, plant-b]
      images: ["registry.local/app/**"]
      keys: [keys/site.pub]
    - name: base
      images: ["docker.io/library/*:*", "registry.local/base/*"]
      keys: [/abs/base.pub, keys/site.pub]
    - name: vendor
      groups: [plant-b]
      images: ["vendor.example/**"]
      identities:
        - {identity: ci@vendor.example, issuer: https://accounts.google.com}
        - {identityRegexp: "^https://github.com/vendor/", issuer: https://token.actions.githubusercontent.com}
      trustedRoot: trusted_root.json
    - name: lab
      groups: [lab]
      images: ["lab.local/**"]
      keys: [keys/lab.pub]
      allowUnsigned: true
`;

const resolve = (p: string): string => (p.startsWith('/') ? p : `/etc/site/${p}`);

describe('parseSignaturePolicy: what reads', () => {
  it('a full policy (YAML), every field', async () => {
    const p = await parseSignaturePolicy(SITE, 'policy.yaml', MAX);
    expect(p.metadata.name).toBe('site');
    expect(p.spec.rules.map((r) => r.name)).toEqual(['apps', 'base', 'vendor', 'lab']);
    expect(p.spec.rules[2]).toEqual({
      name: 'vendor',
      groups: ['plant-b'],
      images: ['vendor.example/**'],
      identities: [
        { identity: 'ci@vendor.example', issuer: 'https://accounts.google.com' },
        { identityRegexp: '^https://github.com/vendor/', issuer: 'https://token.actions.githubusercontent.com' },
      ],
      trustedRoot: 'trusted_root.json',
    });
  });

  it('JSON', async () => {
    const p = await parseSignaturePolicy(JSON.stringify({ apiVersion: 'holdfast/v1', kind: 'SignaturePolicy', metadata: { name: 's' }, spec: { rules: [{ name: 'r', images: ['*/**'], keys: ['a.pub'] }] } }), 'p.json', MAX);
    expect(p.spec.rules).toEqual([{ name: 'r', images: ['*/**'], keys: ['a.pub'] }]);
  });
});

describe('parseSignaturePolicy: a bad file names the file, the line, the field and the fix', () => {
  const rule = (body: string) => `${head}spec:\n  rules:\n    - name: apps\n${body}`;
  it.each([
    ['wrong kind', 'apiVersion: holdfast/v1\nkind: PinSet\nmetadata: {name: s}\nspec: {rules: []}\n', ':2:', 'kind', /kind: SignaturePolicy/],
    ['a field it does not have', rule('      images: ["a.io/x"]\n      keys: [k.pub]\n      key: [k.pub]\n'), ':9:', 'spec.rules[0].key', /remove it/],
    ['no key and no identity', rule('      images: ["a.io/x"]\n'), ':6:', 'spec.rules[0]', /keys/],
    ['a pattern with no registry', rule('      images: ["nginx:*"]\n      keys: [k.pub]\n'), ':7:', 'spec.rules[0].images[0]', /glob over full references/],
    ['identities without a trusted root', rule('      images: ["a.io/x"]\n      identities: [{identity: a@b, issuer: https://i}]\n'), ':6:', 'spec.rules[0].trustedRoot', /trusted_root.json/],
    ['an identity with both forms', rule('      images: ["a.io/x"]\n      trustedRoot: t.json\n      identities:\n        - {identity: a@b, identityRegexp: "^a", issuer: https://i}\n'), ':10:', 'spec.rules[0].identities[0]', /identity \(or identityRegexp\)/],
    ['a regexp that does not compile', rule('      images: ["a.io/x"]\n      trustedRoot: t.json\n      identities:\n        - {identityRegexp: "(", issuer: https://i}\n'), ':10:', 'spec.rules[0].identities[0].identityRegexp', /regular expression/],
    ['two rules of one name', `${head}spec:\n  rules:\n    - {name: a, images: ["a.io/x"], keys: [k]}\n    - {name: a, images: ["a.io/y"], keys: [k]}\n`, ':7:', 'spec.rules[1].name', /its own name/],
    ['allowUnsigned not a boolean', rule('      images: ["a.io/x"]\n      keys: [k]\n      allowUnsigned: yes\n'), ':9:', 'spec.rules[0].allowUnsigned', /allowUnsigned: true/],
    ['no rules', `${head}spec: {rules: []}\n`, ':4:', 'spec.rules', /list between 1/],
  ])('%s', async (_, text, line, field, fix) => {
    const e = await error(text);
    expect(e.where).toMatch(new RegExp(`^/etc/site/policy\\.yaml${line}\\d+$`));
    expect(e.field).toBe(field);
    expect(e.fix).toMatch(fix);
  });

  it('bad YAML names the line', async () => {
    const e = await error(`${head}spec:\n  rules: [\n`);
    expect(e.where).toMatch(/^\/etc\/site\/policy\.yaml:\d+:\d+$/);
    expect(e.fix).toBe('fix the syntax at that line');
  });

  it('an empty file, and one over the bound', async () => {
    expect((await error('')).message).toMatch(/is empty/);
    expect((await error(SITE, 100)).message).toMatch(/more than a policy may be \(100\)/);
  });
});

describe('which rules apply: by node group, then by image pattern', () => {
  let policy: SignaturePolicy;
  const names = (groups: (string | undefined)[]) => policyRules(policy, groups, resolve).map((r) => r.name);

  it.each([
    ['a node of plant-a', ['plant-a'], ['apps', 'base']],
    ['a node of plant-b', ['plant-b'], ['apps', 'base', 'vendor']],
    ['a node with no group: only rules naming no group', [undefined], ['base']],
    ['a group no rule names', ['elsewhere'], ['base']],
    ['nodes of two groups: the rules of either', ['plant-a', 'lab'], ['apps', 'base', 'lab']],
  ] as const)('%s', async (_, groups, want) => {
    policy = await parseSignaturePolicy(SITE, 'policy.yaml', MAX);
    expect(names([...groups])).toEqual(want);
  });

  it('key and trusted-root paths resolve against the policy file', async () => {
    policy = await parseSignaturePolicy(SITE, 'policy.yaml', MAX);
    const [apps, base, vendor] = policyRules(policy, ['plant-b'], resolve);
    expect(apps!.keys).toEqual(['/etc/site/keys/site.pub']);
    expect(base!.keys).toEqual(['/abs/base.pub', '/etc/site/keys/site.pub']);
    expect(vendor!.trustedRoot).toBe('/etc/site/trusted_root.json');
    expect(isKeyless(vendor!)).toBe(true);
    expect(isKeyless(apps!)).toBe(false);
  });

  it('ruleAppliesTo: no groups means every node', () => {
    expect(ruleAppliesTo({ name: 'r', images: ['**'] }, undefined)).toBe(true);
    expect(ruleAppliesTo({ name: 'r', groups: ['a'], images: ['**'] }, undefined)).toBe(false);
  });

  it.each([
    ['registry.local/app/**', 'registry.local/app/web/api:1', true],
    ['registry.local/app/*', 'registry.local/app/web/api:1', false],
    ['docker.io/library/*:*', 'nginx', true],
    ['docker.io/library/*:*', 'docker.io/library/nginx:1.27', true],
    ['docker.io/library/*:*', 'docker.io/user/nginx:1.27', false],
    ['registry.local/base/*', 'registry.local/base/pause:3.9', true],
    ['registry.local/base/pause:3.?', 'registry.local/base/pause:3.10', false],
  ])('pattern %s covers %s: %s', (pattern, ref, covered) => {
    expect(ruleCovers({ images: [pattern] }, ref)).toBe(covered);
  });
});

describe('imageRequirements: the flags and the policy, each on its own', () => {
  const apps = { name: 'apps', images: ['registry.local/app/**'], keys: ['/p/site.pub'] };
  const lab = { name: 'lab', images: ['registry.local/**'], keys: ['/p/lab.pub'], allowUnsigned: true };
  const app = 'registry.local/app/web:1';
  const other = 'docker.io/library/nginx:1.27';
  it.each<[string, SignatureOptions, string, { rule: string | null; keys?: string[]; allowUnsigned: boolean }[]]>([
    ['no flags, no policy: nothing to verify', {}, app, []],
    ['no flags: a covered image must verify with the rule', withPolicy({}, [apps]), app, [{ rule: 'apps', keys: ['/p/site.pub'], allowUnsigned: false }]],
    ['no flags: an image no rule covers imports as today', withPolicy({}, [apps]), other, []],
    ['--key adds a requirement on every image; the rule still holds', withPolicy({ keys: ['/f/mine.pub'] }, [apps]), app, [
      { rule: null, keys: ['/f/mine.pub'], allowUnsigned: false },
      { rule: 'apps', keys: ['/p/site.pub'], allowUnsigned: false },
    ]],
    ['--key on an uncovered image: as the flags say', withPolicy({ keys: ['/f/mine.pub'], allowUnsigned: true }, [apps]), other, [{ rule: null, keys: ['/f/mine.pub'], allowUnsigned: true }]],
    ['--allow-unsigned does not loosen a rule', withPolicy({ keys: ['/f/mine.pub'], allowUnsigned: true }, [apps]), app, [
      { rule: null, keys: ['/f/mine.pub'], allowUnsigned: true },
      { rule: 'apps', keys: ['/p/site.pub'], allowUnsigned: false },
    ]],
    ['--allow-unsigned alone does not loosen a rule either', withPolicy({ allowUnsigned: true }, [apps]), app, [{ rule: 'apps', keys: ['/p/site.pub'], allowUnsigned: false }]],
    ['a rule that allows unsigned itself', withPolicy({}, [lab]), other.replace('docker.io/library', 'registry.local'), [{ rule: 'lab', keys: ['/p/lab.pub'], allowUnsigned: true }]],
    ['two rules covering an image: both must hold', withPolicy({}, [apps, lab]), app, [
      { rule: 'apps', keys: ['/p/site.pub'], allowUnsigned: false },
      { rule: 'lab', keys: ['/p/lab.pub'], allowUnsigned: true },
    ]],
  ])('%s', (_, o, ref, want) => {
    expect(imageRequirements(o, ref)).toEqual(want);
  });

  it('withPolicy: no rule for the nodes leaves the flags exactly as they were', () => {
    const flags = { keys: ['/f/a.pub'], allowUnsigned: true };
    expect(withPolicy(flags, [])).toBe(flags);
    expect(withPolicy(flags, [apps])).toEqual({ ...flags, rules: [apps] });
  });
});
