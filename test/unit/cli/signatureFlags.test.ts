import path from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { addSignatureFlags, signatureRequest, type SignatureFlags } from '../../../src/cli/signatureFlags';

const parse = (args: string[]): SignatureFlags => {
  const c = addSignatureFlags(new Command('import').exitOverride());
  c.parse(args, { from: 'user' });
  return c.opts<SignatureFlags>();
};

describe('the signature flags', () => {
  it('--key and --bundle repeat, as absolute paths', () => {
    const o = parse(['--key', 'a.pub', '--key', '/keys/b.pub', '--bundle', 'x.json', '--allow-unsigned']);
    expect(signatureRequest(o)).toEqual({ keys: [path.resolve('a.pub'), '/keys/b.pub'], bundles: [path.resolve('x.json')], allowUnsigned: true });
  });

  it('none given: nothing in the request', () => {
    expect(signatureRequest(parse([]))).toEqual({});
    expect(signatureRequest(parse(['--strict-reference', '--key', 'k']))).toEqual({ keys: [path.resolve('k')], strictReference: true });
  });

  it('--policy: the policy file as an absolute path, for the service to read', () => {
    expect(signatureRequest(parse(['--policy', 'site/policy.yaml']))).toEqual({ policy: path.resolve('site/policy.yaml') });
  });

  it('the keyless flags: the identity and issuer as typed, the trusted root as an absolute path', () => {
    const o = parse(['--certificate-identity', 'ops@example.org', '--certificate-oidc-issuer', 'https://issuer.example', '--trusted-root', 'root.json']);
    expect(signatureRequest(o)).toEqual({ certificateIdentity: 'ops@example.org', certificateOidcIssuer: 'https://issuer.example', trustedRoot: path.resolve('root.json') });
    expect(signatureRequest(parse(['--certificate-identity-regexp', '^ops@']))).toEqual({ certificateIdentityRegexp: '^ops@' });
  });
});
