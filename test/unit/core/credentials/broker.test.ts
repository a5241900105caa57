import { describe, expect, it } from 'vitest';
import { CredentialBroker, type CredentialRequest } from '../../../../src/core/credentials/broker';

describe('CredentialBroker', () => {
  it('turns a passphrase callback into a request and resolves with the answer', async () => {
    const asked: CredentialRequest[] = [];
    const broker = new CredentialBroker((r) => asked.push(r));
    const p = broker.provider.passphrase!('/home/t/.ssh/id_ed25519');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ kind: 'passphrase', subject: '/home/t/.ssh/id_ed25519', prompts: [{ echo: false }] });
    broker.answer(asked[0]!.id, ['s3cret-Passphrase']);
    await expect(p).resolves.toBe('s3cret-Passphrase');
    expect(JSON.stringify(asked)).not.toContain('s3cret');
  });

  it('rejects on cancel, on timeout, and refuses unknown or repeated answers', async () => {
    const asked: CredentialRequest[] = [];
    const broker = new CredentialBroker((r) => asked.push(r), 50);
    const cancelled = broker.provider.password!('ops', 'edge1');
    broker.answer(asked[0]!.id, null);
    await expect(cancelled).rejects.toThrow('cancelled');
    expect(() => broker.answer(asked[0]!.id, ['x'])).toThrow(/no longer open/);
    await expect(broker.provider.password!('ops', 'edge1')).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('passes keyboard-interactive prompts and instructions through', async () => {
    const asked: CredentialRequest[] = [];
    const broker = new CredentialBroker((r) => asked.push(r));
    const p = broker.provider.keyboardInteractive!([{ prompt: 'Code: ', echo: true }, { prompt: 'Password: ', echo: false }], {
      user: 'ops',
      host: 'edge1',
      port: 22,
      name: '',
      instructions: 'Two factors',
    });
    expect(asked[0]).toMatchObject({ kind: 'keyboard-interactive', subject: 'ops@edge1', instructions: 'Two factors' });
    broker.answer(asked[0]!.id, ['123456', 'pw']);
    await expect(p).resolves.toEqual(['123456', 'pw']);
  });
});
