// How we log in: the auth plan (identity file; else ssh-agent and ~/.ssh/id_* as ssh(1) tries
// them; password or keyboard-interactive) chosen before any byte goes on the wire, the identity
// file read and decrypted (asking for its passphrase),
// ssh2's authHandler that walks the plan asking a person for secrets, and the AUTH_FAILED wording.
// Separate from connect.ts because credentials are their own concern with their own promise:
// secrets never reach a message, a log or ssh2's config — only file names and method names do.
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
// ssh2 is CommonJS: under Node's ESM loader only some of its exports are detectable as named
// exports (`utils` is not), so take everything from the default export.
import ssh2 from 'ssh2';
import type { AuthHandlerMiddleware, ParsedKey } from 'ssh2';
import { HoldfastError } from '../errors';
import { CREDENTIAL_ATTEMPTS, type CredentialsProvider } from './credentials';
import { errnoCode } from './errors';

/** The part of an SSH target that says who logs in where, and with what (SshTarget extends it). */
export interface AuthTarget {
  host: string;
  port: number;
  user: string;
  /**
   * Private key file; without it, ssh-agent via $SSH_AUTH_SOCK, then OpenSSH's default key files
   * (~/.ssh/id_rsa, id_ecdsa, … as ssh tries them).
   */
  identity?: string;
  /** Passphrase of an encrypted identity file (else asked through credentials.passphrase). */
  passphrase?: string;
  /** publickey (default: identity file, else ssh-agent), password, or keyboard-interactive. */
  auth?: 'publickey' | 'password' | 'keyboard-interactive';
  /** Asks a person for passphrases, passwords and keyboard-interactive answers. */
  credentials?: CredentialsProvider;
}

export type AuthPlan =
  | { kind: 'key'; key: ParsedKey; describe: string; file: string; encrypted: boolean }
  | { kind: 'agent'; agent: string; describe: string }
  /** No identity file set: the agent's keys (when one runs), then ~/.ssh/id_*, as ssh(1) goes. */
  | { kind: 'default-keys'; agent: string | null; keys: DefaultKey[]; skipped: string[]; describe: string }
  | { kind: 'password'; describe: string }
  | { kind: 'keyboard-interactive'; describe: string };

/** What authentication learnt while it ran; the connection reads it to word a failure. */
export interface AuthState {
  /** The methods the server said it accepts, once it said so. */
  serverMethods: string[] | null;
  /** Set when a person cancelled a prompt: the failure to report instead of "authentication failed". */
  cancelled: HoldfastError | null;
  /** authHandler rounds so far. */
  attempts: number;
  /** default-keys: what the last round offered (the agent, or the key files), and the file that signed last. */
  offering?: 'agent' | 'files';
  signedWith?: DefaultKey;
  /** default-keys: encrypted files whose passphrase was not given (skipped, said on failure). */
  passedOver?: string[];
}

export function newAuthState(): AuthState {
  return { serverMethods: null, cancelled: null, attempts: 0 };
}

// ---- OpenSSH's default identity files --------------------------------------------------------

/**
 * The identity files ssh(1) tries when none is configured, in its order (ssh_config(5)
 * IdentityFile; readconf.c fill_default_options): id_rsa, id_ecdsa, id_ecdsa_sk, id_ed25519,
 * id_ed25519_sk, then id_xmss and id_dsa where the release still knows them.
 */
export const DEFAULT_IDENTITY_FILES = ['id_rsa', 'id_ecdsa', 'id_ecdsa_sk', 'id_ed25519', 'id_ed25519_sk', 'id_xmss', 'id_dsa'] as const;

export interface DefaultKey {
  file: string;
  /** What is offered to the server first: the private half is needed (and a passphrase asked) only once it accepts this. */
  pub: ParsedKey;
  /** The private key: at once for an unencrypted file, once unlocked for an encrypted one. */
  key: ParsedKey | null;
  /** Its passphrase stays in this process: a native OpenSSH client is not handed the file. */
  encrypted: boolean;
  data: Buffer;
}

/**
 * The public key an encrypted OpenSSH-format private key file carries in the clear (its header
 * lists the public keys before the encrypted section), as ssh(1) reads it to offer the key
 * before asking its passphrase; null when the file is another format.
 */
export function opensshPublicKey(data: Buffer): string | null {
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([A-Za-z0-9+/=\s]*)-----END OPENSSH PRIVATE KEY-----/.exec(data.toString('latin1'));
  if (!m) return null;
  const b = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
  const MAGIC = 'openssh-key-v1\0';
  if (b.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) return null;
  let off = MAGIC.length;
  const field = (): Buffer | null => {
    if (off + 4 > b.length) return null;
    const n = b.readUInt32BE(off);
    if (off + 4 + n > b.length) return null;
    const out = b.subarray(off + 4, off + 4 + n);
    off += 4 + n;
    return out;
  };
  if (!field() || !field() || !field()) return null; // cipher, kdf name, kdf options
  if (off + 4 > b.length || b.readUInt32BE(off) < 1) return null;
  off += 4;
  const blob = field();
  if (!blob || blob.length < 4) return null;
  const typeLen = blob.readUInt32BE(0);
  const type = blob.subarray(4, 4 + typeLen).toString('latin1');
  return /^[a-z0-9@.-]+$/.test(type) ? `${type} ${blob.toString('base64')}` : null;
}

/** The public half of an encrypted key file: its `.pub` beside it, else what its header carries. */
async function publicHalf(file: string, data: Buffer): Promise<ParsedKey | null> {
  for (const text of [await fsp.readFile(`${file}.pub`).catch(() => null), opensshPublicKey(data)]) {
    if (text === null) continue;
    const parsed = ssh2.utils.parseKey(text);
    const key = parsed instanceof Error ? null : Array.isArray(parsed) ? parsed[0] : parsed;
    if (key && !key.isPrivateKey()) return key;
  }
  return null;
}

/**
 * The default identity files in `home`/.ssh that can be offered, and why the others present
 * cannot (one short clause each). A missing file is not mentioned: most people have one or two.
 * An encrypted file is offered only when someone can be asked for its passphrase (`canAsk`).
 */
export async function findDefaultKeys(home: string, canAsk: boolean): Promise<{ keys: DefaultKey[]; skipped: string[] }> {
  const keys: DefaultKey[] = [];
  const skipped: string[] = [];
  for (const name of DEFAULT_IDENTITY_FILES) {
    const file = path.join(home, '.ssh', name);
    let data: Buffer;
    try {
      data = await fsp.readFile(file);
    } catch (err) {
      const code = errnoCode(err);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') skipped.push(`${file} cannot be read (${code === 'EACCES' ? 'permission denied' : (code ?? 'error')})`);
      continue;
    }
    const parsed = ssh2.utils.parseKey(data);
    if (!(parsed instanceof Error)) {
      const key = Array.isArray(parsed) ? parsed[0] : parsed;
      if (key?.isPrivateKey()) keys.push({ file, pub: key, key, encrypted: false, data });
      else skipped.push(`${file} holds no private key`);
      continue;
    }
    if (!/no passphrase given/i.test(parsed.message)) {
      skipped.push(name.endsWith('_sk') ? `${file} is a security-key (FIDO) key, which Holdfast cannot use` : `${file} is not a key Holdfast can use (${parsed.message})`);
      continue;
    }
    if (!canAsk) {
      skipped.push(`${file} is encrypted and nothing here can ask for its passphrase`);
      continue;
    }
    const pub = await publicHalf(file, data);
    if (pub) keys.push({ file, pub, key: null, encrypted: true, data });
    else skipped.push(`${file} is encrypted and its public half (${name}.pub) is missing`);
  }
  return { keys, skipped };
}

export function cancelled(what: string, err: unknown): HoldfastError {
  // Never the callback's message: it is the UI's, and we promise nothing about what it holds.
  void err;
  return new HoldfastError('AUTH_FAILED', `${what} was cancelled.`, { hint: 'Connect again and give it when asked.' });
}

async function readIdentity(target: AuthTarget): Promise<{ key: ParsedKey; encrypted: boolean }> {
  const file = target.identity!;
  let data: Buffer;
  try {
    data = await fsp.readFile(file);
  } catch (err) {
    const code = errnoCode(err);
    throw new HoldfastError(
      'AUTH_FAILED',
      `Cannot read the identity file ${file}${code === 'ENOENT' ? ': it does not exist' : code === 'EACCES' ? ': permission denied' : ''}.`,
      { hint: 'Point the node at a readable private key file, or leave identity empty to use ssh-agent.', cause: err },
    );
  }
  return unlockKey(file, data, target);
}

/** Parses a private key file's bytes, asking for its passphrase (again when wrong) where it must. */
async function unlockKey(file: string, data: Buffer, target: AuthTarget): Promise<{ key: ParsedKey; encrypted: boolean }> {
  let passphrase = target.passphrase;
  const ask = target.credentials?.passphrase;
  for (let attempt = 1; ; attempt++) {
    const parsed = ssh2.utils.parseKey(data, passphrase);
    if (!(parsed instanceof Error)) {
      const key = Array.isArray(parsed) ? parsed[0] : parsed;
      if (!key || !key.isPrivateKey()) {
        throw new HoldfastError('AUTH_FAILED', `The identity file ${file} holds a public key, not a private key.`, {
          hint: 'Point identity at the private half (the file without .pub).',
        });
      }
      return { key, encrypted: passphrase !== undefined };
    }
    const m = parsed.message;
    const missing = /no passphrase given/i.test(m);
    const wrong = /bad passphrase|integrity check failed/i.test(m);
    if ((missing || wrong) && ask && attempt <= CREDENTIAL_ATTEMPTS) {
      try {
        passphrase = await ask.call(target.credentials, file);
      } catch (err) {
        throw cancelled(`The passphrase for ${file}`, err);
      }
      continue;
    }
    if (missing) {
      throw new HoldfastError('AUTH_FAILED', `The identity file ${file} is encrypted and no passphrase was given.`, {
        hint: 'Provide its passphrase, or load the key into ssh-agent (ssh-add) and leave identity empty.',
      });
    }
    if (wrong) {
      throw new HoldfastError('AUTH_FAILED', `The passphrase for the identity file ${file} is wrong.`, {
        hint: 'Check the passphrase (ssh-keygen -y -f <file> asks for it and shows whether it is right).',
      });
    }
    throw new HoldfastError('AUTH_FAILED', `The identity file ${file} is not a private key ssh2 can read (${m}).`, {
      hint: 'Use an OpenSSH or PEM private key (ed25519, ECDSA or RSA).',
    });
  }
}

export async function planAuth(target: AuthTarget): Promise<AuthPlan> {
  const who = `${target.user}@${target.host}`;
  if (target.auth === 'password' || target.auth === 'keyboard-interactive') {
    const c = target.credentials;
    if (!c?.password && !c?.keyboardInteractive) {
      throw new HoldfastError('AUTH_FAILED', `${who} is set to log in with a ${target.auth === 'password' ? 'password' : 'keyboard-interactive prompt'}, but there is no way to ask for it here.`, {
        hint: 'Run the command in a terminal (the CLI asks without echo), or use key authentication.',
      });
    }
    return { kind: target.auth, describe: target.auth };
  }
  if (target.identity) {
    // Hand ssh2 the parsed key: the (slow, bcrypt) passphrase KDF runs once, and the passphrase
    // itself never reaches ssh2's config.
    const { key, encrypted } = await readIdentity(target);
    return { kind: 'key', key, describe: `publickey (${target.identity})`, file: target.identity, encrypted };
  }
  // As ssh(1) without an IdentityFile: the agent's keys, then the default files in ~/.ssh.
  const agent = process.env.SSH_AUTH_SOCK || null;
  const home = os.homedir();
  const { keys, skipped } = await findDefaultKeys(home, Boolean(target.credentials?.passphrase));
  if (keys.length === 0 && agent) return { kind: 'agent', agent, describe: 'publickey via ssh-agent' };
  if (keys.length > 0) {
    const offered = [...(agent ? ['ssh-agent'] : []), ...keys.map((k) => k.file)];
    return { kind: 'default-keys', agent, keys, skipped, describe: `publickey (${offered.join(', ')})` };
  }
  const why = skipped.length ? skipped.join('; ') : `none of ${DEFAULT_IDENTITY_FILES.join(', ')} is in ${path.join(home, '.ssh')}`;
  throw new HoldfastError('AUTH_FAILED', `No way to authenticate as ${who}: no identity file is set, no ssh-agent is running (SSH_AUTH_SOCK is not set), and no default key can be used: ${why}.`, {
    hint: skipped.some((x) => x.includes('encrypted'))
      ? 'Load the key into ssh-agent (ssh-add), or set it as the node\'s identity file and give its passphrase when asked.'
      : 'Set an identity file for the node, or start ssh-agent and ssh-add your key.',
  });
}

/**
 * The default key files as an ssh2 agent: each public key is offered, and only the one the
 * server accepts is used — an encrypted file's passphrase is asked then (`asking` pauses the
 * connection deadline), never for a key the server would refuse. A passphrase not given (no
 * terminal, Cancel, three wrong tries) skips that key, as ssh(1) does, and is said on failure.
 */
class DefaultKeysAgent extends ssh2.BaseAgent<ParsedKey> {
  constructor(
    private readonly keys: DefaultKey[],
    private readonly target: AuthTarget,
    private readonly state: AuthState,
    private readonly asking: <T>(fn: () => Promise<T>) => Promise<T>,
  ) {
    super();
  }

  getIdentities(cb: (err?: Error | null, keys?: ParsedKey[]) => void): void {
    cb(null, this.keys.map((k) => k.pub));
  }

  sign(pubKey: ParsedKey, data: Buffer, options: { hash?: 'sha1' | 'sha256' | 'sha512' } | ((err?: Error | null, signature?: Buffer) => void), cb?: (err?: Error | null, signature?: Buffer) => void): void {
    const done = typeof options === 'function' ? options : cb!;
    const hash = typeof options === 'function' ? undefined : options?.hash;
    const entry = this.keys.find((k) => k.pub === pubKey);
    if (!entry) return done(new Error('not one of the default key files'));
    // The node's identity passphrase (if any) is not this file's: ask for this one.
    const { passphrase: _identityPassphrase, ...target } = this.target;
    const unlocked = entry.key ? Promise.resolve(entry.key) : this.asking(() => unlockKey(entry.file, entry.data, target)).then((k) => (entry.key = k.key));
    unlocked.then(
      (key) => {
        const signature = key.sign(data, hash);
        if (signature instanceof Error) return done(signature);
        this.state.signedWith = entry;
        done(null, signature);
      },
      (err: unknown) => {
        // Never the prompt's own words (they are the UI's): only which key was passed over.
        void err;
        (this.state.passedOver ??= []).push(entry.file);
        done(new Error(`${entry.file}: its passphrase was not given`));
      },
    );
  }
}

/**
 * ssh2's authHandler for `auth`: one try for a key or the agent (default keys: the agent's, then
 * the files'), up to CREDENTIAL_ATTEMPTS for passwords and keyboard-interactive answers. `asking` runs a prompt with the connection deadline
 * paused. Fills `state` as it goes.
 */
export function authHandler(
  target: AuthTarget,
  auth: AuthPlan,
  state: AuthState,
  asking: <T>(fn: () => Promise<T>) => Promise<T>,
): AuthHandlerMiddleware {
  const { user, host, port } = target;
  let filesAgent: DefaultKeysAgent | undefined;
  return (methodsLeft, _partial, next) => {
    if (methodsLeft) state.serverMethods = methodsLeft;
    const done = () => (next as (choice: unknown) => void)(false); // `false` ends authentication
    state.attempts++;
    if (state.cancelled) return done();
    if (auth.kind === 'key') {
      return state.attempts === 1 ? next({ type: 'publickey', username: user, key: auth.key }) : done();
    }
    if (auth.kind === 'agent') {
      return state.attempts === 1 ? next({ type: 'agent', username: user, agent: auth.agent }) : done();
    }
    if (auth.kind === 'default-keys') {
      // One round for the agent's keys (if one runs), one for the files: ssh2 offers each key of a round in turn.
      const rounds = auth.agent ? (['agent', 'files'] as const) : (['files'] as const);
      const round = rounds[state.attempts - 1];
      if (!round) return done();
      state.offering = round;
      filesAgent ??= new DefaultKeysAgent(auth.keys, target, state, asking);
      return next({ type: 'agent', username: user, agent: round === 'agent' ? auth.agent! : filesAgent });
    }
    if (state.attempts > CREDENTIAL_ATTEMPTS) return done();
    // password: use the password method when the server offers it (or has not said yet), else
    // its keyboard-interactive prompt, as ssh does with PAM-only servers.
    const serverMethods = state.serverMethods;
    const offered = (m: string) => !serverMethods || serverMethods.includes(m);
    const c = target.credentials!;
    if (auth.kind === 'password' && offered('password') && c.password) {
      void asking(() => c.password!.call(c, user, host)).then(
        (password) => next({ type: 'password', username: user, password }),
        (err: unknown) => {
          state.cancelled = cancelled(`The password for ${user}@${host}`, err);
          done();
        },
      );
      return;
    }
    if (!offered('keyboard-interactive')) return done();
    return next({
      type: 'keyboard-interactive',
      username: user,
      prompt: (name, instructions, _lang, prompts, finish) => {
        const list = prompts.map((p) => ({ prompt: p.prompt, echo: Boolean(p.echo) }));
        const answer = (): Promise<string[]> => {
          if (c.keyboardInteractive) return c.keyboardInteractive.call(c, list, { user, host, port, name, instructions });
          if (c.password && list.length === 1 && !list[0]!.echo) return c.password.call(c, user, host).then((p) => [p]);
          return Promise.reject(new Error('no answer for these prompts'));
        };
        void asking(answer).then(
          (answers) => finish(Array.isArray(answers) ? answers.map(String) : []),
          (err: unknown) => {
            state.cancelled = cancelled(`Login to ${user}@${host}`, err);
            // As many (empty) answers as questions: anything else is a protocol error to sshd.
            finish(list.map(() => ''));
          },
        );
      },
    });
  };
}

/** The server refused every method we tried (ssh2 'error' of level client-authentication). */
export function authFailedError(
  user: string,
  where: string,
  auth: AuthPlan,
  state: AuthState,
  agentError: Error | null,
  err: Error,
): HoldfastError {
  const serverMethods = state.serverMethods;
  const allowed = serverMethods && serverMethods.length ? `; the server accepts: ${serverMethods.join(', ')}` : '';
  const agentNote = agentError ? ` (ssh-agent: ${agentError.message})` : '';
  if (auth.kind === 'default-keys') {
    const passed = [...(state.passedOver ?? []).map((f) => `${f}: its passphrase was not given`), ...auth.skipped];
    return new HoldfastError('AUTH_FAILED', `Authentication failed for user ${user} at ${where}: tried ${auth.describe}${allowed}${passed.length ? `; passed over ${passed.join('; ')}` : ''}.`, {
      hint: state.passedOver?.length
        ? 'The server accepted a key whose passphrase was not given: run the command on a terminal to be asked for it, or load the key into ssh-agent (ssh-add).'
        : `Check that one of these keys is authorised for ${user} on the node (~${user}/.ssh/authorized_keys), or set the node's identity file.`,
      cause: err,
    });
  }
  return new HoldfastError('AUTH_FAILED', `Authentication failed for user ${user} at ${where}: tried ${auth.describe}${agentNote}${allowed}.`, {
    hint:
      auth.kind === 'key'
        ? `Check that the matching public key is in ~${user}/.ssh/authorized_keys on the node and that the user name is right.`
        : auth.kind === 'agent'
          ? `Check that ssh-agent holds a key authorised for ${user} on the node (ssh-add -l), or set an identity file.`
          : `Check the user name and the ${auth.kind === 'password' ? 'password' : 'answers'}, and that the node's sshd allows ${auth.kind} authentication.`,
    cause: err,
  });
}

/** How a native OpenSSH client logs in as this connection did, without asking anyone (null: it cannot). */
export function nativeLogin(auth: AuthPlan, state: AuthState): { identity: string } | { agent: string } | null {
  if (auth.kind === 'key') return auth.encrypted ? null : { identity: auth.file };
  if (auth.kind === 'agent') return { agent: auth.agent };
  if (auth.kind !== 'default-keys') return null;
  if (state.offering === 'agent' && auth.agent) return { agent: auth.agent };
  const used = state.signedWith;
  return used && !used.encrypted ? { identity: used.file } : null;
}
